-- Entity counts (retrieve_entities' total in constant time) through
-- stores and merges, checked by verify(); what a write leaves of the
-- session's planner settings; the statistics writes keep current.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
\set SHOW_CONTEXT never
SET neotoma.user_id = '23000000-0000-0000-0000-000000000023';

SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Ann Count", "email": "ann@count.example"},
  {"entity_type": "person", "name": "Anne Count", "email": "anne@count.example"},
  {"entity_type": "person", "name": "Ben Count", "email": "ben@count.example"},
  {"entity_type": "company", "name": "Count Ltd", "website": "count.example"}]}')->'entities') AS stored;

-- The totals: per type, of all types, merged ones in or out.
SELECT neotoma.retrieve_entities('{"entity_type": "person", "limit": 1}')->'total' AS persons,
       neotoma.retrieve_entities('{"limit": 1}')->'total' AS all_types;

-- A store again of the same people creates no entity: the totals hold.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ann C.", "email": "ann@count.example"}]}')->'interpretation'->'entities_created' AS created_again,
       neotoma.retrieve_entities('{"entity_type": "person", "limit": 1}')->'total' AS persons;

-- A merge takes one out of the current total, not out of the total with merged.
SELECT id AS ann FROM neotoma.entities WHERE identity_key = 'email=ann@count.example' \gset
SELECT id AS anne FROM neotoma.entities WHERE identity_key = 'email=anne@count.example' \gset
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'anne', 'to_entity_id', :'ann'))->'observations_moved' AS moved;
SELECT neotoma.retrieve_entities('{"entity_type": "person", "limit": 1}')->'total' AS current_persons,
       neotoma.retrieve_entities('{"entity_type": "person", "limit": 1, "include_merged": true}')->'total' AS with_merged;

-- Users read their own counts only, and cannot write them.
SELECT entity_type, sum(current) AS current, sum(total) AS total
FROM neotoma.entity_counts GROUP BY entity_type ORDER BY entity_type;
SAVEPOINT s;
INSERT INTO neotoma.entity_counts VALUES ('23000000-0000-0000-0000-000000000023', 'person', 100, 100);
ROLLBACK TO SAVEPOINT s;

-- verify() finds counts that do not add up (as only the owner could make
-- them), and repair rebuilds them.
RESET ROLE;
INSERT INTO neotoma.entity_counts VALUES ('23000000-0000-0000-0000-000000000023', 'person', 5, 5);
SET ROLE neotoma_regress_agent;
SELECT m->>'what' AS what, m->'expected' AS expected, m->'stored' AS stored
FROM jsonb_array_elements(neotoma.verify()->'mismatches') m WHERE m->>'what' = 'entity_counts';
SELECT (neotoma.verify(repair => true))->'repaired' AS repaired, (neotoma.verify())->'ok' AS ok_after;
-- A user's repair rebuilds that user's counts only: another user's rows
-- (here a wrong one, planted by a superuser) are not the user's to touch.
RESET ROLE;
INSERT INTO neotoma.entity_counts VALUES ('23000000-0000-0000-0000-0000000000ff', 'person', 7, 7);
SET ROLE neotoma_regress_agent;
SELECT neotoma_private._recount_entities();
RESET ROLE;
SELECT current, total FROM neotoma.entity_counts WHERE user_id = '23000000-0000-0000-0000-0000000000ff';
DELETE FROM neotoma.entity_counts WHERE user_id = '23000000-0000-0000-0000-0000000000ff';
SET ROLE neotoma_regress_agent;

-- A write runs with generic plans and without sequential scans, and gives
-- the session its settings back, also when it fails.
SHOW plan_cache_mode;
SHOW enable_seqscan;
SELECT error_code(try_action('store', '{"entities": "none"}')) AS failed_store;
SHOW plan_cache_mode;
SHOW enable_seqscan;

-- Right after a look, no table has outgrown its statistics: a second look
-- analyses nothing; and the tables written have statistics.
SELECT neotoma_private._refresh_statistics() >= 0 AS looked;
SELECT neotoma_private._refresh_statistics() AS analysed_again;
SELECT relname, relpages > 0 AS has_statistics FROM pg_class
WHERE oid IN ('neotoma.entities'::regclass, 'neotoma.observations'::regclass, 'neotoma.entity_snapshots'::regclass)
ORDER BY relname;

-- A look analyses from a sample of 9,000 rows (statistics target 30): the
-- writing backend holds the sample. With more than 30 entities, the
-- histogram of their ids has 31 bounds (the default target would give one
-- per id here). The owner marks the table as never analysed to have it
-- looked at.
SELECT jsonb_array_length(neotoma.store(jsonb_build_object('entities',
  (SELECT jsonb_agg(jsonb_build_object('entity_type', 'note', 'title', 'Sampled ' || g)) FROM generate_series(1, 40) g)))->'entities') AS notes;
RESET ROLE;
UPDATE pg_class SET relpages = 0 WHERE oid = 'neotoma.entities'::regclass;
SET ROLE neotoma_regress_agent;
SELECT neotoma_private._refresh_statistics() > 0 AS analysed;
-- (pg_stats hides the statistics of a table under row level security from
-- its users: the owner reads them.)
RESET ROLE;
SELECT array_length(histogram_bounds::text::text[], 1) AS id_bounds, current_setting('default_statistics_target') AS session_target
FROM pg_stats WHERE schemaname = 'neotoma' AND tablename = 'entities' AND attname = 'id';

ROLLBACK;
