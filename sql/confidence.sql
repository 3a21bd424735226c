-- Contests: an agent or a person disputing one observation (contest). The
-- observation stays as it was (observations are immutable); each contest is
-- a recorded fact the reducer counts, lowering the observation's confidence
-- rating one step of credibility (neotoma_core::confidence), so verify()
-- reproduces it. They go with the observation: erasing it removes them.
CREATE TABLE neotoma.observation_contests (
  user_id        uuid        NOT NULL,
  id             uuid        NOT NULL,
  observation_id uuid        NOT NULL,
  reason         text        NOT NULL CHECK (length(reason) BETWEEN 1 AND 10000),
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, observation_id) REFERENCES neotoma.observations (user_id, id) ON DELETE CASCADE
);
CREATE INDEX observation_contests_observation ON neotoma.observation_contests (user_id, observation_id);
COMMENT ON TABLE neotoma.observation_contests IS
  'Contests of observations (contest): each lowers the contested observation''s confidence one step of credibility.';

-- Contests change what the reducer folds: whoever inserts them (contest,
-- an import, plain SQL, a split copying them), the snapshots of the
-- entities their observations count for are rebuilt in the same statement,
-- and the change feed says so.
CREATE FUNCTION neotoma_private._contests_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT o.user_id, array_agg(DISTINCT o.entity_id ORDER BY o.entity_id) AS ids
    FROM new_contests c JOIN neotoma.observations o ON o.user_id = c.user_id AND o.id = c.observation_id
    GROUP BY o.user_id ORDER BY o.user_id
  LOOP
    -- Refolds them and tells the change feed.
    PERFORM neotoma_private._recompute_targets(r.user_id, r.ids);
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER observation_contests_refold AFTER INSERT ON neotoma.observation_contests
  REFERENCING NEW TABLE AS new_contests
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._contests_inserted();
-- Kept as they are: erasure alone removes them (with their observation).
CREATE TRIGGER observation_contests_append_only BEFORE UPDATE OR DELETE ON neotoma.observation_contests
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_change();

-- Whether a confidence rating passes a min_confidence filter: its letter
-- and its number both at least as good (seed 004's AND semantics; byte
-- order, A before F and 1 before 6). NULL passes nothing.
CREATE FUNCTION neotoma._confidence_passes(confidence text, min_confidence text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT substr(confidence, 1, 1) COLLATE "C" <= substr(min_confidence, 1, 1) COLLATE "C"
     AND substr(confidence, 2, 1) COLLATE "C" <= substr(min_confidence, 2, 1) COLLATE "C"
$$;

-- A snapshot's fields whose value passes min_confidence (each field's
-- rating is in its field_provenance).
CREATE FUNCTION neotoma._confident_fields(snapshot jsonb, field_provenance jsonb, min_confidence text) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(jsonb_object_agg(f.key, f.value), '{}')
  FROM jsonb_each(snapshot) f
  WHERE neotoma._confidence_passes(field_provenance -> f.key ->> 'confidence', min_confidence)
$$;

-- An observation's confidence rating as the reducer counts it
-- (neotoma_core::confidence, which regress 40 checks this against): the
-- given one or its kind's default (A1 for a correction, F3 otherwise),
-- each contest one step of credibility lower, down to 6.
CREATE FUNCTION neotoma.observation_confidence(confidence text, source_priority integer, contests bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT left(b, 1) || least(6, substr(b, 2, 1)::int + greatest(contests, 0))::text
  FROM (SELECT coalesce(confidence, CASE WHEN source_priority >= 1000 THEN 'A1' ELSE 'F3' END) AS b) x
$$;
COMMENT ON FUNCTION neotoma.observation_confidence(text, integer, bigint) IS
  'An observation''s confidence rating (admiralty code) from the one given, its source priority and its number of contests.';
