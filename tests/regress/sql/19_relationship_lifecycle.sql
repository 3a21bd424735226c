-- Deleting and restoring relationships: a deletion is an observation of the
-- relationship (kind deletion); it leaves every listing, traversal,
-- neighborhood and view until restored, exactly as before.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '19000000-0000-0000-0000-00000000000a';

SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "INV-19", "vendor_name": "Acme", "amount_due": 120},
  {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
  {"entity_type": "person", "name": "Alan Turing", "email": "alan@example.com"}]}')->'entities');
SELECT id AS invoice FROM neotoma.entities WHERE entity_type = 'invoice' \gset
SELECT id AS ada FROM neotoma.entities WHERE canonical_name ILIKE '%ada%' \gset
SELECT id AS alan FROM neotoma.entities WHERE canonical_name ILIKE '%alan%' \gset
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada', 'metadata', jsonb_build_object('role', 'payer')))->>'relationship_type' AS linked;
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'alan'))->>'relationship_type' AS linked;
CREATE TEMP TABLE before AS
SELECT (neotoma.get_relationship_snapshot(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada'))->'snapshot') - 'computed_at' AS s;

-- Delete: the answer, then the relationship is gone from every listing; the entities stay.
SELECT d->>'deleted' AS deleted, d->>'reason' AS reason, d->>'deleted_at' IS NOT NULL AS has_time,
       d->>'relationship_type' AS type
FROM neotoma.delete_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada', 'reason', 'wrong payer')) AS d;
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', :'invoice'))->'total' AS invoice_relationships,
       neotoma.list_relationships(jsonb_build_object('entity_id', :'ada'))->'total' AS ada_relationships,
       jsonb_array_length(neotoma.retrieve_related_entities(jsonb_build_object('entity_id', :'invoice'))->'entities') AS related,
       jsonb_array_length(neotoma.retrieve_graph_neighborhood(jsonb_build_object('node_id', :'invoice'))->'relationships') AS neighborhood,
       (SELECT count(*) FROM neotoma.relationship_overview) AS overview,
       neotoma.retrieve_entities('{}')->'total' AS entities;
SELECT jsonb_array_length(neotoma.store('{"entities": [{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"}]}')->'related_relationships') AS store_related;
-- include_deleted shows it, with when and why.
SELECT r->>'target_entity_id' = :'ada' AS is_ada, r->>'deleted_reason' AS reason, r->>'deleted_at' IS NOT NULL AS has_time
FROM jsonb_array_elements(neotoma.list_relationships(jsonb_build_object('entity_id', :'invoice', 'include_deleted', true))->'relationships') r
ORDER BY 1;
SELECT error_code(r) AS code, r->'error'->'details'->>'deleted_at' IS NOT NULL AS has_time
FROM try_action('get_relationship_snapshot', jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada')) r;
SELECT s->'snapshot'->>'deleted_reason' AS reason,
       jsonb_path_query_array(s, '$.observations[*].kind') AS kinds
FROM neotoma.get_relationship_snapshot(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada', 'include_deleted', true)) s;
-- Asserting it again adds an observation; it stays deleted (and says so).
SELECT r->>'deleted_reason' AS still_deleted
FROM neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada', 'metadata', jsonb_build_object('role', 'payer'))) r;

-- Errors: twice, restoring a live one, unknown ends, unknown relationship, bad input.
SELECT action, error_code(try_action(action, args)) AS code
FROM (VALUES
  ('delete_relationship', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'invoice', 'target_entity_id', :'ada')),
  ('restore_relationship', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'invoice', 'target_entity_id', :'alan')),
  ('delete_relationship', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', 'ent_nope', 'target_entity_id', :'ada')),
  ('delete_relationship', jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'invoice', 'target_entity_id', :'ada')),
  ('delete_relationship', jsonb_build_object('relationship_type', 'LIKES', 'source_entity_id', :'invoice', 'target_entity_id', :'ada')),
  ('delete_relationship', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'invoice')),
  ('delete_relationship', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'invoice', 'target_entity_id', :'alan', 'reason', repeat('x', 1001)))
) AS t(action, args);
-- Another user cannot touch it.
SET neotoma.user_id = '19000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('restore_relationship', jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada'))) AS other_user;
SET neotoma.user_id = '19000000-0000-0000-0000-00000000000a';

-- Restore: back exactly as it was.
SELECT d->>'deleted' AS deleted, d->>'deleted_at' AS deleted_at, d->>'reason' AS reason
FROM neotoma.restore_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada', 'reason', 'right after all')) AS d;
SELECT ((neotoma.get_relationship_snapshot(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada'))->'snapshot') - 'computed_at') = (SELECT s FROM before) AS same_as_before;
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', :'invoice'))->'total' AS invoice_relationships,
       (SELECT count(*) FROM neotoma.relationship_overview) AS overview;
SELECT action, target_type, reason FROM neotoma.audit_trail WHERE target_kind = 'relationship' ORDER BY at;
-- A source's neighborhood leaves a deleted relationship out too.
SELECT source_id AS rel_source FROM neotoma.relationship_observations WHERE kind = 'assertion'
  AND relationship_id = (SELECT id FROM neotoma.relationships WHERE target_entity_id = :'ada') LIMIT 1 \gset
SELECT jsonb_array_length(neotoma.retrieve_graph_neighborhood(jsonb_build_object('node_id', :'rel_source', 'node_type', 'source'))->'relationships') AS source_relationships;
SELECT neotoma.delete_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'ada', 'reason', 'again'))->>'deleted' AS deleted_again;
SELECT jsonb_array_length(neotoma.retrieve_graph_neighborhood(jsonb_build_object('node_id', :'rel_source', 'node_type', 'source'))->'relationships') AS source_relationships;
-- Erasing the source of that deletion brings the relationship back (the
-- remaining steps say it is restored), verify() stays clean.
SELECT source_id AS deletion_source FROM neotoma.relationship_observations WHERE kind = 'deletion' AND metadata->>'reason' = 'again' \gset
SELECT (neotoma.erase(jsonb_build_object('source_id', :'deletion_source', 'confirm', true)))->'counts'->'relationship_observations' AS erased;
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', :'ada'))->'total' AS ada_relationships;

-- A merge leaves a deleted relationship behind, deleted.
SELECT (neotoma.delete_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'invoice', 'target_entity_id', :'alan')))->>'deleted' AS alan_link_deleted;
SELECT m->>'relationships_moved' AS moved FROM neotoma.merge_entities(jsonb_build_object('from_entity_id', :'alan', 'to_entity_id', :'ada')) m;
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', :'invoice'))->'total' AS invoice_relationships;
RESET ROLE;
SELECT v->'ok' AS ok, v->'mismatch_count' AS mismatches FROM neotoma.verify() AS v;
-- A row set by hand, not by an observation: verify() finds and repairs it.
UPDATE neotoma.relationships SET deleted_at = now() WHERE user_id = '19000000-0000-0000-0000-00000000000a' AND deleted_at IS NULL AND merged_into IS NULL;
SELECT v->'ok' AS ok, v->'mismatches'->0->>'what' AS what FROM neotoma.verify(true) AS v;
SELECT v->'ok' AS ok FROM neotoma.verify() AS v;
ROLLBACK;
