-- Timeline events derived from date fields.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
SET neotoma.user_id = 'e0000000-0000-0000-0000-00000000000e';
\set SHOW_CONTEXT never

SELECT neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "T-1", "vendor_name": "V", "invoice_date": "2024-01-10", "date_due": "2024-02-10"},
  {"entity_type": "invoice", "invoice_number": "T-2", "vendor_name": "V", "invoice_date": "2024-02-01"},
  {"entity_type": "task", "title": "Pay", "status": "open", "due_date": "2024-02-05T09:00:00Z"},
  {"entity_type": "transaction", "transaction_id": "tx1", "amount": 5, "date": "2023-12-31"}]}')->'deduplicated' AS dedup;
SELECT id AS t1 FROM neotoma.entities WHERE canonical_name = 'T-1 · V' \gset

-- Newest first, ties by id; each event names its entity and source.
SELECT e->>'event_type' AS type, e->>'event_timestamp' AS at, e->'properties'->>'field' AS field,
       jsonb_array_length(e->'entity_ids') AS entities, e->>'source_id' IS NOT NULL AS has_source
FROM jsonb_array_elements(neotoma.list_timeline_events('{}')->'events') e;

-- Filters: type, date range (after inclusive, before exclusive), entity, source, paging.
SELECT neotoma.list_timeline_events('{"event_type": "InvoiceIssued"}')->'total' AS issued,
       neotoma.list_timeline_events('{"after_date": "2024-02-01", "before_date": "2024-02-10"}')->'total' AS early_feb,
       neotoma.list_timeline_events(jsonb_build_object('entity_id', :'t1'))->'total' AS of_t1,
       neotoma.list_timeline_events(jsonb_build_object('source_id',
         (SELECT source_id::text FROM neotoma.timeline_events LIMIT 1)))->'total' AS of_source,
       jsonb_array_length(neotoma.list_timeline_events('{"limit": 2, "offset": 1}')->'events') AS page;
SELECT error_code(try_action('list_timeline_events', '{"after_date": "last week"}')) AS bad_date,
       error_code(try_action('list_timeline_events', '{"source_id": "x"}')) AS bad_source,
       error_code(try_action('list_timeline_events', '{"event_type": "no spaces"}')) AS bad_type;

-- A correction of a date moves its event (same id, new time, the correction's source).
SELECT id AS due_event FROM neotoma.timeline_events WHERE entity_id = :'t1' AND event_type = 'InvoiceDue' \gset
SELECT neotoma.correct(jsonb_build_object('entity_id', :'t1', 'entity_type', 'invoice', 'field', 'date_due', 'value', '2024-03-01'))->'value' AS corrected;
SELECT id = :'due_event' AS same_event, neotoma._iso(event_timestamp) AS moved_to,
       (SELECT source_type FROM neotoma.sources s WHERE s.id = timeline_events.source_id) AS from_source
FROM neotoma.timeline_events WHERE entity_id = :'t1' AND event_type = 'InvoiceDue';
-- Clearing the date removes the event.
SELECT neotoma.correct(jsonb_build_object('entity_id', :'t1', 'entity_type', 'invoice', 'field', 'date_due', 'value', null))->'value' AS cleared;
SELECT count(*) AS due_events FROM neotoma.timeline_events WHERE entity_id = :'t1' AND event_type = 'InvoiceDue';

SELECT neotoma.verify()->'ok' AS verified;
RESET ROLE;
ROLLBACK;
