-- store (structured): sources, entities, observations, snapshots, raw_fragments.
-- Not in one transaction: each store is its own, as the order of the runs
-- (started_at, now()) shows, and the append-only refusals below are errors.
-- What it leaves for user a, 11_retrieve, 12_correct and 13_isolation store
-- again themselves (store is idempotent).
\ir include/setup.sql

SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';

-- First store: two entities, one unknown field.
SELECT r->'deduplicated' AS deduplicated, r->'interpretation' AS interpretation,
       r->'entities' AS entities, r->'unknown_fields_count' AS unknown_fields,
       r->>'source_id' AS source_id, r->>'content_hash' AS content_hash
FROM neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "INV-001", "vendor_name": "Acme Corp",
   "amount_due": 100, "currency": "EUR", "invoice_date": "2024-01-15", "po_number": "PO-9"},
  {"entity_type": "person", "name": "Alice Smith", "email": "Alice@Example.com"}],
  "provenance": {"extracted_at": "2024-01-16T10:00:00Z", "extractor_version": "test/1"}}') AS r;

-- The same content again: same source, deduplicated, nothing new.
SELECT r->'deduplicated' AS deduplicated, r->>'source_id' AS source_id,
       r->'interpretation'->'observations_created' AS observations_created,
       r->'entities' AS entities, r->'unknown_fields_count' AS unknown_fields
FROM neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "INV-001", "vendor_name": "Acme Corp",
   "amount_due": 100, "currency": "EUR", "invoice_date": "2024-01-15", "po_number": "PO-9"},
  {"entity_type": "person", "name": "Alice Smith", "email": "Alice@Example.com"}],
  "provenance": {"extracted_at": "2030-01-01T00:00:00Z", "extractor_version": "other/2"}}') AS r;
SELECT count(*) AS sources, (SELECT count(*) FROM neotoma.observations) AS observations
FROM neotoma.sources;

-- The same invoice from another source (identity normalised: case, spaces):
-- one entity, two observations; the newer amount wins (last_write).
SELECT r->'entities'->0->>'entity_id' AS entity_id, r->'interpretation'->'entities_created' AS entities_created
FROM neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": " inv-001",
  "vendor_name": "ACME  corp", "amount_due": 120, "date_due": "2024-02-15"}],
  "provenance": {"extracted_at": "2024-01-20T10:00:00Z", "extractor_version": "test/1"}}') AS r;
SELECT entity_type, canonical_name, identity_key FROM neotoma.entities ORDER BY id;
SELECT entity_id, observation_count, snapshot, provenance
FROM neotoma.entity_snapshots ORDER BY entity_id;

-- Unknown fields are kept, with their inferred type.
SELECT entity_type, fragment_key, fragment_value, inferred_type FROM neotoma.raw_fragments;

-- Structured input is an interpretation run of the `structured` interpreter.
SELECT interpreter, status, entities_created, observations_created, unknown_fields_count
FROM neotoma.interpretation_runs ORDER BY started_at, id;

-- Sources and observations are append-only.
\set SHOW_CONTEXT never
UPDATE neotoma.observations SET source_priority = 1;
DELETE FROM neotoma.sources;

-- The snapshots agree with a full recomputation.
SELECT neotoma.verify();
