-- correct: a priority-1000 observation that wins at once.
\ir include/setup.sql
BEGIN;

-- The data of 10_store, stored again: an invoice seen by two sources, a person.
SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "INV-001", "vendor_name": "Acme Corp",
   "amount_due": 100, "currency": "EUR", "invoice_date": "2024-01-15", "po_number": "PO-9"},
  {"entity_type": "person", "name": "Alice Smith", "email": "Alice@Example.com"}],
  "provenance": {"extracted_at": "2024-01-16T10:00:00Z", "extractor_version": "test/1"}}')->'entities') AS stored;
SELECT jsonb_array_length(neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": " inv-001",
  "vendor_name": "ACME  corp", "amount_due": 120, "date_due": "2024-02-15"}],
  "provenance": {"extracted_at": "2024-01-20T10:00:00Z", "extractor_version": "test/1"}}')->'entities') AS stored;

SELECT id AS invoice FROM neotoma.entities WHERE entity_type = 'invoice' \gset

SELECT r->'field' AS field, r->'value' AS value, r->'message' AS message
FROM neotoma.correct(jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice',
                                        'field', 'amount_due', 'value', 99.5)) AS r;
SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice'))->'snapshot'->'amount_due' AS amount;

-- A later ordinary store does not beat the correction.
SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "INV-001",
  "vendor_name": "Acme Corp", "amount_due": 500}],
  "provenance": {"extracted_at": "2031-01-01T00:00:00Z", "extractor_version": "test/1"}}')->'deduplicated' AS dedup;
SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice'))->'snapshot'->'amount_due' AS amount;

-- The same correction again is the same observation (idempotent).
SELECT (neotoma.correct(jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice',
          'field', 'amount_due', 'value', 99.5))->>'observation_id')
     = (SELECT id::text FROM neotoma.observations WHERE kind = 'correction') AS same_observation,
       (SELECT count(*) FROM neotoma.observations WHERE kind = 'correction') AS corrections;

-- Correcting again to another value, then back: each is a new observation.
SELECT neotoma.correct(jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice',
          'field', 'amount_due', 'value', 80))->'value' AS v1;
SELECT neotoma.correct(jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice',
          'field', 'amount_due', 'value', 99.5))->'value' AS v2;
SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice'))->'snapshot'->'amount_due' AS amount,
       (SELECT count(*) FROM neotoma.observations WHERE kind = 'correction') AS corrections;

-- null clears a field.
SELECT neotoma.correct(jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice',
          'field', 'date_due', 'value', null))->'value' AS cleared;
SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice'))->'snapshot' ? 'date_due' AS has_date_due;

-- Bad corrections.
SELECT error_code(try_action('correct', jsonb_build_object('entity_id', :'invoice', 'entity_type', 'person', 'field', 'name', 'value', 'x'))) AS wrong_type,
       error_code(try_action('correct', jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice', 'field', 'nope', 'value', 1))) AS unknown_field,
       error_code(try_action('correct', jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice', 'field', 'amount_due', 'value', 'many'))) AS wrong_value,
       error_code(try_action('correct', '{"entity_id": "ent_00000000000000000000000000000000", "entity_type": "invoice", "field": "amount_due", "value": 1}')) AS missing_entity,
       error_code(try_action('correct', '{"entity_id": "ent_1", "entity_type": "invoice", "field": "amount_due", "value": 1}')) AS bad_id,
       error_code(try_action('correct', jsonb_build_object('entity_id', :'invoice', 'entity_type', 'invoice', 'field', 'amount_due'))) AS no_value;

SELECT neotoma.verify()->'ok' AS verified;
ROLLBACK;
