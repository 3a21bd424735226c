-- Postings of common words (sql/word_postings.sql): when every word of a
-- question is common and posted, a search reads the entities having them
-- from the postings, not their snapshots, and answers exactly what it
-- answers without them (totals, order, names like the query first, types,
-- deletions). The triggers keep the postings with every write; the
-- upkeep posts a user's common words; verify() checks and repairs them;
-- rows are private to their user (as a non-superuser); erasing a user
-- erases them.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '65000000-0000-0000-0000-00000000000a';

-- 48 notes on six subjects (eight say "harbour"), and three more.
\ir include/notes_on_six_subjects.sql
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "task", "title": "Harbour fees", "notes": "pay the harbour master"},
  {"entity_type": "task", "title": "Paint the boat", "notes": "before the harbour festival"},
  {"entity_type": "person", "name": "Harbor Smith", "notes": "the harbour pilot"}]}')->'entities');
-- And 240 tide tables that say it too: more entities having the word than
-- semantic search's 200 candidates, so that hybrid's lexical places count
-- some that are not among the page's candidates.
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store(jsonb_build_object('entities', (
  SELECT jsonb_agg(jsonb_build_object('entity_type', 'note', 'title', 'Tide ' || i,
                                      'content', 'high water at the harbour, table ' || i) ORDER BY i)
  FROM generate_series(1, 240) i)))->'entities');

-- Counted (here down to 3 snapshots), then said to be in 5,000 entities,
-- "harbour" and "boat" are common; posted, their rows are the entities
-- having them.
RESET ROLE;
SELECT neotoma_private._count_common_lexemes('65000000-0000-0000-0000-00000000000a', 3) > 0 AS counted;
UPDATE neotoma.common_lexemes SET entities = 5000
WHERE user_id = '65000000-0000-0000-0000-00000000000a' AND lexeme IN ('harbour', 'boat');
SELECT neotoma_private._post_common_words('65000000-0000-0000-0000-00000000000a', 2000) AS words;
SELECT neotoma_private._post_common_words('65000000-0000-0000-0000-00000000000a', 2000) AS again;
SET ROLE neotoma_regress_agent;
SELECT k.lexeme, count(p.*) AS postings,
       count(p.*) = (SELECT count(*) FROM neotoma.entity_snapshots s WHERE s.search_vector @@ quote_literal(k.lexeme)::tsquery) AS every_entity_having_it
FROM neotoma.posted_lexemes k LEFT JOIN neotoma.word_postings p ON p.lexeme = k.lexeme
GROUP BY k.lexeme ORDER BY k.lexeme;

-- The same answers with postings and without (the lexemes unposted for a
-- moment, their rows kept), and the postings read only with them (not for
-- two words, whose word indexes intersect faster, nor by a typed search:
-- it counts the word within the type, where it is rare).
CREATE TEMP TABLE questions (n int, args jsonb);
INSERT INTO questions VALUES
  (1, '{"search": "harbour", "search_mode": "lexical", "limit": 5}'),
  (2, '{"search": "harbour", "search_mode": "lexical", "limit": 5, "offset": 5}'),
  (3, '{"search": "harbour boat", "search_mode": "lexical", "limit": 20}'),
  (4, '{"search": "harbour", "search_mode": "lexical", "entity_type": "task", "limit": 20}'),
  (5, '{"search": "harbour", "search_mode": "lexical", "workspace": "default", "limit": 20}'),
  (6, '{"search": "harbour", "search_mode": "hybrid", "limit": 5}'),
  (7, '{"search": "harbour", "search_mode": "lexical", "include_deleted": true, "limit": 50}'),
  (8, '{"search": "harbour", "search_mode": "lexical", "limit": 2, "offset": 1}'),
  (9, '{"search": "harbour", "search_mode": "lexical", "include_deleted": true, "limit": 3}');
GRANT SELECT ON questions TO PUBLIC;
CREATE TEMP TABLE answers (n int, posted boolean, answer jsonb, postings_read bigint);
GRANT ALL ON answers TO PUBLIC;
CREATE FUNCTION pg_temp.ask(posted boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  q record;
  before bigint;
BEGIN
  FOR q IN SELECT * FROM questions ORDER BY n LOOP
    SELECT coalesce(idx_scan, 0) INTO before FROM pg_stat_xact_user_tables WHERE relid = 'neotoma.word_postings'::regclass;
    INSERT INTO answers SELECT q.n, posted, neotoma.retrieve_entities(q.args),
      (SELECT coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables WHERE relid = 'neotoma.word_postings'::regclass) - before;
  END LOOP;
END $$;
RESET ROLE;
CREATE TEMP TABLE kept AS SELECT * FROM neotoma.posted_lexemes;
SET ROLE neotoma_regress_agent;
\ir include/ask_with_and_without_postings.sql
SELECT a.n, a.answer = b.answer AS same_answer, a.answer->'total' AS total,
       jsonb_array_length(a.answer->'entities') AS answered, a.postings_read > 0 AS postings_read,
       b.postings_read > 0 AS postings_read_without
FROM answers a JOIN answers b ON b.n = a.n AND NOT b.posted WHERE a.posted ORDER BY a.n;
-- A name like the query first ("Harbour fees", "Harbor Smith"), then by id.
SELECT e->'snapshot'->>'title' AS title, e->'snapshot'->>'name' AS name, e->'matched_fields' AS matched
FROM answers a, jsonb_array_elements(a.answer->'entities') WITH ORDINALITY x(e, i)
WHERE a.n = 1 AND a.posted AND i <= 3 ORDER BY i;

-- Writes keep them: a new entity, a correction that drops the word, one
-- that adds it, a deletion (the row stays; the search leaves it out), an
-- erasure (the row goes); and merges, of an entity having the word into
-- one that has it not (it answers for the word then) and into one that
-- has it (they answer once).
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "note", "title": "Ferry times", "content": "the harbour ferry leaves at nine"}]}')->'entities');
SELECT neotoma.correct(jsonb_build_object('entity_id', e.id, 'entity_type', 'note', 'field', 'content', 'value', 'wind and sails'))->'error' AS dropped_the_word
FROM neotoma.entities e JOIN neotoma.entity_snapshots s ON s.entity_id = e.id WHERE s.snapshot->>'title' = 'Sailing 1';
SELECT neotoma.correct(jsonb_build_object('entity_id', e.id, 'entity_type', 'note', 'field', 'content', 'value', 'a boat in the harbour'))->'error' AS added_the_word
FROM neotoma.entities e JOIN neotoma.entity_snapshots s ON s.entity_id = e.id WHERE s.snapshot->>'title' = 'Music 1';
SELECT neotoma.delete_entity(jsonb_build_object('entity_id', e.id))->'error' AS deleted
FROM neotoma.entities e JOIN neotoma.entity_snapshots s ON s.entity_id = e.id WHERE s.snapshot->>'title' = 'Sailing 2';
SELECT neotoma.erase(jsonb_build_object('entity_id', e.id, 'confirm', true))->'error' AS erased
FROM neotoma.entities e JOIN neotoma.entity_snapshots s ON s.entity_id = e.id WHERE s.snapshot->>'title' = 'Sailing 3';
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', f.id, 'to_entity_id', t.id))->'error' AS merged
FROM (VALUES ('Sailing 4', 'Taxes 2'), ('Sailing 5', 'Sailing 6')) m(f, t)
JOIN neotoma.entity_snapshots fs ON fs.snapshot->>'title' = m.f JOIN neotoma.entities f ON f.id = fs.entity_id
JOIN neotoma.entity_snapshots ts ON ts.snapshot->>'title' = m.t JOIN neotoma.entities t ON t.id = ts.entity_id;
SELECT k.lexeme, count(p.*) AS postings,
       count(p.*) = (SELECT count(*) FROM neotoma.entity_snapshots s WHERE s.search_vector @@ quote_literal(k.lexeme)::tsquery) AS every_entity_having_it
FROM neotoma.posted_lexemes k LEFT JOIN neotoma.word_postings p ON p.lexeme = k.lexeme
GROUP BY k.lexeme ORDER BY k.lexeme;
\ir include/ask_with_and_without_postings.sql
SELECT a.n, a.answer = b.answer AS same_answer_after_writes, a.answer->'total' AS total,
       a.postings_read > 0 AS postings_read
FROM answers a JOIN answers b ON b.n = a.n AND NOT b.posted WHERE a.posted ORDER BY a.n;
SELECT jsonb_path_query_array(a.answer, '$.entities[*].snapshot.title') @> '["Ferry times", "Music 1", "Taxes 2"]' AS new_ones_found,
       NOT jsonb_path_query_array(a.answer, '$.entities[*].snapshot.title') @> '["Sailing 1"]' AS dropped_not,
       NOT jsonb_path_query_array(a.answer, '$.entities[*].snapshot.title') @> '["Sailing 2"]' AS deleted_not,
       NOT jsonb_path_query_array(a.answer, '$.entities[*].snapshot.title') @> '["Sailing 3"]' AS erased_not
FROM (SELECT neotoma.retrieve_entities('{"search": "harbour", "search_mode": "lexical", "workspace": "default", "limit": 300}') AS answer) a;
SELECT neotoma.verify()->'ok' AS verified;

-- Another user sees no rows.
SET neotoma.user_id = '65000000-0000-0000-0000-00000000000b';
SELECT count(*) AS others_postings FROM neotoma.word_postings;
SELECT count(*) AS others_lexemes FROM neotoma.posted_lexemes;
SET neotoma.user_id = '65000000-0000-0000-0000-00000000000a';

-- verify() finds a missing or a stray row, and repairs them.
RESET ROLE;
DELETE FROM neotoma.word_postings WHERE entity_id = (SELECT min(entity_id) FROM neotoma.word_postings WHERE lexeme = 'harbour');
INSERT INTO neotoma.word_postings
SELECT user_id, 'boat', entity_id, workspace, entity_type FROM neotoma.entity_snapshots
WHERE user_id = '65000000-0000-0000-0000-00000000000a' AND snapshot->>'title' = 'Taxes 1';
SET ROLE neotoma_regress_agent;
SELECT v->'ok' AS ok, v->'mismatch_count' AS mismatches,
       (SELECT array_agg(DISTINCT m->>'what') FROM jsonb_array_elements(v->'mismatches') m) AS what
FROM neotoma.verify() v;
RESET ROLE;
SELECT neotoma.verify(true)->'repaired' AS repaired;
SET ROLE neotoma_regress_agent;
SELECT neotoma.verify()->'ok' AS verified_after_repair;

-- The upkeep posts a word grown common at its next round, alone in it,
-- and drops one no longer common.
RESET ROLE;
UPDATE neotoma.common_lexemes SET entities = 5000
WHERE user_id = '65000000-0000-0000-0000-00000000000a' AND lexeme = 'number';
UPDATE neotoma.common_lexemes SET entities = 3
WHERE user_id = '65000000-0000-0000-0000-00000000000a' AND lexeme = 'boat';
SET ROLE neotoma_regress_agent;
SELECT jsonb_array_length(r) AS rounds, r->0->'words' AS words FROM neotoma.maintain_embedding_lists(0) r;
SELECT string_agg(lexeme, ', ' ORDER BY lexeme) AS posted FROM neotoma.posted_lexemes;
SELECT count(*) AS number_postings FROM neotoma.word_postings WHERE lexeme = 'number';
SELECT count(*) AS boat_postings FROM neotoma.word_postings WHERE lexeme = 'boat';
SELECT neotoma.maintain_embedding_lists(0) AS next_round;
SELECT neotoma.verify()->'ok' AS verified;

-- Erasing the user erases them.
RESET ROLE;
SELECT neotoma.erase_user('65000000-0000-0000-0000-00000000000a', true) IS NOT NULL AS erased;
SELECT count(*) AS postings_left FROM neotoma.word_postings WHERE user_id = '65000000-0000-0000-0000-00000000000a';
SELECT count(*) AS lexemes_left FROM neotoma.posted_lexemes WHERE user_id = '65000000-0000-0000-0000-00000000000a';
ROLLBACK;
