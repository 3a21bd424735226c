-- Common trigrams of names (sql/embeddings.sql): a search of a word no
-- entity has (a typo) compares names by the word's rare trigrams, those in
-- at most 2,000 names (RARE_TERM_ENTITIES). A build counts the trigrams of
-- many names (neotoma.common_name_trigrams), and a search then does not
-- read a trigram's index to know it common; it answers exactly what it
-- answers reading them. The counts are private to their user (as a
-- non-superuser); erasing the user erases them.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '66000000-0000-0000-0000-00000000000a';

-- 2,100 people named Anna or Hanna something (the trigrams of "anna" in
-- more than 2,000 names), and a few others.
SELECT sum(jsonb_array_length(neotoma.store(jsonb_build_object('entities', (
  SELECT jsonb_agg(jsonb_build_object('entity_type', 'person',
                                      'name', CASE WHEN i % 2 = 0 THEN 'Anna ' ELSE 'Hanna ' END
                                              || (ARRAY['Berg', 'Lind', 'Strom', 'Dahl', 'Holm', 'Sund', 'Ek'])[i % 7 + 1] || i,
                                      'email', 'anna' || i || '@example.com') ORDER BY i)
  FROM generate_series(b * 700 + 1, b * 700 + 700) i)))->'entities')) AS stored
FROM generate_series(0, 2) b;
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Annika Lindqvist"},
  {"entity_type": "person", "name": "Johanna Berglund"},
  {"entity_type": "person", "name": "Bo Ek"}]}')->'entities');

-- The build counts them: those in more than 1,000 names.
SELECT jsonb_array_length(neotoma.index_embeddings()) AS built;
SELECT count(*) > 0 AS some_counted, bool_and(names > 1000) AS each_in_more_than_1000,
       bool_or(trigram = 'nna' AND names > 2000) AS nna_common
FROM neotoma.common_name_trigrams;

-- Typos, each a word no name has (some with the common trigrams "ann",
-- "nna", "na "): the same answers (entities, their order and scores, the
-- total) with the counts and without them.
CREATE TEMP TABLE questions (n int, args jsonb);
INSERT INTO questions VALUES
  (1, '{"search": "Anna Lindd", "search_mode": "lexical", "limit": 5}'),
  (2, '{"search": "Hana Strom14", "search_mode": "lexical", "limit": 5}'),
  (3, '{"search": "Annika Lindqvst", "search_mode": "lexical", "limit": 5}'),
  (4, '{"search": "Johana Berglnd", "search_mode": "lexical", "limit": 5}'),
  (5, '{"search": "Hannna Holm", "search_mode": "lexical", "limit": 5, "offset": 2}'),
  (7, '{"search": "Annna", "search_mode": "lexical", "limit": 5}'),
  (6, '{"search": "Bo Ekk", "search_mode": "lexical", "limit": 5}');
GRANT SELECT ON questions TO PUBLIC;
CREATE TEMP TABLE answers (n int, counted boolean, answer jsonb);
GRANT ALL ON answers TO PUBLIC;
INSERT INTO answers SELECT q.n, true, neotoma.retrieve_entities(q.args) FROM questions q;
RESET ROLE;
CREATE TEMP TABLE kept AS SELECT * FROM neotoma.common_name_trigrams;
DELETE FROM neotoma.common_name_trigrams;
SET ROLE neotoma_regress_agent;
INSERT INTO answers SELECT q.n, false, neotoma.retrieve_entities(q.args) FROM questions q;
SELECT a.n, (a.answer - 'search_meta') = (b.answer - 'search_meta') AS same_answer,
       (a.answer->>'total')::int AS total,
       a.answer->'entities'->0->>'canonical_name' AS first
FROM answers a JOIN answers b ON b.n = a.n AND NOT b.counted
WHERE a.counted ORDER BY a.n;
RESET ROLE;
INSERT INTO neotoma.common_name_trigrams SELECT * FROM kept;

-- Another user sees none of them.
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '66000000-0000-0000-0000-00000000000b';
SELECT count(*) AS others_counts_seen FROM neotoma.common_name_trigrams;
SET neotoma.user_id = '66000000-0000-0000-0000-00000000000a';
SELECT neotoma.verify()->'ok' AS verified;

-- Erasing the user erases them.
RESET ROLE;
SELECT neotoma.erase_user('66000000-0000-0000-0000-00000000000a', true) IS NOT NULL AS erased;
SELECT count(*) AS counts_left FROM neotoma.common_name_trigrams WHERE user_id = '66000000-0000-0000-0000-00000000000a';
ROLLBACK;
