-- Bad input: a clear error envelope, and nothing half-written.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
SET neotoma.user_id = 'c0000000-0000-0000-0000-00000000000c';
\set SHOW_CONTEXT never

SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field, r->'error'->>'message' AS message
FROM (VALUES
  ('{}'::jsonb),
  ('{"entities": []}'),
  ('{"entities": "x"}'),
  ('{"entities": [42]}'),
  ('{"entities": [{"name": "no type"}]}'),
  ('{"entities": [{"entity_type": 7}]}'),
  ('{"entities": [{"entity_type": "bad type!"}]}'),
  ('{"entities": [{"entity_type": "spaceship", "name": "x"}]}'),
  ('{"entities": [{"entity_type": "invoice", "amount_due": "100"}]}'),
  ('{"entities": [{"entity_type": "invoice", "invoice_date": "15/01/2024"}]}'),
  ('{"entities": [{"entity_type": "note", "content": "ok"}, {"entity_type": "person", "name": ["A"]}]}'),
  ('{"entities": [{"entity_type": "note", "content": "x"}], "source_priority": 1000}'),
  ('{"entities": [{"entity_type": "note", "content": "x"}], "source_priority": "high"}'),
  ('{"entities": [{"entity_type": "note", "content": "x"}], "provenance": {"extracted_at": "soon", "extractor_version": "1"}}'),
  ('{"entities": [{"entity_type": "note", "content": "x"}], "provenance": {"extractor_version": "1"}}'),
  ('{"entities": [{"entity_type": "note", "content": "x"}], "surprise": true}'),
  ('{"entities": [{"entity_type": "note", "content": "x"}], "user_id": "not-a-uuid"}')
) AS t(args), LATERAL try_action('store', args) AS r;

-- Oversize: too many entities, too many bytes.
SELECT error_code(try_action('store', jsonb_build_object('entities',
  (SELECT jsonb_agg(jsonb_build_object('entity_type', 'note', 'content', i::text)) FROM generate_series(1, 1001) i)))) AS too_many,
       error_code(try_action('store', jsonb_build_object('entities', jsonb_build_array(
  jsonb_build_object('entity_type', 'note', 'content', repeat('x', 5000000)))))) AS too_big;

-- None of it left a trace, not even the valid first entity of a failed batch.
SELECT (SELECT count(*) FROM neotoma.sources) AS sources,
       (SELECT count(*) FROM neotoma.entities) AS entities,
       (SELECT count(*) FROM neotoma.observations) AS observations,
       (SELECT count(*) FROM neotoma.raw_fragments) AS fragments;

-- Reads with bad arguments.
SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field
FROM (VALUES
  ('retrieve_entity_snapshot', '{}'::jsonb),
  ('retrieve_entity_snapshot', '{"entity_id": "nope"}'),
  ('retrieve_entity_snapshot', '{"entity_id": "ent_00000000000000000000000000000000"}'),
  ('retrieve_entity_snapshot', '{"entity_id": "ent_00000000000000000000000000000000", "at": "yesterday"}'),
  ('list_observations', '{"entity_id": "ent_00000000000000000000000000000000", "limit": 0}'),
  ('list_observations', '{"entity_id": "ent_00000000000000000000000000000000", "offset": -1}'),
  ('retrieve_entities', '{"limit": 5000}'),
  ('retrieve_entities', '{"limit": "ten"}'),
  ('retrieve_entities', '{"entity_type": "drop table"}'),
  ('retrieve_entity_by_identifier', '{"identifier": ""}'),
  ('retrieve_entity_by_identifier', '{}'),
  ('retrieve_field_provenance', '{"entity_id": "ent_00000000000000000000000000000000", "field": ""}'),
  ('list_entity_types', '{"keyword": 5}')
) AS t(action, args), LATERAL try_action(action, args) AS r;
RESET ROLE;
ROLLBACK;
