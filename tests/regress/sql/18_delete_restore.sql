-- Deleting and restoring entities: a deletion is an observation of its own
-- (kind deletion, from a lifecycle source); the entity leaves the listings,
-- lookups, snapshots, timeline and views until restored, exactly as before.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '18000000-0000-0000-0000-00000000000a';

SELECT e->>'entity_type' AS type, e->>'entity_id' AS id
FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "INV-18", "vendor_name": "Acme", "amount_due": 120, "invoice_date": "2026-01-05"},
  {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"}]}')->'entities') AS e;
SELECT id AS invoice FROM neotoma.entities WHERE entity_type = 'invoice' \gset
SELECT id AS ada FROM neotoma.entities WHERE entity_type = 'person' \gset
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada'))->>'relationship_type' AS linked;
CREATE TEMP TABLE before AS
SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice')) - 'computed_at' AS s;

-- Delete: the answer, and the entity is gone from every listing.
SELECT d->>'deleted' AS deleted, d->>'reason' AS reason, d->>'deleted_at' IS NOT NULL AS has_time
FROM neotoma.delete_entity(jsonb_build_object('entity_id', :'invoice', 'reason', 'entered twice')) AS d;
SELECT r->'total' AS total, jsonb_path_query_array(r, '$.entities[*].entity_type') AS types
FROM neotoma.retrieve_entities('{}') AS r;
SELECT r->'total' AS invoices FROM neotoma.retrieve_entities('{"entity_type": "invoice"}') AS r;
SELECT e->>'entity_type' AS type, e->>'deleted_reason' AS reason, e->>'deleted_at' IS NOT NULL AS has_time, r->'total' AS total
FROM neotoma.retrieve_entities('{"include_deleted": true}') AS r, jsonb_array_elements(r->'entities') AS e
ORDER BY 1;
SELECT error_code(try_action('retrieve_entity_snapshot', jsonb_build_object('entity_id', :'invoice'))) AS snapshot;
SELECT s->'snapshot'->>'invoice_number' AS number, s->>'deleted_at' IS NOT NULL AS has_time, s->>'deleted_reason' AS reason
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice', 'include_deleted', true)) AS s;
SELECT jsonb_array_length(neotoma.retrieve_entity_by_identifier('{"identifier": "INV-18"}')->'entities') AS by_number;
SELECT neotoma.list_timeline_events('{}')->'total' AS events;
SELECT (SELECT count(*) FROM neotoma.entity_fields WHERE entity_id = :'invoice') AS fields,
       (SELECT count(*) FROM neotoma.relationship_overview) AS relationships,
       (SELECT count(*) FROM neotoma.timeline) AS timeline,
       (SELECT count(*) FROM neotoma.entity_overview WHERE entity_id = :'invoice') AS in_overview,
       (SELECT deleted_reason FROM neotoma.deleted_entities WHERE entity_id = :'invoice') AS deleted;
-- Its relationships are hidden while it is deleted, from the other end too.
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', :'ada'))->'total' AS ada_relationships,
       jsonb_array_length(neotoma.retrieve_related_entities(jsonb_build_object('entity_id', :'ada'))->'entities') AS ada_related,
       jsonb_array_length(neotoma.retrieve_graph_neighborhood(jsonb_build_object('node_id', :'ada'))->'relationships') AS ada_neighborhood,
       jsonb_array_length(neotoma.store('{"entities": [{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com", "role": "poet"}]}')->'related_relationships') AS store_related;
SELECT r->>'uri' AS uri, r->>'description' AS description
FROM jsonb_array_elements(neotoma.list_resources('{}')->'resources') AS r WHERE r->>'uri' LIKE 'neotoma://entities/%';
-- What starts from it answers that it is deleted.
SELECT action, error_code(try_action(action, args)) AS code
FROM (VALUES
  ('list_relationships', jsonb_build_object('entity_id', :'invoice')),
  ('retrieve_related_entities', jsonb_build_object('entity_id', :'invoice')),
  ('retrieve_graph_neighborhood', jsonb_build_object('node_id', :'invoice')),
  ('get_relationship_snapshot', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'invoice', 'target_entity_id', :'ada')),
  ('create_relationship', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'ada', 'target_entity_id', :'invoice')),
  ('correct', jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice', 'field', 'amount_due', 'value', 1)),
  ('list_timeline_events', jsonb_build_object('entity_id', :'invoice')),
  ('merge_entities', jsonb_build_object('from_entity_id', :'invoice', 'to_entity_id', :'ada')),
  ('merge_entities', jsonb_build_object('from_entity_id', :'ada', 'to_entity_id', :'invoice'))
) AS t(action, args);
-- Its history says so.
SELECT o->>'kind' AS kind, o->'fields' AS fields
FROM jsonb_array_elements(neotoma.list_observations(jsonb_build_object('entity_id', :'invoice'))->'observations') AS o;

-- Deleting twice, restoring what is not deleted, unknown and bad ids.
SELECT action, left(args::text, 60) AS args, error_code(try_action(action, args)) AS code
FROM (VALUES
  ('delete_entity', jsonb_build_object('entity_id', :'invoice')),
  ('restore_entity', jsonb_build_object('entity_id', :'ada')),
  ('delete_entity', '{"entity_id": "ent_00000000000000000000000000000000"}'::jsonb),
  ('delete_entity', '{"entity_id": "nope"}'),
  ('delete_entity', jsonb_build_object('entity_id', :'ada', 'reason', repeat('x', 1001))),
  ('restore_entity', '{}')
) AS t(action, args);

-- A store about it while it is deleted adds its observation; it stays deleted.
SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "INV-18", "vendor_name": "Acme",
  "status": "paid"}]}')->'entities'->0->>'entity_id' = :'invoice' AS same_entity;
SELECT neotoma.retrieve_entities('{"entity_type": "invoice"}')->'total' AS still_hidden;

-- Restore: back as it was (with what was stored meanwhile).
SELECT r->>'deleted' AS deleted, r->>'reason' AS reason
FROM neotoma.restore_entity(jsonb_build_object('entity_id', :'invoice', 'reason', 'not a duplicate')) AS r;
SELECT (s->'snapshot') - 'status' = (SELECT (b.s->'snapshot') FROM before b) AS same_fields, s->'snapshot'->>'status' AS status
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice')) AS s;
SELECT neotoma.retrieve_entities('{}')->'total' AS total, neotoma.list_timeline_events('{}')->'total' AS events,
       (SELECT count(*) FROM neotoma.relationship_overview) AS relationships,
       neotoma.list_relationships(jsonb_build_object('entity_id', :'ada'))->'total' AS ada_relationships;
SELECT error_code(try_action('restore_entity', jsonb_build_object('entity_id', :'invoice'))) AS restore_again;
-- Delete, restore, delete: each step its own observation.
SELECT neotoma.delete_entity(jsonb_build_object('entity_id', :'invoice'))->>'deleted' AS deleted_again;
SELECT string_agg(kind, ',' ORDER BY observed_at) AS steps FROM neotoma.observations
WHERE entity_id = :'invoice' AND kind IN ('deletion', 'restoration');

-- Another user cannot delete or see it.
SET neotoma.user_id = '18000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('delete_entity', jsonb_build_object('entity_id', :'ada'))) AS other_user;
SET neotoma.user_id = '18000000-0000-0000-0000-00000000000a';

-- Whatever inserts a deletion observation (here plain SQL), the entity follows it.
INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, content)
VALUES ('18000000-0000-0000-0000-00000000000a', '18000000-0000-0000-0000-0000000000f1', 'manual-deletion', 'lifecycle', '{}');
INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id, kind, observed_at, fields)
VALUES ('18000000-0000-0000-0000-00000000000a', '18000000-0000-0000-0000-0000000000f2', :'ada', 'person', '1.0',
        '18000000-0000-0000-0000-0000000000f1', 'deletion', clock_timestamp(), '{"reason": "by hand"}');
SELECT deleted_reason FROM neotoma.entities WHERE id = :'ada';
SELECT neotoma.retrieve_entities('{}')->'total' AS total;
RESET ROLE;
SELECT v->'ok' AS ok, v->'mismatch_count' AS mismatches FROM neotoma.verify() AS v;
-- A row set by hand, not by an observation: verify() finds and repairs it.
UPDATE neotoma.entities SET deleted_at = NULL, deleted_reason = NULL WHERE id = :'ada';
SELECT v->'ok' AS ok, v->'mismatches'->0->>'what' AS what FROM neotoma.verify(true) AS v;
SELECT v->'ok' AS ok FROM neotoma.verify() AS v;
ROLLBACK;
