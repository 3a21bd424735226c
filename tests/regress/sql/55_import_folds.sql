-- An import folds once (0.21.0): neotoma.import_lines leaves every
-- snapshot the fold of the imported observations when it returns, with no
-- recompute after it, also for the observations a split moved (which name
-- the entity they were moved from) and for a file whose moves come in a
-- later batch than their observations. As an ordinary role (the gateway's:
-- neotoma_service), users of their own.
\ir include/setup.sql
BEGIN;
SET ROLE neotoma_regress_agent;

-- A's memory: Grace stored twice (the second time with another person's
-- phone), that second source split off; Ada merged into her duplicate.
SET neotoma.user_id = '55000000-0000-0000-0000-00000000000a';
SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Grace Hopper", "email": "grace@import.example"},
  {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@import.example"},
  {"entity_type": "person", "name": "Ada L.", "email": "ada.l@import.example"}]}')->'entities') AS stored;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Grace Hopper",
                       "email": "grace@import.example", "phone": "+1 555 0155"}]}')->>'source_id' AS wrong_source \gset
SELECT entity_id AS grace FROM neotoma.entity_identifiers WHERE value = 'grace@import.example' \gset
SELECT entity_id AS ada FROM neotoma.entity_identifiers WHERE value = 'ada@import.example' \gset
SELECT entity_id AS ada2 FROM neotoma.entity_identifiers WHERE value = 'ada.l@import.example' \gset
SELECT r->'observations_moved' AS moved
FROM neotoma.split_entity(jsonb_build_object('entity_id', :'grace', 'source_ids', jsonb_build_array(:'wrong_source'))) r;
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'ada2', 'to_entity_id', :'ada')) IS NOT NULL AS merged;
SELECT merged_into = :'ada' AS ada_merged FROM neotoma.entities WHERE id = :'ada2';
SELECT s->'snapshot'->>'phone' IS NULL AS grace_has_no_phone
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'grace')) s;
CREATE TEMP TABLE exported AS SELECT row_number() OVER () AS n, l FROM neotoma.export_lines() l;
CREATE TEMP TABLE a_snapshots AS
  SELECT s.entity_id, s.snapshot, s.provenance, s.observation_count FROM neotoma.entity_snapshots s
  JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id WHERE e.merged_into IS NULL;
SELECT count(*) FILTER (WHERE l->>'table' = 'observation_moves') AS moves,
       count(*) FILTER (WHERE l->>'table' = 'entity_merges') AS merges FROM exported;

-- B imports the file in one batch; C in two, the moves after everything else.
SET neotoma.user_id = '55000000-0000-0000-0000-00000000000b';
SELECT neotoma.import_lines(array_agg(l ORDER BY n)) ? 'observations' AS b_imported FROM exported;
CREATE TEMP TABLE b_snapshots AS
  SELECT s.entity_id, s.snapshot, s.provenance, s.observation_count FROM neotoma.entity_snapshots s
  JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id WHERE e.merged_into IS NULL;
SET neotoma.user_id = '55000000-0000-0000-0000-00000000000c';
SELECT neotoma.import_lines(array_agg(l ORDER BY n)) ? 'observations' AS c_first_batch
FROM exported WHERE l->>'table' <> 'observation_moves';
SELECT neotoma.import_lines(array_agg(l ORDER BY n)) AS c_second_batch
FROM exported WHERE l->>'table' = 'observation_moves';
CREATE TEMP TABLE c_snapshots AS
  SELECT s.entity_id, s.snapshot, s.provenance, s.observation_count FROM neotoma.entity_snapshots s
  JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id WHERE e.merged_into IS NULL;

-- The same snapshots as A's, entity by entity (none missing, none more;
-- a merged entity's own row is what it was before its merge).
SELECT (SELECT count(*) FROM a_snapshots) AS a_count,
       (SELECT count(*) FROM ((SELECT * FROM a_snapshots EXCEPT SELECT * FROM b_snapshots)
                              UNION ALL (SELECT * FROM b_snapshots EXCEPT SELECT * FROM a_snapshots)) d) AS b_differs,
       (SELECT count(*) FROM ((SELECT * FROM a_snapshots EXCEPT SELECT * FROM c_snapshots)
                              UNION ALL (SELECT * FROM c_snapshots EXCEPT SELECT * FROM a_snapshots)) d) AS c_differs;
SELECT snapshot->>'phone' IS NULL AS imported_grace_has_no_phone FROM c_snapshots WHERE entity_id = :'grace';
RESET ROLE;
SELECT (neotoma.verify())->'ok' AS verified;
ROLLBACK;
