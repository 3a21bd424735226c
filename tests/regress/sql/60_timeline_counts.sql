-- A listing's total over more than 1,000 events is read from the counts of
-- each day (neotoma.timeline_counts) and the first and last part days: it
-- equals the events counted one by one, for any range (whole days, part
-- days, open ends), event type and workspaces, with deleted entities left
-- out, after corrections move events, deletions, restorations and erasures.
-- verify() checks the counts and repairs them. As an ordinary role.
\ir include/setup.sql
BEGIN;
SET ROLE neotoma_regress_agent;
-- Another user's event, which the counts keep apart.
SET neotoma.user_id = '60000000-0000-0000-0000-00000000000b';
SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "B-1", "vendor_name": "V",
                                     "invoice_date": "2024-02-02"}]}')->'entities'->0 ? 'entity_id' AS other_user;
SET neotoma.user_id = '60000000-0000-0000-0000-00000000000a';
-- The triggers fold a day's rows in one statement of 8, at random: the
-- same draws every run.
SELECT setseed(0.6);
-- Dates without a zone are UTC to the actions; so to the counting below.
SET LOCAL TimeZone = 'UTC';

-- 1,500 invoices over 90 days of 2024 at every hour (each an InvoiceIssued
-- and, one in three, an InvoiceDue event), 60 in another workspace.
SELECT sum(jsonb_array_length(neotoma.store(jsonb_build_object('entities',
  (SELECT jsonb_agg(jsonb_build_object('entity_type', 'invoice', 'invoice_number', 'C-' || i, 'vendor_name', 'V',
            'invoice_date', to_char(timestamp '2024-01-01' + (i % 90) * interval '1 day' + (i % 24) * interval '1 hour',
                                    'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
          || CASE WHEN i % 3 = 0 THEN jsonb_build_object('date_due', '2024-04-' || lpad((1 + i % 28)::text, 2, '0'))
                  ELSE '{}' END)
   FROM generate_series(b * 500 + 1, b * 500 + 500) i)))->'entities')) AS stored
FROM generate_series(0, 2) b;
SELECT jsonb_array_length(neotoma.store(jsonb_build_object('workspace', 'other', 'entities',
  (SELECT jsonb_agg(jsonb_build_object('entity_type', 'invoice', 'invoice_number', 'O-' || i, 'vendor_name', 'V',
                                       'invoice_date', '2024-02-' || lpad((1 + i % 28)::text, 2, '0')))
   FROM generate_series(1, 60) i)))->'entities') AS stored_elsewhere;
-- 40 deleted.
SELECT count(neotoma.delete_entity(jsonb_build_object('entity_id', e.id))) AS deleted
FROM (SELECT id FROM neotoma.entities WHERE canonical_name LIKE 'C-1%' ORDER BY id LIMIT 40) e;

-- The totals the listing answers, beside the events counted one by one.
CREATE TEMP TABLE ranges (name text, args jsonb);
INSERT INTO ranges VALUES
  ('everything', '{}'),
  ('whole days', '{"after_date": "2024-01-01", "before_date": "2024-04-01"}'),
  ('part days', '{"after_date": "2024-01-05T13:00:00Z", "before_date": "2024-03-20T07:30:00Z"}'),
  ('open start', '{"before_date": "2024-03-03T12:00:00Z"}'),
  ('open end', '{"after_date": "2024-01-20T00:00:01Z"}'),
  ('one type', '{"event_type": "InvoiceIssued", "after_date": "2024-01-02T05:00:00+02:00"}'),
  ('every workspace', '{"workspace": "*", "after_date": "2024-01-01", "before_date": "2024-03-01"}'),
  ('other workspace', '{"workspace": "other"}'),
  ('within one day', '{"after_date": "2024-01-10T01:00:00Z", "before_date": "2024-01-10T23:00:00Z"}');
CREATE TEMP VIEW totals AS
SELECT r.name, (neotoma.list_timeline_events(r.args || '{"limit": 1}')->>'total')::bigint AS total,
       (SELECT count(*) FROM neotoma.timeline_events t
        WHERE t.workspace = ANY (CASE r.args->>'workspace' WHEN '*' THEN ARRAY['default', 'other']
                                   ELSE ARRAY[coalesce(r.args->>'workspace', 'default')] END)
          AND (r.args->>'event_type' IS NULL OR t.event_type = r.args->>'event_type')
          AND (r.args->>'after_date' IS NULL OR t.event_timestamp >= (r.args->>'after_date')::timestamptz)
          AND (r.args->>'before_date' IS NULL OR t.event_timestamp < (r.args->>'before_date')::timestamptz)
          AND NOT EXISTS (SELECT FROM neotoma.entities e WHERE e.id = t.entity_id AND e.deleted_at IS NOT NULL))
         AS counted
FROM ranges r;
SELECT name, total, total = counted AS exact FROM totals ORDER BY name;

-- Corrections move events between days (an update of their rows), a
-- restoration brings an entity's events back, an erasure takes them away.
SELECT count(neotoma.correct(jsonb_build_object('entity_id', e.id, 'entity_type', 'invoice',
         'field', 'invoice_date', 'value', '2024-03-15T10:00:00Z'))) AS moved
FROM (SELECT id FROM neotoma.entities WHERE canonical_name LIKE 'C-2%' AND deleted_at IS NULL ORDER BY id LIMIT 30) e;
SELECT count(neotoma.restore_entity(jsonb_build_object('entity_id', e.id))) AS restored
FROM (SELECT id FROM neotoma.entities WHERE deleted_at IS NOT NULL ORDER BY id LIMIT 10) e;
SELECT (neotoma.erase(jsonb_build_object('confirm', true, 'entity_id',
          (SELECT id FROM neotoma.entities WHERE canonical_name LIKE 'C-3_ ·%' AND deleted_at IS NULL ORDER BY id LIMIT 1))))
       ->'counts'->'timeline_events' AS erased_events;
SELECT name, total, total = counted AS exact FROM totals ORDER BY name;
SELECT (neotoma.verify())->'ok' AS verified;

-- A day's rows are folded: one entity stored again 40 times leaves a few
-- rows for its days, not 80 (each store replaces its events: -1 and +1).
SELECT count(neotoma.store(('{"entities": [{"entity_type": "invoice", "invoice_number": "C-1", "vendor_name": "V",
                                           "invoice_date": "2024-01-02T01:00:00Z", "amount": ' || i || '}]}')::jsonb))
       AS stored_again
FROM generate_series(1, 40) i;
SELECT count(*) < 12 AS few_rows FROM neotoma.timeline_counts WHERE day = '2024-01-02' AND workspace = 'default';
SELECT name, total, total = counted AS exact FROM totals WHERE name IN ('everything', 'whole days') ORDER BY name;

-- verify() finds counts that differ from the events, and repairs them (as
-- the owner, here a superuser, could break them).
RESET ROLE;
INSERT INTO neotoma.timeline_counts VALUES
  ('60000000-0000-0000-0000-00000000000a', 'default', '2024-02-02', 'InvoiceIssued', 5);
SET ROLE neotoma_regress_agent;
SELECT v->'ok' AS ok, v->'mismatch_count' AS mismatches, v->'mismatches'->0->>'what' AS what,
       v->'mismatches'->0->>'day' AS day
FROM neotoma.verify() v;
SELECT (neotoma.verify(true))->'repaired' AS repaired, (neotoma.verify())->'ok' AS verified;
SELECT name, total, total = counted AS exact FROM totals WHERE name = 'whole days';

-- Users read their own counts only; nobody writes them but the triggers.
SELECT count(*) AS rows_of_others FROM neotoma.timeline_counts
WHERE user_id <> '60000000-0000-0000-0000-00000000000a';
RESET ROLE;
SELECT count(*) > 0 AS other_user_counted FROM neotoma.timeline_counts
WHERE user_id = '60000000-0000-0000-0000-00000000000b';
SET ROLE neotoma_regress_agent;
SAVEPOINT s;
INSERT INTO neotoma.timeline_counts VALUES
  ('60000000-0000-0000-0000-00000000000a', 'default', '2024-02-02', 'InvoiceIssued', 5);
ROLLBACK TO s;
ROLLBACK;
