-- The deprecated record actions of the earlier specification, on the truth
-- model: a record is an entity and its properties are its snapshot;
-- update_record corrects, retrieve_records lists, delete_record deletes the
-- entity (as delete_entity). Every answer says it is deprecated and names its
-- replacement. As a user under row level security.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
\set SHOW_CONTEXT never
SET neotoma.user_id = '25000000-0000-0000-0000-000000000025';

SELECT neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "R-1", "vendor_name": "Record Co", "amount_due": 10, "currency": "EUR"},
  {"entity_type": "invoice", "invoice_number": "R-2", "vendor_name": "Other Co", "amount_due": 20, "currency": "USD"},
  {"entity_type": "person", "name": "Rita Record", "email": "rita@record.example"}]}')
  ->'entities'->0->>'entity_id' AS r1 \gset

-- retrieve_records: by type, by property, by search terms (all must match,
-- in the name or a value, any case); the total before the limit.
SELECT r->'deprecated' AS deprecated, r->'replacement' AS replacement, r->'total' AS total,
       jsonb_path_query_array(r, '$.records[*].properties.invoice_number') AS numbers
FROM neotoma.retrieve_records('{"type": "invoice"}') AS r;
SELECT r->'total' AS total, r->'records'->0->'properties'->'vendor_name' AS vendor
FROM neotoma.retrieve_records('{"properties": {"currency": "USD"}}') AS r;
SELECT r->'total' AS total, r->'records'->0->'type' AS type
FROM neotoma.retrieve_records('{"search": ["RITA", "record.example"]}') AS r;
SELECT r->'total' AS total, jsonb_array_length(r->'records') AS returned
FROM neotoma.retrieve_records('{"limit": 1}') AS r;
SELECT r->'records'->0->'file_urls' AS file_urls, r->'records'->0 ? 'created_at' AS has_created
FROM neotoma.retrieve_records('{"type": "person"}') AS r;

-- update_record: properties become corrections; the answer is the record.
SELECT r->'id' = to_jsonb(:'r1'::text) AS same_id, r->'properties'->'amount_due' AS amount,
       r->'properties'->'vendor_name' AS vendor, r->'deprecated' AS deprecated, r->'replacement' AS replacement
FROM neotoma.update_record(jsonb_build_object('id', :'r1', 'type', 'invoice',
                                              'properties', '{"amount_due": 11.5}'::jsonb)) AS r;
SELECT kind, source_priority, fields FROM neotoma.observations WHERE entity_id = :'r1' ORDER BY kind, id;

-- Bad updates: an unknown record, another type, a field the schema lacks, a
-- value of the wrong type; nothing is written.
SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field, r->'error'->>'message' AS message
FROM (VALUES
  (jsonb_build_object('id', 'ent_00000000000000000000000000000000', 'properties', '{"amount_due": 1}'::jsonb)),
  (jsonb_build_object('id', 'not an id')),
  (jsonb_build_object('id', :'r1', 'type', 'person')),
  (jsonb_build_object('id', :'r1', 'properties', '{"colour": "red"}'::jsonb)),
  (jsonb_build_object('id', :'r1', 'properties', '{"amount_due": "a lot"}'::jsonb)),
  ('{"properties": {}}'::jsonb)
) AS t(args), LATERAL try_action('update_record', args) AS r;
SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field
FROM (VALUES ('{"limit": 0}'::jsonb), ('{"limit": 101}'), ('{"type": "bad type!"}'), ('{"search_mode": "psychic"}'))
  AS t(args), LATERAL try_action('retrieve_records', args) AS r;

-- delete_record: the entity is deleted (its snapshot and history stay); the
-- record no longer shows; deleting again is RECORD_NOT_FOUND.
SELECT r->'success' AS success, r->'deleted_id' = to_jsonb(:'r1'::text) AS same_id, r->'deprecated' AS deprecated,
       r->>'replacement' AS replacement
FROM neotoma.delete_record(jsonb_build_object('id', :'r1')) AS r;
SELECT snapshot <> '{}' AS snapshot_kept, e.deleted_reason FROM neotoma.entity_snapshots s
JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id WHERE s.entity_id = :'r1';
SELECT string_agg(kind, ',' ORDER BY observed_at, kind) AS observations_kept FROM neotoma.observations WHERE entity_id = :'r1';
SELECT r->'total' AS invoices_left FROM neotoma.retrieve_records('{"type": "invoice"}') AS r;
SELECT error_code(r) AS code FROM try_action('delete_record', jsonb_build_object('id', :'r1')) AS r;
-- So is an id that never was (seed 001 §3.6).
SELECT error_code(r) AS code FROM try_action('delete_record', '{"id": "00000000-0000-0000-0000-00000000abcd"}') AS r;

RESET ROLE;
SELECT neotoma.verify()->'ok' AS verified;
ROLLBACK;
