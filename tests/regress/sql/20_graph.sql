-- Relationships, traversal and cycles.
-- Not in one transaction: "Test" is stored again later and the newer store
-- must win (last_write by observed_at, now() when no provenance is given).
-- It leaves user d's data and rel()/name_of(); no other test reads them.
\ir include/setup.sql

CREATE FUNCTION rel(t text, s text, d text, m jsonb DEFAULT NULL) RETURNS jsonb LANGUAGE sql AS $$
  SELECT try_action('create_relationship', jsonb_build_object('relationship_type', t,
    'source_entity_id', s, 'target_entity_id', d) || CASE WHEN m IS NULL THEN '{}' ELSE jsonb_build_object('metadata', m) END) $$;
-- entity id → its title, to read results.
CREATE FUNCTION name_of(id text) RETURNS text LANGUAGE sql AS $$ SELECT canonical_name FROM neotoma.entities WHERE entities.id = name_of.id $$;

SET ROLE neotoma_regress_agent;
SET neotoma.user_id = 'd0000000-0000-0000-0000-00000000000d';
\set SHOW_CONTEXT never

SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "task", "title": "Launch", "status": "open"},
  {"entity_type": "task", "title": "Build", "status": "open"},
  {"entity_type": "task", "title": "Test", "status": "open"},
  {"entity_type": "task", "title": "Ship", "status": "open"},
  {"entity_type": "note", "title": "Idea", "content": "x"}]}')->'entities') AS stored;
SELECT id AS launch FROM neotoma.entities WHERE canonical_name = 'Launch' \gset
SELECT id AS build FROM neotoma.entities WHERE canonical_name = 'Build' \gset
SELECT id AS test FROM neotoma.entities WHERE canonical_name = 'Test' \gset
SELECT id AS ship FROM neotoma.entities WHERE canonical_name = 'Ship' \gset
SELECT id AS idea FROM neotoma.entities WHERE canonical_name = 'Idea' \gset


-- Build → Launch, Test → Launch (PART_OF); Ship DEPENDS_ON Test DEPENDS_ON Build.
SELECT r->>'relationship_type' AS type, name_of(r->>'source_entity_id') AS src, name_of(r->>'target_entity_id') AS dst, r->'metadata' AS metadata
FROM (VALUES (rel('PART_OF', :'build', :'launch', '{"weight": 1}')), (rel('PART_OF', :'test', :'launch')),
             (rel('DEPENDS_ON', :'ship', :'test')), (rel('DEPENDS_ON', :'test', :'build'))) v(r);

-- Deterministic ids: asserting again is the same relationship and no new observation.
SELECT (rel('PART_OF', :'build', :'launch', '{"weight": 1}')->>'id') = (rel('PART_OF', :'build', :'launch', '{"weight": 1}')->>'id') AS same_id,
       (SELECT observation_count FROM neotoma.relationships WHERE source_entity_id = :'build' AND relationship_type = 'PART_OF') AS observations;
-- New metadata is a new observation; the snapshot reduces them (newest wins).
SELECT rel('PART_OF', :'build', :'launch', '{"weight": 2, "note": "core"}')->'metadata' AS metadata;
SELECT observation_count FROM neotoma.relationships WHERE source_entity_id = :'build' AND relationship_type = 'PART_OF';

-- Cycles: refused for acyclic types, with the path; allowed for REFERS_TO.
SELECT rel('DEPENDS_ON', :'build', :'ship')->'error'->>'code' AS code,
       (SELECT jsonb_agg(name_of(x)) FROM jsonb_array_elements_text(rel('DEPENDS_ON', :'build', :'ship')->'error'->'details'->'cycle') x) AS cycle;
SELECT rel('PART_OF', :'launch', :'build')->'error'->>'code' AS part_of_back,
       rel('REFERS_TO', :'idea', :'launch')->>'relationship_type' AS refers,
       rel('REFERS_TO', :'launch', :'idea')->>'relationship_type' AS refers_back;
-- Bad relationships.
SELECT error_code(rel('LIKES', :'build', :'launch')) AS bad_type,
       error_code(rel('PART_OF', :'build', :'build')) AS self,
       error_code(rel('PART_OF', :'build', 'ent_00000000000000000000000000000000')) AS missing,
       error_code(rel('PART_OF', :'build', 'nope')) AS malformed;

-- list_relationships: direction, type, pagination.
SELECT d AS direction, r->'total' AS total,
       (SELECT jsonb_agg(x->>'relationship_type' ORDER BY x->>'relationship_type') FROM jsonb_array_elements(r->'relationships') x) AS types
FROM unnest(ARRAY['inbound', 'outbound', 'both']) d,
     LATERAL neotoma.list_relationships(jsonb_build_object('entity_id', :'test', 'direction', d)) r;
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', :'test', 'relationship_type', 'PART_OF'))->'total' AS part_of_only,
       jsonb_array_length(neotoma.list_relationships(jsonb_build_object('entity_id', :'test', 'limit', 1))->'relationships') AS page,
       error_code(try_action('list_relationships', jsonb_build_object('entity_id', :'test', 'direction', 'sideways'))) AS bad_direction;

-- get_relationship_snapshot.
SELECT r->'snapshot'->'snapshot' AS metadata, r->'snapshot'->'observation_count' AS n,
       jsonb_array_length(r->'observations') AS observations,
       r->'snapshot'->>'relationship_key' = 'PART_OF:' || :'build' || ':' || :'launch' AS key_ok
FROM neotoma.get_relationship_snapshot(jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'build', 'target_entity_id', :'launch')) r;
SELECT error_code(try_action('get_relationship_snapshot', jsonb_build_object('relationship_type', 'SETTLES', 'source_entity_id', :'build', 'target_entity_id', :'launch'))) AS missing;

-- Traversal: hops, direction, types; terminates on the REFERS_TO cycle; no duplicates.
SELECT h AS max_hops, r->'hops_traversed' AS hops,
       (SELECT jsonb_agg(name_of(x->>'id') || '@' || (x->>'hop')) FROM jsonb_array_elements(r->'entities') x) AS reached,
       r->'total_relationships' AS rels
FROM generate_series(1, 4) h,
     LATERAL neotoma.retrieve_related_entities(jsonb_build_object('entity_id', :'ship', 'max_hops', h, 'include_entities', false)) r;
SELECT (SELECT jsonb_agg(name_of(x->>'id')) FROM jsonb_array_elements(r->'entities') x) AS outbound_depends
FROM neotoma.retrieve_related_entities(jsonb_build_object('entity_id', :'ship', 'max_hops', 5, 'direction', 'outbound',
                                                          'relationship_types', jsonb_build_array('DEPENDS_ON'))) r;
SELECT neotoma.retrieve_related_entities(jsonb_build_object('entity_id', :'idea', 'max_hops', 5))
     = neotoma.retrieve_related_entities(jsonb_build_object('entity_id', :'idea', 'max_hops', 5)) AS deterministic,
       neotoma.retrieve_related_entities(jsonb_build_object('entity_id', :'idea'))->'entities'->0->'snapshot'->>'title' AS with_snapshot;
SELECT error_code(try_action('retrieve_related_entities', jsonb_build_object('entity_id', :'idea', 'max_hops', 9))) AS too_deep,
       error_code(try_action('retrieve_related_entities', jsonb_build_object('entity_id', :'idea', 'relationship_types', jsonb_build_array('X')))) AS bad_type;

-- The store response names relationships of what it stored.
SELECT (SELECT jsonb_agg(x->>'relationship_type' ORDER BY x->>'relationship_type') FROM jsonb_array_elements(r->'related_relationships') x) AS related_relationships,
       (SELECT jsonb_agg(name_of(x->>'id') ORDER BY name_of(x->>'id')) FROM jsonb_array_elements(r->'related_entities') x) AS related_entities
FROM neotoma.store('{"entities": [{"entity_type": "task", "title": "Test", "status": "done"}]}') r;

-- Neighborhood of an entity and of a source.
SELECT r->'node_type' AS node, r->'entity_snapshot'->>'status' AS status,
       jsonb_array_length(r->'relationships') AS relationships, jsonb_array_length(r->'related_entities') AS related,
       jsonb_array_length(r->'related_sources') AS sources, r ? 'observations' AS has_observations
FROM neotoma.retrieve_graph_neighborhood(jsonb_build_object('node_id', :'test')) r;
SELECT r->'node_type' AS node, jsonb_array_length(r->'related_entities') AS entities,
       jsonb_array_length(r->'observations') AS observations
FROM neotoma.retrieve_graph_neighborhood(jsonb_build_object('node_type', 'source', 'include_observations', true,
  'node_id', (SELECT source_id FROM neotoma.observations WHERE entity_id = :'launch' LIMIT 1))) r;
SELECT error_code(try_action('retrieve_graph_neighborhood', '{"node_type": "source", "node_id": "00000000-0000-0000-0000-000000000000"}')) AS missing_source,
       error_code(try_action('retrieve_graph_neighborhood', '{"node_type": "planet", "node_id": "x"}')) AS bad_type;

SELECT neotoma.verify()->'ok' AS verified;
RESET ROLE;
