-- Typos among many alike names (0.21.0's library): a trigram in more names
-- than a rare term's (RARE_TERM_ENTITIES, 2,000) is common, and the names
-- like a word no entity has are found by its rare trigrams that some name
-- has; when it has none, by all of them, as before. As an ordinary role.
\ir include/setup.sql
BEGIN;
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '56000000-0000-0000-0000-00000000000a';
-- 2,100 people named Jonas, told apart by their email (so "  j", " jo", "jon", "ona", "nas", "as " are
-- common), one of them Jonas Quarterbrook.
SELECT sum(jsonb_array_length(neotoma.store(jsonb_build_object('entities',
  (SELECT jsonb_agg(jsonb_build_object('entity_type', 'person', 'name', 'Jonas',
                                       'email', 'jonas' || i || '@typo.example'))
   FROM generate_series(b * 700 + 1, b * 700 + 700) i)))->'entities')) AS stored
FROM generate_series(0, 2) b;
SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Jonas Quarterbrook", "email": "quarterbrook@typo.example"},
  {"entity_type": "person", "name": "Mirela Quartz", "email": "mirela@typo.example"}]}')->'entities') AS stored;
SELECT count(*) > 2000 AS jo_is_common FROM neotoma.entity_name_trigrams WHERE trigram = ' jo';

-- A typo in the rare word: found by its rare trigrams, first.
SELECT e->'snapshot'->>'name' AS name, (e->>'relevance_score')::numeric(4,2) AS score
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Jonas Quartrbrook", "search_mode": "lexical",
                                                      "limit": 3, "include_snapshots": true}')->'entities') e;
-- A typo in the common word alone: its trigrams some name has are all
-- common, so all of them find names (Jonas names answer, as before).
SELECT count(*) AS answers, bool_and(e->'snapshot'->>'name' LIKE 'Jonas%') AS all_jonas
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Jnas", "search_mode": "lexical",
                                                      "limit": 10, "include_snapshots": true}')->'entities') e;
-- Found by the deletion variants of the names' words (0.24.0), kept beside
-- their trigrams: "jnas" is "jonas" less one letter, so one of every Jonas.
SELECT count(*) > 2000 AS jnas_is_a_variant FROM neotoma.entity_name_trigrams WHERE trigram = '~jnas';
-- A typo in the rare word, its trigrams all common too, is found through them.
SELECT e->'snapshot'->>'name' AS name
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Jonass", "search_mode": "lexical",
                                                      "limit": 1, "include_snapshots": true}')->'entities') e;
-- A name changed into one of the same trigrams ("Abab", "Ababab") changes
-- its variants; verify() compares them.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Abab", "email": "abab@typo.example"}]}') IS NOT NULL AS stored;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ababab", "email": "abab@typo.example"}]}') IS NOT NULL AS renamed;
SELECT array_agg(t.trigram ORDER BY t.trigram) AS variants
FROM neotoma.entity_name_trigrams t JOIN neotoma.entity_snapshots s ON s.user_id = t.user_id AND s.entity_id = t.entity_id
WHERE s.snapshot->>'email' = 'abab@typo.example' AND t.trigram LIKE '~%';
SELECT neotoma.verify()->'ok' AS verified;
-- The same answer twice.
SELECT neotoma.retrieve_entities('{"search": "Jonas Quartrbrook", "search_mode": "lexical", "limit": 10}')
     = neotoma.retrieve_entities('{"search": "Jonas Quartrbrook", "search_mode": "lexical", "limit": 10}') AS deterministic;
ROLLBACK;
