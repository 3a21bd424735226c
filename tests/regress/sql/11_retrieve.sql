-- Reading back what 10_store stored.
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

-- Snapshot with provenance.
SELECT r->'entity_type' AS type, r->'snapshot' AS snapshot, r->'observation_count' AS n,
       r->'computed_at' AS computed_at, r->'last_observation_at' AS last_at,
       r->'field_provenance'->'amount_due'->'source_priority' AS amount_priority
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice')) AS r;

-- As of a past time: only the first observation counts.
SELECT r->'snapshot' AS snapshot, r->'observation_count' AS n, r->'at' AS at
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice', 'at', '2024-01-17')) AS r;
SELECT r->'snapshot' AS snapshot, r->'observation_count' AS n
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'invoice', 'at', '2020-01-01')) AS r;

-- Observations, newest first, paginated.
SELECT jsonb_path_query_array(r, '$.observations[*].fields.amount_due') AS amounts,
       r->'total' AS total, r->'limit' AS lim
FROM neotoma.list_observations(jsonb_build_object('entity_id', :'invoice')) AS r;
SELECT jsonb_array_length(r->'observations') AS page, r->'total' AS total, r->'offset' AS off
FROM neotoma.list_observations(jsonb_build_object('entity_id', :'invoice', 'limit', 1, 'offset', 1)) AS r;

-- Field provenance: snapshot field → observation → source → run.
SELECT r->'field' AS field, r->'value' AS value, r->'observed_at' AS observed_at,
       r->'source_observation'->'source_priority' AS priority,
       r->'source_material'->'source_type' AS source_type,
       r->'interpretation_run'->'interpreter' AS interpreter
FROM neotoma.retrieve_field_provenance(jsonb_build_object('entity_id', :'invoice', 'field', 'amount_due')) AS r;
SELECT try_action('retrieve_field_provenance', jsonb_build_object('entity_id', :'invoice', 'field', 'po_number'));

-- Listing: total order (most recently observed first, then id), pagination.
SELECT jsonb_path_query_array(r, '$.entities[*].entity_type') AS types, r->'total' AS total,
       r->'excluded_merged' AS excluded_merged
FROM neotoma.retrieve_entities('{}') AS r;
SELECT r->'entities'->0 ? 'snapshot' AS has_snapshot
FROM neotoma.retrieve_entities('{"include_snapshots": false, "limit": 1}') AS r;
SELECT neotoma.retrieve_entities('{}') = neotoma.retrieve_entities('{}') AS deterministic;

-- Lookup by identifier: normalised (case, spaces), then partial.
SELECT r->'match_type' AS how, jsonb_path_query_array(r, '$.entities[*].entity_type') AS types,
       r->'entities'->0->'matched_fields' AS fields
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "  ALICE@example.com "}') AS r;
SELECT r->'match_type' AS how, r->'entities'->0->'canonical_name' AS name
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "alice"}') AS r;
SELECT r->'match_type' AS how, r->'total' AS total
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "inv-001", "entity_type": "person"}') AS r;
SELECT r->'match_type' AS how, r->'total' AS total
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "nobody at all"}') AS r;
-- Partial matches use the form of the identifier each kind of field is
-- stored in: digits for phones, the bare host for web sites.
SELECT neotoma.store('{"entities": [
  {"entity_type": "contact", "name": "Pat Phone", "phone": "+1 (555) 010-9999"},
  {"entity_type": "company", "name": "Acme Widgets", "website": "https://www.acme-widgets.example/"}]}') IS NOT NULL AS stored;
SELECT r->'match_type' AS how, r->'entities'->0->'canonical_name' AS name, r->'entities'->0->'matched_fields' AS fields
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "555 010 9999"}') AS r;
SELECT r->'match_type' AS how, r->'entities'->0->'canonical_name' AS name, r->'entities'->0->'matched_fields' AS fields
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "HTTP://acme-widgets.example"}') AS r;
SELECT r->'match_type' AS how, r->'entities'->0->'canonical_name' AS name, r->'entities'->0->'matched_fields' AS fields
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "acme-widg"}') AS r;
-- Partial lookups read the values having every run of three characters
-- of a form (the index entity_identifiers_grams), or, for a form shorter
-- than three, every value: both find what LIKE finds, quotes and
-- backslashes included.
SELECT neotoma.store($${"entities": [
  {"entity_type": "person", "name": "Quote O'Brien", "email": "o'brien\\x@example.com"}]}$$) IS NOT NULL AS stored;
SELECT i AS identifier, r->'match_type' AS how, jsonb_path_query_array(r, '$.entities[*].canonical_name') AS names
FROM unnest(ARRAY['o''brien\x', 'n\x@', 'me-', 'xa', '9999', 'widgets.ex']) i,
     LATERAL neotoma.retrieve_entity_by_identifier(jsonb_build_object('identifier', i)) r;
-- An exact match of another type than asked for falls back to partial.
SELECT r->'match_type' AS how, r->'total' AS total
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "+1 555 010 9999", "entity_type": "company"}') AS r;

-- Actions plan their statements generically whatever the session's
-- plan_cache_mode (each statement has one shape per kind of call, served by
-- its indexes in a generic plan): the reads answer the same under either
-- setting of the session.
CREATE TEMP TABLE plan_answers (mode text, call text, answer jsonb);
CREATE FUNCTION pg_temp.reads_in(mode text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('plan_cache_mode', mode, true);
  INSERT INTO plan_answers VALUES
    (mode, 'exact lookup', neotoma.retrieve_entity_by_identifier('{"identifier": "alice@example.com"}')),
    (mode, 'partial lookup', neotoma.retrieve_entity_by_identifier('{"identifier": "alice"}')),
    (mode, 'typed listing', neotoma.retrieve_entities('{"entity_type": "invoice", "include_merged": true}')),
    (mode, 'listing', neotoma.retrieve_entities('{"limit": 1, "offset": 1}')),
    (mode, 'timeline', neotoma.list_timeline_events('{"after_date": "2024-01-01", "before_date": "2025-01-01"}'));
END $$;
SELECT pg_temp.reads_in('force_custom_plan');
SELECT pg_temp.reads_in('force_generic_plan');
SELECT c.call, c.answer = g.answer AS same_in_a_generic_plan,
       coalesce(jsonb_array_length(c.answer->'entities'), jsonb_array_length(c.answer->'events')) AS items
FROM plan_answers c JOIN plan_answers g ON g.call = c.call AND g.mode = 'force_generic_plan'
WHERE c.mode = 'force_custom_plan' ORDER BY c.call;
ROLLBACK;
