-- neotoma 0.3.0 -> 0.4.0: planner statistics that keep up with the
-- memory's growth (neotoma._refresh_statistics, called after each write);
-- entity counts per user and type, so retrieve_entities' total takes
-- constant time (neotoma.entity_counts, filled from the entities here);
-- snapshots compressed with lz4 where the server has it; neotoma._iso
-- inlinable.
\echo Use "ALTER EXTENSION neotoma UPDATE TO '0.4.0'" to load this file. \quit

CREATE FUNCTION neotoma._refresh_statistics() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, neotoma, pg_temp SET client_min_messages = error AS $$
DECLARE
  t regclass;
  n integer := 0;
BEGIN
  FOR t IN
    SELECT c.oid::regclass FROM pg_class c
    WHERE c.oid = ANY (ARRAY['neotoma.sources', 'neotoma.interpretation_runs', 'neotoma.entities',
                             'neotoma.observations', 'neotoma.entity_snapshots', 'neotoma.entity_identifiers',
                             'neotoma.raw_fragments', 'neotoma.relationships', 'neotoma.relationship_observations',
                             'neotoma.timeline_events', 'neotoma.entity_merges', 'neotoma.files',
                             'neotoma.entity_counts']::regclass[])
      AND pg_relation_size(c.oid) >= 8192::bigint * greatest(2 * c.relpages, 1)
    ORDER BY c.oid
  LOOP
    EXECUTE format('ANALYZE (SKIP_LOCKED) %s', t);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
REVOKE EXECUTE ON FUNCTION neotoma._refresh_statistics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._refresh_statistics() TO neotoma_user;

-- The dispatcher runs under the search_path the SECURITY DEFINER functions
-- pin, so the statements both run keep one plan (Postgres re-plans a kept
-- plan whenever the search_path differs from its last run).
ALTER FUNCTION neotoma._invoke(text, text) SET search_path TO pg_catalog, neotoma, pg_temp;

-- A snapshot row is a few kB of JSON, compressed when stored: with lz4
-- where the server has it (much cheaper to write and read than pglz).
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    ALTER TABLE neotoma.entity_snapshots
      ALTER COLUMN snapshot SET COMPRESSION lz4, ALTER COLUMN provenance SET COMPRESSION lz4,
      ALTER COLUMN field_provenance SET COMPRESSION lz4, ALTER COLUMN reducer_state SET COMPRESSION lz4;
  END IF;
END $$;

-- How many entities each user has of each type, so that retrieve_entities
-- answers its total in constant time, exactly. Rows are deltas (+1 for an
-- entity created, -1 from `current` for one merged away), appended by the
-- triggers below, so concurrent writers never wait on a shared counter;
-- when a (user, type) has collected more than 32 rows, a writer (one in 16,
-- at random) folds the rows no other transaction holds into one. The count
-- is the sum.
-- verify() checks the sums against the entities.
CREATE TABLE neotoma.entity_counts (
  user_id     uuid   NOT NULL,
  entity_type text   NOT NULL,
  current     bigint NOT NULL,  -- entities not merged into another
  total       bigint NOT NULL   -- every entity, merged ones included
);
CREATE INDEX entity_counts_type ON neotoma.entity_counts (user_id, entity_type);

-- Trigger body: the deltas of a statement's inserted, updated (merged or
-- unmerged) or deleted entities, then the fold of the (user, type) pairs
-- it touched that have many rows; truncated entities (maintenance, with
-- every table that refers to them) leave no counts. Runs as the extension's owner: users
-- read the counts, never write them.
CREATE FUNCTION neotoma._count_entities() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  users uuid[];
  types text[];
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE neotoma.entity_counts;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
      SELECT user_id, entity_type, count(*) FILTER (WHERE merged_into IS NULL), count(*)
      FROM new_entities GROUP BY user_id, entity_type
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  ELSIF TG_OP = 'UPDATE' THEN
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
      SELECT n.user_id, n.entity_type, sum((n.merged_into IS NULL)::int - (o.merged_into IS NULL)::int), 0
      FROM old_entities o JOIN new_entities n ON n.user_id = o.user_id AND n.id = o.id
      WHERE (n.merged_into IS NULL) <> (o.merged_into IS NULL)
      GROUP BY n.user_id, n.entity_type
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  ELSE
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
      SELECT user_id, entity_type, -count(*) FILTER (WHERE merged_into IS NULL), -count(*)
      FROM old_entities GROUP BY user_id, entity_type
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  END IF;
  -- Looking for (user, type) pairs with many rows costs more than the
  -- deltas themselves, so one statement in 16, at random, looks: the rows
  -- of a pair stay few (their number does not change the sum).
  IF users IS NOT NULL AND random() < 0.0625 THEN
    WITH busy AS (
      SELECT c.user_id, c.entity_type
      FROM neotoma.entity_counts c
      JOIN unnest(users, types) AS t(user_id, entity_type)
        ON t.user_id = c.user_id AND t.entity_type = c.entity_type
      GROUP BY c.user_id, c.entity_type HAVING count(*) > 32),
    folded AS (
      DELETE FROM neotoma.entity_counts c
      WHERE c.ctid IN (SELECT x.ctid FROM neotoma.entity_counts x
                       JOIN busy b ON b.user_id = x.user_id AND b.entity_type = x.entity_type
                       FOR UPDATE OF x SKIP LOCKED)
      RETURNING c.user_id, c.entity_type, c.current, c.total)
    INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
    SELECT user_id, entity_type, sum(current), sum(total) FROM folded GROUP BY user_id, entity_type;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER entities_counted_insert AFTER INSERT ON neotoma.entities
  REFERENCING NEW TABLE AS new_entities
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._count_entities();
CREATE TRIGGER entities_counted_update AFTER UPDATE ON neotoma.entities
  REFERENCING OLD TABLE AS old_entities NEW TABLE AS new_entities
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._count_entities();
CREATE TRIGGER entities_counted_delete AFTER DELETE ON neotoma.entities
  REFERENCING OLD TABLE AS old_entities
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._count_entities();
CREATE TRIGGER entities_counted_truncate AFTER TRUNCATE ON neotoma.entities
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._count_entities();

-- Rebuilds the count rows from the entities (verify(repair => true)). Row
-- level security, forced on the owner too, limits it to the session's
-- user (a superuser rebuilds every user's).
CREATE FUNCTION neotoma._recount_entities() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  DELETE FROM neotoma.entity_counts;
  INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
  SELECT user_id, entity_type, count(*) FILTER (WHERE merged_into IS NULL), count(*)
  FROM neotoma.entities GROUP BY user_id, entity_type;
$$;

-- The counts of the entities stored before (run as the extension's owner,
-- before row level security is enabled on the table).
INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
SELECT user_id, entity_type, count(*) FILTER (WHERE merged_into IS NULL), count(*)
FROM neotoma.entities GROUP BY user_id, entity_type;

ALTER TABLE neotoma.entity_counts ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.entity_counts FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_counts_own_rows ON neotoma.entity_counts
  USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.entity_counts FROM PUBLIC;
GRANT SELECT ON neotoma.entity_counts TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._count_entities(), neotoma._recount_entities() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._recount_entities() TO neotoma_user;

-- Its total now comes from the counts.
DROP INDEX neotoma.entities_current;

-- STABLE, as to_char is: a body more volatile than its function is not
-- inlined, and a SQL function that is not inlined is parsed and planned on
-- every statement that calls it (a third of a snapshot read).
CREATE OR REPLACE FUNCTION neotoma._iso(ts timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') $$;
