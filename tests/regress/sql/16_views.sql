-- The analysts' views: what they show, that row level security applies to
-- them (security_invoker), and that every view of the schema has it.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '50000000-0000-0000-0000-000000000005';
\set SHOW_CONTEXT never

SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "V-1", "vendor_name": "Acme", "amount_due": 10, "invoice_date": "2024-05-02", "lot": "L7"},
  {"entity_type": "company", "name": "Acme"}]}')->'entities') AS stored;
SELECT entity_id AS inv FROM neotoma.entity_overview WHERE entity_type = 'invoice' \gset
SELECT entity_id AS acme FROM neotoma.entity_overview WHERE entity_type = 'company' \gset
SELECT neotoma.correct(jsonb_build_object('entity_id', :'inv', 'entity_type', 'invoice', 'field', 'amount_due', 'value', 12))->>'observation_id' IS NOT NULL AS corrected;
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'inv', 'target_entity_id', :'acme', 'metadata', jsonb_build_object('role', 'vendor')))->>'relationship_type' AS related;

-- One row per entity, with its snapshot.
SELECT entity_type, canonical_name, observation_count, snapshot->'amount_due' AS amount_due, merged_into
FROM neotoma.entity_overview ORDER BY entity_type;

-- One row per field, with its provenance: the correction wins and says so.
SELECT field, value_text, source_priority,
       observation_id = (SELECT id FROM neotoma.observations o WHERE o.entity_id = f.entity_id ORDER BY source_priority DESC LIMIT 1) AS from_top_observation,
       source_id IS NOT NULL AND observed_at IS NOT NULL AS has_source_and_time
FROM neotoma.entity_fields f WHERE entity_id = :'inv' ORDER BY field;

SELECT relationship_type, source_name, source_entity_type, target_name, target_entity_type, metadata
FROM neotoma.relationship_overview;

SELECT event_type, to_char(event_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, canonical_name, source_field FROM neotoma.timeline;

SELECT entity_type, field, occurrences, sources, usual_type FROM neotoma.unknown_fields;

-- The schemas this session resolves: its own variant of invoice after adding a field.
SELECT neotoma.update_schema_incremental('{"entity_type": "invoice", "user_specific": true, "fields_to_add": [{"field_name": "lot", "field_type": "string"}]}')->'scope' AS scope;
SELECT entity_type, scope FROM neotoma.active_schemas WHERE entity_type IN ('invoice', 'person') ORDER BY 1;
SELECT entity_type, field, field_type, required, merge_strategy FROM neotoma.schema_fields
WHERE (entity_type = 'invoice' AND field IN ('amount_due', 'lot', 'notes', 'invoice_number'))
   OR (entity_type = 'note' AND field IN ('tags', 'content')) ORDER BY entity_type, field;

-- Another user sees none of it, through every view, and resolves the global invoice schema.
SET neotoma.user_id = '60000000-0000-0000-0000-000000000006';
SELECT (SELECT count(*) FROM neotoma.entity_overview) AS entities,
       (SELECT count(*) FROM neotoma.entity_fields) AS fields,
       (SELECT count(*) FROM neotoma.relationship_overview) AS relationships,
       (SELECT count(*) FROM neotoma.timeline) AS events,
       (SELECT count(*) FROM neotoma.unknown_fields) AS unknown,
       (SELECT scope FROM neotoma.active_schemas WHERE entity_type = 'invoice') AS invoice_scope;
RESET ROLE;
RESET neotoma.user_id;

-- Every view in the schema reads with the caller's rights.
SELECT c.relname, coalesce('security_invoker=true' = ANY(c.reloptions), false) AS security_invoker
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'neotoma' AND c.relkind = 'v' ORDER BY 1;
ROLLBACK;
