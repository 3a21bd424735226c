-- Duplicates and split: list_potential_duplicates finds pairs by name
-- similarity and shared identifiers, read-only and in a stable order;
-- split_entity moves observations to another entity (new or existing),
-- both snapshots recomputed, verify() clean, logged in the audit trail.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '33000000-0000-0000-0000-00000000000a';

SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
  {"entity_type": "person", "name": "Ada Lovelase", "email": "ada.l@example.org"},
  {"entity_type": "person", "name": "Charles Babbage", "phone": "+44 20 7946 0001"},
  {"entity_type": "person", "name": "Grace Hopper", "email": "grace@example.com"},
  {"entity_type": "company", "name": "Ada Lovelace"}]}')->'entities');

SELECT p->>'name' AS a, p->>'other_name' AS b, p->'score' AS score,
       jsonb_path_query_array(p, '$.evidence[*].method') AS methods
FROM jsonb_array_elements(neotoma.list_potential_duplicates('{"entity_type": "person"}')->'pairs') p;
SELECT r->'entities_compared' AS compared, r->'truncated' AS truncated, jsonb_array_length(r->'pairs') AS pairs
FROM neotoma.list_potential_duplicates('{"entity_type": "person", "threshold": 0.95}') r;
-- The same answer twice.
SELECT neotoma.list_potential_duplicates('{"entity_type": "person", "threshold": 0.3}')
     = neotoma.list_potential_duplicates('{"entity_type": "person", "threshold": 0.3}') AS deterministic;
SELECT error_code(try_action('list_potential_duplicates', args)) AS code,
       try_action('list_potential_duplicates', args)->'error'->'details'->>'field' AS field
FROM (VALUES ('{}'::jsonb), ('{"entity_type": "person", "threshold": 0}'), ('{"entity_type": "person", "threshold": 2}'),
             ('{"entity_type": "person", "limit": 0}'), ('{"entity_type": "bad type!"}')) t(args);

-- Split: Grace's record got two people's observations.
SELECT entity_id AS grace FROM neotoma.entity_identifiers WHERE value = 'grace hopper' \gset
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Grace Hopper", "email": "grace@example.com", "phone": "+1 555 0100"}]}')->>'source_id' AS wrong_source \gset
SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'grace'))->'snapshot'->>'phone' AS phone_before;
SELECT r->'created' AS created, r->'observations_moved' AS moved, r->>'reason' AS reason,
       r->>'to_entity_id' <> :'grace' AS other_entity
FROM neotoma.split_entity(jsonb_build_object('entity_id', :'grace', 'source_ids', jsonb_build_array(:'wrong_source'),
                                             'reason', 'two people')) r;
SELECT to_entity_id AS split_off FROM neotoma.entity_splits \gset
SELECT s->'snapshot'->>'phone' AS phone_after, s->'observation_count' AS observations
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'grace')) s;
SELECT s->'snapshot'->>'phone' AS phone, s->'observation_count' AS observations, s->>'entity_type' AS type
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'split_off')) s;
SELECT action, reason, details->'observations_moved' AS moved FROM neotoma.audit_trail WHERE action = 'split_entity';
-- Errors: nothing to move, everything, unknown observations, another type, itself, merged or unknown entities.
SELECT entity_id AS ada FROM neotoma.entity_identifiers WHERE value = 'ada@example.com' \gset
SELECT id AS company FROM neotoma.entities WHERE entity_type = 'company' \gset
SELECT (SELECT id FROM neotoma.observations WHERE entity_id = :'ada' LIMIT 1) AS ada_observation \gset
SELECT error_code(try_action('split_entity', args)) AS code, try_action('split_entity', args)->'error'->'details'->>'field' AS field
FROM (VALUES
  (jsonb_build_object('entity_id', :'grace')),
  (jsonb_build_object('entity_id', :'grace', 'observation_ids', '[]'::jsonb)),
  (jsonb_build_object('entity_id', :'ada', 'observation_ids', jsonb_build_array(:'ada_observation'))),
  (jsonb_build_object('entity_id', :'grace', 'observation_ids', jsonb_build_array(:'ada_observation'))),
  (jsonb_build_object('entity_id', :'grace', 'observation_ids', jsonb_build_array('not-a-uuid'))),
  (jsonb_build_object('entity_id', :'grace', 'source_ids', jsonb_build_array(:'wrong_source'))),
  (jsonb_build_object('entity_id', 'ent_00000000000000000000000000000000', 'source_ids', jsonb_build_array(:'wrong_source'))),
  (jsonb_build_object('entity_id', :'grace', 'observation_ids', jsonb_build_array(:'ada_observation'), 'source_ids', jsonb_build_array(:'wrong_source')))
) AS t(args);
-- Split into an existing entity, after a merge brought observations over.
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'split_off', 'to_entity_id', :'grace'))->>'to_entity_id' = :'grace' AS merged_back;
SELECT entity_id AS lovelase FROM neotoma.entity_identifiers WHERE value = 'ada.l@example.org' \gset
SELECT error_code(try_action('split_entity', jsonb_build_object('entity_id', :'grace', 'source_ids', jsonb_build_array(:'wrong_source'),
  'to_entity_id', :'company'))) AS other_type;
SELECT r->'created' AS created, r->'observations_moved' AS moved
FROM neotoma.split_entity(jsonb_build_object('entity_id', :'grace', 'source_ids', jsonb_build_array(:'wrong_source'),
  'to_entity_id', :'lovelase')) r;
SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'lovelase'))->'snapshot'->>'phone' AS moved_phone;
-- Another user cannot split this user's entity.
SET neotoma.user_id = '33000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('split_entity', jsonb_build_object('entity_id', :'grace', 'source_ids', jsonb_build_array(:'wrong_source')))) AS other_user,
       jsonb_array_length(neotoma.list_potential_duplicates('{"entity_type": "person"}')->'pairs') AS other_pairs;
SET neotoma.user_id = '33000000-0000-0000-0000-00000000000a';
-- A chain of splits (W -> X -> Y), erased at its end: the moved content goes
-- at every step back, and what stays is recomputed as it should be.
SELECT DISTINCT neotoma.store(jsonb_build_object('entities', jsonb_build_array(jsonb_build_object('entity_type', 'note', 'title', 'chain', 'content', c))))->'entities'->0->>'entity_id' AS w
FROM unnest(ARRAY['CHAIN-ONE', 'CHAIN-TWO', 'CHAIN-THREE']) c \gset
SELECT neotoma.split_entity(jsonb_build_object('entity_id', :'w', 'observation_ids',
  (SELECT jsonb_agg(id) FROM neotoma.observations WHERE entity_id = :'w' AND fields->>'content' IN ('CHAIN-TWO', 'CHAIN-THREE'))))->>'to_entity_id' AS x \gset
SELECT neotoma.split_entity(jsonb_build_object('entity_id', :'x', 'observation_ids',
  (SELECT jsonb_agg(id) FROM neotoma.observations WHERE entity_id = :'x' AND fields->>'content' = 'CHAIN-THREE')))->>'to_entity_id' AS y \gset
SELECT (neotoma.erase(jsonb_build_object('entity_id', :'y', 'confirm', true)))->'counts'->'observations' AS erased;
SELECT (SELECT count(*) FROM neotoma.observations WHERE fields::text LIKE '%CHAIN-THREE%') AS observations_left,
       (SELECT count(*) FROM neotoma.sources WHERE content::text LIKE '%CHAIN-THREE%') AS sources_left,
       neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'w'))->'observation_count' AS w_observations,
       neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'x'))->'observation_count' AS x_observations;
RESET ROLE;
SELECT v->'ok' AS ok, v->'mismatch_count' AS mismatches FROM neotoma.verify() AS v;
ROLLBACK;
