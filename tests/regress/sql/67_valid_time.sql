-- Valid time (issue 44, docs/design/valid-time.md): what is stored with
-- valid_from/valid_to holds over [valid_from, valid_to) in the world. The
-- snapshot shows what holds now, valid_at what held then; a field's
-- history is its values over valid time; verify() is clean. As a
-- non-superuser role, through row level security.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '67000000-0000-0000-0000-00000000000a';

-- Alice: her name holds always; she worked at Acme from 2019 to 2022 and
-- at Initech since (stored in the other order: the order does not matter).
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Alice Martin", "email": "alice@example.com"}]}')->'entities'->0->>'entity_id' AS alice \gset
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "alice@example.com", "organization": "Initech"}],
                       "valid_from": "2022-03-01",
                       "provenance": {"extracted_at": "2025-01-01", "extractor_version": "regress"}}')->'entities'->0->>'entity_id' = :'alice' AS same_entity;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "alice@example.com", "organization": "Acme"}],
                       "valid_from": "2019-01-01", "valid_to": "2022-03-01T00:00:00Z",
                       "provenance": {"extracted_at": "2025-06-01", "extractor_version": "regress"}}')->'entities'->0->>'entity_id' = :'alice' AS same_entity;

-- Now: Initech, for ever (no end ahead); the stored snapshot says so too.
SELECT s->'snapshot'->>'organization' AS organization, s->'snapshot'->>'name' AS name, s ? 'valid_until' AS ends
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice')) s;
SELECT snapshot->>'organization' AS stored_organization, valid_until FROM neotoma.entity_snapshots WHERE entity_id = :'alice';
-- In 2020: Acme, until 2022-03-01 (its end excluded); on that day: Initech;
-- in 2018: no organization known, her name still (it holds always).
SELECT t AS valid_at, s->'snapshot'->>'organization' AS organization, s->'snapshot'->>'name' AS name,
       s->>'valid_until' AS valid_until, s->>'valid_at' AS echoed
FROM unnest(ARRAY['2018-06-01', '2020-06-01', '2022-02-28T23:59:59Z', '2022-03-01']) t,
     neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice', 'valid_at', t)) s;
-- The provenance of the value shown is the observation valid then.
SELECT (SELECT o.fields->>'organization' FROM neotoma.observations o
        WHERE o.id = (s->'field_provenance'->'organization'->>'observation_id')::uuid) AS from_observation
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice', 'valid_at', '2020-06-01')) s;

-- The field's history: a succession, earliest first.
SELECT i->>'valid_from' AS valid_from, i->>'valid_to' AS valid_to, i->'value' AS value,
       i->'provenance' ? 'source_id' AS sourced
FROM jsonb_array_elements(neotoma.retrieve_field_history(jsonb_build_object('entity_id', :'alice', 'field', 'organization'))->'intervals') i;
SELECT jsonb_array_length(h->'intervals') AS intervals, h->'intervals'->0 ? 'valid_from' AS bounded
FROM neotoma.retrieve_field_history(jsonb_build_object('entity_id', :'alice', 'field', 'name')) h;
-- Known in March 2025, before the Acme store was extracted: Initech only;
-- and the snapshot as known then, about 2020: nothing known of it.
SELECT i->>'valid_from' AS valid_from, i->'value' AS value
FROM jsonb_array_elements(neotoma.retrieve_field_history(jsonb_build_object(
       'entity_id', :'alice', 'field', 'organization', 'at', '2025-03-01'))->'intervals') i;
SELECT s->'snapshot' AS snapshot, s->>'valid_until' AS valid_until
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice', 'at', '2025-03-01', 'valid_at', '2020-06-01')) s;
-- `at` alone: about the same instant (what the memory answered then).
SELECT s->'snapshot'->>'organization' AS organization
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice', 'at', '2025-07-01')) s;

-- A value with no end is overtaken where a newer one holds: Initech
-- renamed its office from 2024 (a correction-free succession of the same
-- field with overlapping intervals: the later write wins where both hold).
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "alice@example.com", "organization": "Initech Europe"}],
                       "valid_from": "2024-01-01"}')->'entities'->0->>'entity_id' = :'alice' AS same_entity;
SELECT i->>'valid_from' AS valid_from, i->>'valid_to' AS valid_to, i->'value' AS value
FROM jsonb_array_elements(neotoma.retrieve_field_history(jsonb_build_object('entity_id', :'alice', 'field', 'organization'))->'intervals') i;

-- A correction over an interval wins there only: Acme was "Acme Corp"
-- in 2020 and 2021 (a correction's priority), Acme before and after.
SELECT neotoma.correct(jsonb_build_object('entity_id', :'alice', 'entity_type', 'person', 'field', 'organization',
         'value', 'Acme Corp', 'valid_from', '2020-01-01', 'valid_to', '2022-01-01'))->>'message' AS corrected;
SELECT neotoma.correct(jsonb_build_object('entity_id', :'alice', 'entity_type', 'person', 'field', 'organization',
         'value', 'Acme Corp', 'valid_from', '2020-01-01', 'valid_to', '2022-01-01'))->>'message' AS again;
SELECT i->>'valid_from' AS valid_from, i->>'valid_to' AS valid_to, i->'value' AS value,
       i->'provenance'->>'source_priority' AS priority
FROM jsonb_array_elements(neotoma.retrieve_field_history(jsonb_build_object('entity_id', :'alice', 'field', 'organization'))->'intervals') i;
SELECT s->'snapshot'->>'organization' AS organization_now
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice')) s;

-- Listings and search answer each snapshot at valid_at too (which
-- entities, and their order, by what holds now); min_confidence still
-- filters the fields shown.
SELECT a.label, e->'snapshot'->>'organization' AS organization, e->'snapshot'->>'name' AS name
FROM (VALUES ('typed, 2020', '{"entity_type": "person", "valid_at": "2020-06-01"}'::jsonb),
             ('typed, now', '{"entity_type": "person"}'),
             ('search, 2023', '{"search": "Alice Martin", "search_mode": "lexical", "valid_at": "2023-01-01"}'),
             ('confident, 2021', '{"entity_type": "person", "valid_at": "2021-01-01", "min_confidence": "F3"}')) a(label, args),
     jsonb_array_elements(neotoma.retrieve_entities(a.args)->'entities') e
WHERE e->>'id' = :'alice' ORDER BY a.label;

-- A search finds what holds now; with current_only false, also values
-- whose validity ended, saying which ended and when.
SELECT a.current_only, count(e.*) FILTER (WHERE e->>'id' = :'alice') AS alice_found,
       (SELECT string_agg((x->>'value') || ' until ' || left(x->>'valid_to', 10), ', ')
        FROM jsonb_array_elements(min(e->>'ended') FILTER (WHERE e->>'id' = :'alice')::jsonb) x) AS ended
FROM (VALUES ('default', '{"search": "Acme", "search_mode": "lexical"}'::jsonb),
             ('false', '{"search": "Acme", "search_mode": "lexical", "current_only": false}')) a(current_only, args)
LEFT JOIN LATERAL jsonb_array_elements(neotoma.retrieve_entities(a.args)->'entities') e ON true
GROUP BY a.current_only ORDER BY a.current_only;
SELECT try_action('retrieve_entities', '{"current_only": false}')->'error'->>'code' AS without_search;

-- (A listing reads the compact values over valid time, not the reducer's
-- state: one [from, to, value, rating] per stretch.)
SELECT jsonb_array_length(valid_values->'organization') AS stretches, valid_values->'organization'->1 AS second,
       valid_values ? 'name' AS name_holds_always
FROM neotoma.entity_snapshots WHERE entity_id = :'alice';

-- Each stretch's start and end are events of the entity's timeline.
SELECT neotoma._iso(event_timestamp) AS at, event_type, source_field, properties->>'value' AS value
FROM neotoma.timeline_events WHERE entity_id = :'alice' ORDER BY event_timestamp, event_type, value;

-- One entity's events as true in the world then (list_timeline_events
-- {entity_id, valid_at}): an invoice due on the 15th until its terms
-- changed on 2024-02-01, on the 29th since. Without valid_at, the events
-- of now (the stored ones); valid_at needs entity_id.
SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "VT-1", "vendor_name": "Acme"}]}')->'entities'->0->>'entity_id' AS invoice \gset
SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "VT-1", "vendor_name": "Acme", "date_due": "2024-02-15"}],
                       "valid_to": "2024-02-01"}')->'entities'->0->>'entity_id' = :'invoice' AS same_invoice;
SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "VT-1", "vendor_name": "Acme", "date_due": "2024-02-29"}],
                       "valid_from": "2024-02-01"}')->'entities'->0->>'entity_id' = :'invoice' AS same_invoice;
SELECT coalesce(t, 'now') AS valid_at, e->>'event_type' AS event_type, left(e->>'event_timestamp', 10) AS day,
       e->>'id' IN (SELECT id::text FROM neotoma.timeline_events) AS stored_id
FROM unnest(ARRAY[NULL, '2024-01-10', '2024-02-01']) WITH ORDINALITY u(t, n),
     jsonb_array_elements(neotoma.list_timeline_events(jsonb_strip_nulls(jsonb_build_object(
       'entity_id', :'invoice', 'event_type', 'InvoiceDue', 'valid_at', t)))->'events') e
ORDER BY n;
SELECT l->'total' AS total, (SELECT array_agg(e->>'event_type' ORDER BY e->>'event_timestamp' DESC, e->>'id') FROM jsonb_array_elements(l->'events') e)
       = (SELECT array_agg(e->>'event_type') FROM jsonb_array_elements(l->'events') e) AS newest_first
FROM neotoma.list_timeline_events(jsonb_build_object('entity_id', :'invoice', 'valid_at', '2024-01-10', 'limit', 2)) l;
SELECT try_action('list_timeline_events', '{"valid_at": "2024-01-10"}')->'error' AS valid_at_without_entity;

-- Contradictions: values over disjoint intervals are a succession, not a
-- contradiction; where they hold together with different values from
-- different sources, they are one (in the user's listing too).
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Carol Diaz", "email": "carol@example.com"}]}')->'entities'->0->>'entity_id' AS carol \gset
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "carol@example.com", "role": "engineer"}],
                       "valid_from": "2019-01-01", "valid_to": "2022-01-01"}') IS NOT NULL AS stored;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "carol@example.com", "role": "manager"}],
                       "valid_from": "2022-01-01"}') IS NOT NULL AS stored;
SELECT jsonb_array_length(neotoma.list_contradictions(jsonb_build_object('entity_id', :'carol'))->'contradictions') AS succession;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "carol@example.com", "role": "director"}],
                       "valid_from": "2023-01-01", "valid_to": "2024-01-01"}') IS NOT NULL AS stored;
SELECT c->>'field' AS field, c->'chosen_value' AS chosen,
       (SELECT array_agg(v->>'value' ORDER BY v->>'value') FROM jsonb_array_elements(c->'values') v) AS competing
FROM jsonb_array_elements(neotoma.list_contradictions(jsonb_build_object('entity_id', :'carol'))->'contradictions') c;
SELECT e->>'entity_id' = :'carol' AS carol_listed
FROM jsonb_array_elements(neotoma.list_contradictions('{"entity_type": "person"}')->'contradictions') e
WHERE e->>'entity_id' = :'carol';

-- Merge and split keep intervals: Dan's roles (another e-mail, another
-- entity) move with him into Carol, and back out when split off.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Dan Diaz", "email": "dan@example.com"}]}')->'entities'->0->>'entity_id' AS dan \gset
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "dan@example.com", "country": "Peru"}],
                       "valid_from": "2015-01-01", "valid_to": "2016-01-01"}')->>'source_id' AS dan_source \gset
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'dan', 'to_entity_id', :'carol'))->>'to_entity_id' = :'carol' AS merged;
SELECT string_agg(i->'value' #>> '{}' || ' ' || left(i->>'valid_from', 10) || '..' || left(i->>'valid_to', 10), ', ') AS carols_countries
FROM jsonb_array_elements(neotoma.retrieve_field_history(jsonb_build_object('entity_id', :'carol', 'field', 'country'))->'intervals') i;
SELECT neotoma.split_entity(jsonb_build_object('entity_id', :'carol', 'source_ids', jsonb_build_array(:'dan_source')))
       ->>'to_entity_id' AS split_off \gset
SELECT try_action('retrieve_field_history', jsonb_build_object('entity_id', :'carol', 'field', 'country'))->'error'->>'code' AS carol_country_after_split;
SELECT jsonb_array_length(neotoma.retrieve_field_history(jsonb_build_object('entity_id', :'split_off', 'field', 'country'))->'intervals') AS split_off_countries;
SELECT neotoma.verify()->'mismatches' AS mismatches_after_merge_and_split;

-- An end ahead: an address valid until 2999. Now it holds, and the stored
-- snapshot says until when.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "alice@example.com", "address": "1 Main St"}],
                       "valid_to": "2999-01-01"}')->'entities'->0->>'entity_id' = :'alice' AS same_entity;
SELECT snapshot->>'address' AS address, neotoma._iso(valid_until) AS valid_until
FROM neotoma.entity_snapshots WHERE entity_id = :'alice';
SELECT s->>'valid_until' AS valid_until FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice')) s;
SELECT s->'snapshot' ? 'address' AS in_3000
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice', 'valid_at', '3000-01-01')) s;

-- The same content with another interval is another source; the same
-- interval written otherwise is the same one.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "alice@example.com", "organization": "Acme"}],
                       "valid_from": "2019-01-01T00:00:00+00:00", "valid_to": "2022-03-01"}')->>'deduplicated' AS same_interval_again;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "alice@example.com", "organization": "Acme"}],
                       "valid_from": "2019-01-01"}')->>'deduplicated' AS another_interval;

-- Bad input: a clear error, nothing written.
SELECT count(*) AS observations_before FROM neotoma.observations WHERE entity_id = :'alice' \gset
SELECT t.n, r->>'sqlstate' AS sqlstate, r->'error'->>'code' AS code, r->'error'->'details'->>'field' AS field,
       r->'error'->>'message' AS message
FROM (VALUES
  (1, 'store', '{"entities": [{"entity_type": "person", "email": "alice@example.com", "organization": "X"}],
                 "valid_from": "2022-01-01", "valid_to": "2021-01-01"}'::jsonb),
  (2, 'store', '{"entities": [{"entity_type": "person", "email": "alice@example.com", "organization": "X"}],
                 "valid_from": "2022-01-01", "valid_to": "2022-01-01"}'),
  (3, 'store', '{"entities": [{"entity_type": "person", "email": "alice@example.com", "organization": "X"}],
                 "valid_from": "last spring"}'),
  (4, 'store', '{"file_content": "aGVsbG8=", "mime_type": "text/plain", "valid_from": "2022-01-01"}'),
  (5, 'store', '{"entities": [{"entity_type": "person", "email": "alice@example.com"}], "valid_to": 2022}'),
  (6, 'retrieve_entity_snapshot', jsonb_build_object('entity_id', :'alice', 'valid_at', 'soon')),
  (7, 'retrieve_field_history', jsonb_build_object('entity_id', :'alice', 'field', 'salary')),
  (8, 'retrieve_field_history', jsonb_build_object('entity_id', :'alice', 'field', '')),
  (9, 'retrieve_field_history', jsonb_build_object('entity_id', :'alice')),
  (10, 'correct', jsonb_build_object('entity_id', :'alice', 'entity_type', 'person', 'field', 'organization',
                                     'value', 'X', 'valid_from', '2020-01-01', 'valid_to', '2019-01-01'))) t(n, action, args),
  try_action(t.action, t.args) r
ORDER BY t.n;
SELECT count(*) = :observations_before AS nothing_written FROM neotoma.observations WHERE entity_id = :'alice';

-- The table refuses an empty interval written by hand, too.
SAVEPOINT by_hand;
\set ON_ERROR_STOP 0
INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id, observed_at, fields, valid_from, valid_to)
SELECT user_id, gen_random_uuid(), entity_id, entity_type, schema_version, source_id, now(), '{"organization": "Y"}', '2020-01-01', '2020-01-01'
FROM neotoma.observations WHERE entity_id = :'alice' LIMIT 1;
\set ON_ERROR_STOP 1
ROLLBACK TO SAVEPOINT by_hand;

-- An observation inserted in SQL with an interval is folded by the trigger
-- like a store's.
INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id, observed_at, fields, valid_from, valid_to)
SELECT user_id, '67000000-0000-0000-0000-0000000000b1', entity_id, entity_type, schema_version, source_id, now(),
       '{"organization": "Hooli"}', '2016-01-01', '2017-01-01'
FROM neotoma.observations WHERE entity_id = :'alice' ORDER BY id LIMIT 1;
SELECT s->'snapshot'->>'organization' AS organization_2016
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'alice', 'valid_at', '2016-06-01')) s;

-- A past end: stored now as ended, a snapshot rendered before it ended is
-- rendered again when read, and by the upkeep's round.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Bob Stone", "email": "bob@example.com", "role": "intern"}],
                       "valid_to": "2999-01-01"}')->'entities'->0->>'entity_id' AS bob \gset
RESET ROLE;
-- (As if rendered in 1999, when another value held until 2000: what a
-- stored snapshot is once its valid_until has passed.)
UPDATE neotoma.entity_snapshots SET valid_until = '2000-01-01', snapshot = snapshot || '{"role": "trainee"}'
WHERE entity_id = :'bob';
SET ROLE neotoma_regress_agent;
SELECT s->'snapshot'->>'role' AS role, s->>'valid_until' AS valid_until
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'bob')) s;
RESET ROLE;
SELECT neotoma_private._rerender_past_validity(1000) >= 1 AS rendered_again;
SELECT snapshot->>'role' AS stored_role, neotoma._iso(valid_until) AS valid_until
FROM neotoma.entity_snapshots WHERE entity_id = :'bob';
SET ROLE neotoma_regress_agent;

SELECT neotoma.verify()->'mismatches' AS mismatches;
-- Another user sees none of it.
SET neotoma.user_id = '67000000-0000-0000-0000-00000000000b';
SELECT count(*) AS others_observations FROM neotoma.observations WHERE valid_from IS NOT NULL OR valid_to IS NOT NULL;
SELECT try_action('retrieve_field_history', jsonb_build_object('entity_id', :'alice', 'field', 'organization'))->'error'->>'code' AS others_history;
ROLLBACK;
