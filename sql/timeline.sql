-- Timeline events.

-- Timeline events: derived from the date fields of entity snapshots (one per
-- entity and date field), maintained with the snapshots and reproducible from
-- them (neotoma.verify()).
CREATE TABLE neotoma.timeline_events (
  user_id         uuid        NOT NULL,
  id              uuid        NOT NULL,
  event_type      text        NOT NULL,
  event_timestamp timestamptz NOT NULL,
  source_id       uuid        NOT NULL,
  entity_id       text        NOT NULL,
  entity_ids      text[]      NOT NULL,
  source_field    text        NOT NULL,
  observation_id  uuid        NOT NULL,
  properties      jsonb       NOT NULL DEFAULT '{}',
  -- Its entity's workspace (which never changes), for listings by workspace.
  workspace       text        NOT NULL DEFAULT 'default',
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, entity_id) REFERENCES neotoma.entities (user_id, id)
);
-- With what a listing filters on beside the time (its type, entity and
-- source), so that counting a range's events reads the index only: a month of
-- 3,215 events was 3,251 heap pages (4.4 ms) and is 60 index pages.
CREATE INDEX timeline_events_time ON neotoma.timeline_events (user_id, workspace, event_timestamp DESC, id)
  INCLUDE (entity_id, event_type, source_id);
CREATE INDEX timeline_events_entity ON neotoma.timeline_events (user_id, entity_id);
CREATE INDEX timeline_events_source ON neotoma.timeline_events (user_id, source_id);

-- How many events each user has per workspace, day (UTC) and type, so that
-- a listing's total over a long range is read from a few rows per day
-- instead of counted event by event (a month of a million-entity memory:
-- 16,000 events). Events of deleted entities are counted here; a listing
-- subtracts them (list_timeline_events.sql). Rows are deltas appended by
-- the triggers below, as in neotoma.entity_counts (counts.sql): concurrent
-- writers never wait on a shared counter, and a writer now and then folds
-- the rows of a day that no other transaction holds into one. verify()
-- checks the sums against the events.
CREATE TABLE neotoma.timeline_counts (
  user_id    uuid   NOT NULL,
  workspace  text   NOT NULL,
  day        date   NOT NULL,
  event_type text   NOT NULL,
  events     bigint NOT NULL
);
CREATE INDEX timeline_counts_day ON neotoma.timeline_counts (user_id, workspace, day)
  INCLUDE (event_type, events);

-- Trigger body: the deltas of a statement's inserted, updated or deleted
-- events, then, one statement in 8, the fold of the days it touched that
-- have more than 8 rows. Runs as the extension's owner: users read the
-- counts, never write them.
CREATE FUNCTION neotoma_private._count_events() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  look boolean := random() < 0.125;
  users uuid[];
  spaces text[];
  days date[];
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE neotoma.timeline_counts;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    WITH d AS (
      INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
      SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date, event_type, count(*)
      FROM new_events GROUP BY 1, 2, 3, 4
      RETURNING user_id, workspace, day)
    SELECT array_agg(user_id), array_agg(workspace), array_agg(day) INTO users, spaces, days
    FROM d WHERE look;
  ELSIF TG_OP = 'UPDATE' THEN
    WITH d AS (
      INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
      SELECT user_id, workspace, day, event_type, sum(n)
      FROM (SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date AS day, event_type, 1 AS n
            FROM new_events
            UNION ALL
            SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date, event_type, -1
            FROM old_events) x
      GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0
      RETURNING user_id, workspace, day)
    SELECT array_agg(user_id), array_agg(workspace), array_agg(day) INTO users, spaces, days
    FROM d WHERE look;
  ELSE
    WITH d AS (
      INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
      SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date, event_type, -count(*)
      FROM old_events GROUP BY 1, 2, 3, 4
      RETURNING user_id, workspace, day)
    SELECT array_agg(user_id), array_agg(workspace), array_agg(day) INTO users, spaces, days
    FROM d WHERE look;
  END IF;
  -- The rows of a day stay few (their number does not change the sums); a
  -- day's rows another transaction holds are left to it (SKIP LOCKED).
  IF users IS NOT NULL THEN
    WITH busy AS (
      SELECT c.user_id, c.workspace, c.day
      FROM neotoma.timeline_counts c
      JOIN (SELECT DISTINCT * FROM unnest(users, spaces, days)) AS k(user_id, workspace, day)
        ON k.user_id = c.user_id AND k.workspace = c.workspace AND k.day = c.day
      GROUP BY c.user_id, c.workspace, c.day HAVING count(*) > 8),
    folded AS (
      DELETE FROM neotoma.timeline_counts c
      WHERE c.ctid IN (SELECT x.ctid FROM neotoma.timeline_counts x
                       JOIN busy b ON b.user_id = x.user_id AND b.workspace = x.workspace AND b.day = x.day
                       FOR UPDATE OF x SKIP LOCKED)
      RETURNING c.user_id, c.workspace, c.day, c.event_type, c.events)
    INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
    SELECT user_id, workspace, day, event_type, sum(events) FROM folded
    GROUP BY user_id, workspace, day, event_type HAVING sum(events) <> 0;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER timeline_events_counted_insert AFTER INSERT ON neotoma.timeline_events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_events();
CREATE TRIGGER timeline_events_counted_update AFTER UPDATE ON neotoma.timeline_events
  REFERENCING OLD TABLE AS old_events NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_events();
CREATE TRIGGER timeline_events_counted_delete AFTER DELETE ON neotoma.timeline_events
  REFERENCING OLD TABLE AS old_events
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_events();
CREATE TRIGGER timeline_events_counted_truncate AFTER TRUNCATE ON neotoma.timeline_events
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_events();

-- Rebuilds the count rows from the events (verify(repair => true)): the
-- session's user's, or, for a superuser session without a user, every
-- user's; one statement, as neotoma_private._recount_entities.
CREATE FUNCTION neotoma_private._recount_events() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  WITH scope AS (
    SELECT (SELECT neotoma.current_user_id()) AS user_id,
           (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user) AS everyone),
  cleared AS (
    DELETE FROM neotoma.timeline_counts c USING scope s
    WHERE c.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone))
  INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
  SELECT t.user_id, t.workspace, (t.event_timestamp AT TIME ZONE 'UTC')::date, t.event_type, count(*)
  FROM neotoma.timeline_events t, scope s
  WHERE t.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone)
  GROUP BY 1, 2, 3, 4;
$$;
