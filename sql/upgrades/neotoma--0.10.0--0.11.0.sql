-- 0.10.0 -> 0.11.0: confidence ratings (seed 004's admiralty code) on
-- observations and sources, contests, the highest_confidence merge
-- strategy, min_confidence filters.
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

-- The rating a caller gave (NULL: the kind's default, A1 for a correction,
-- F3 otherwise). Existing rows keep NULL: they were not rated.
ALTER TABLE neotoma.observations ADD COLUMN confidence text CHECK (confidence ~ '^[A-F][1-6]$');
ALTER TABLE neotoma.sources ADD COLUMN confidence text CHECK (confidence ~ '^[A-F][1-6]$');

-- The observation trigger hands the rating to the fold.
CREATE OR REPLACE FUNCTION neotoma._observations_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  PERFORM neotoma._apply_observations((
    SELECT jsonb_agg(jsonb_build_object(
             'user_id', n.user_id, 'id', n.id, 'entity_id', n.entity_id, 'entity_type', n.entity_type,
             'source_id', n.source_id, 'observed_at', neotoma._micros(n.observed_at),
             'source_priority', n.source_priority, 'specificity_score', n.specificity_score,
             'fields', n.fields, 'confidence', n.confidence)
           ORDER BY n.user_id, n.entity_id, n.id)::text
    FROM new_observations n WHERE n.kind NOT IN ('deletion', 'restoration')));
  -- Deleted or not: what the latest deletion or restoration of each entity says.
  UPDATE neotoma.entities e
  SET deleted_at = CASE WHEN l.kind = 'deletion' THEN l.observed_at END,
      deleted_reason = CASE WHEN l.kind = 'deletion' THEN l.fields->>'reason' END
  FROM (SELECT DISTINCT ON (o.user_id, o.entity_id) o.user_id, o.entity_id, o.kind, o.observed_at, o.fields
        FROM neotoma.observations o
        WHERE (o.user_id, o.entity_id) IN (SELECT n.user_id, n.entity_id FROM new_observations n
                                           WHERE n.kind IN ('deletion', 'restoration'))
          AND o.kind IN ('deletion', 'restoration')
        ORDER BY o.user_id, o.entity_id, o.observed_at DESC, o.id DESC) l
  WHERE e.user_id = l.user_id AND e.id = l.entity_id;
  RETURN NULL;
END $$;


-- Snapshots say each field's rating (field_provenance.confidence). Those
-- folded before have their observation's default, which is what a fold
-- now writes for an unrated observation (the reducer state keeps no rating
-- for it: it reads the same).
UPDATE neotoma.entity_snapshots s
SET field_provenance = (SELECT jsonb_object_agg(f.key,
                          f.value || jsonb_build_object('confidence',
                            CASE WHEN (f.value ->> 'source_priority')::int >= 1000 THEN 'A1' ELSE 'F3' END))
                        FROM jsonb_each(s.field_provenance) f)
WHERE EXISTS (SELECT FROM jsonb_each(s.field_provenance) f WHERE NOT f.value ? 'confidence');

-- Rebuilds the snapshots a contest changes.
CREATE FUNCTION neotoma."_recompute_targets"(
	"user_id" uuid,
	"entity_ids" TEXT[]
) RETURNS bigint
STRICT VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, neotoma, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'recompute_targets_sql_wrapper';

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
CREATE FUNCTION neotoma._contests_inserted() RETURNS trigger
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
    PERFORM neotoma._recompute_targets(r.user_id, r.ids);
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER observation_contests_refold AFTER INSERT ON neotoma.observation_contests
  REFERENCING NEW TABLE AS new_contests
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._contests_inserted();
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
ALTER TABLE neotoma.observation_contests ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.observation_contests FORCE ROW LEVEL SECURITY;
CREATE POLICY observation_contests_own_rows ON neotoma.observation_contests
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.observation_contests FROM PUBLIC;
GRANT SELECT, INSERT ON neotoma.observation_contests TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._recompute_targets(uuid, text[]), neotoma._contests_inserted(),
  neotoma._confidence_passes(text, text), neotoma._confident_fields(jsonb, jsonb, text),
  neotoma.observation_confidence(text, integer, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._recompute_targets(uuid, text[]), neotoma._confidence_passes(text, text),
  neotoma._confident_fields(jsonb, jsonb, text), neotoma.observation_confidence(text, integer, bigint) TO neotoma_user;

-- Analysts see each field's rating.
CREATE OR REPLACE VIEW neotoma.entity_fields WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       f.key AS field, f.value, f.value #>> '{}' AS value_text,
       (p ->> 'observation_id')::uuid AS observation_id,
       (p ->> 'source_id')::uuid AS source_id,
       (p ->> 'observed_at')::timestamptz AS observed_at,
       (p ->> 'source_priority')::integer AS source_priority,
       p ->> 'confidence' AS confidence
FROM neotoma.entities e
JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
CROSS JOIN LATERAL jsonb_each(s.snapshot) AS f
CROSS JOIN LATERAL (SELECT s.field_provenance -> f.key) AS fp(p)
WHERE e.merged_into IS NULL AND e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.entity_fields IS
  'One row per field of each current entity: value (jsonb and text) and its provenance (observation, source, time, priority, confidence rating).';


-- The audit trail lists contests; export and import carry them.
CREATE OR REPLACE VIEW neotoma.audit_trail WITH (security_invoker = true) AS
SELECT o.user_id, o.observed_at AS at,
       CASE o.kind WHEN 'deletion' THEN 'delete_entity' WHEN 'restoration' THEN 'restore_entity'
                   ELSE 'correct' END AS action,
       'entity'::text AS target_kind, o.entity_id AS target_id, o.entity_type AS target_type,
       CASE WHEN o.kind IN ('deletion', 'restoration') THEN o.fields->>'reason' END AS reason,
       CASE WHEN o.kind = 'correction'
            THEN jsonb_build_object('observation_id', o.id, 'fields',
                   (SELECT coalesce(jsonb_agg(k ORDER BY k), '[]') FROM jsonb_object_keys(o.fields) k))
            ELSE jsonb_build_object('observation_id', o.id) END AS details
FROM neotoma.observations o
WHERE o.kind IN ('deletion', 'restoration', 'correction')
UNION ALL
SELECT ro.user_id, ro.observed_at,
       CASE ro.kind WHEN 'deletion' THEN 'delete_relationship' ELSE 'restore_relationship' END,
       'relationship', ro.relationship_id::text, r.relationship_type, ro.metadata->>'reason',
       jsonb_build_object('observation_id', ro.id, 'source_entity_id', r.source_entity_id,
                          'target_entity_id', r.target_entity_id)
FROM neotoma.relationship_observations ro
JOIN neotoma.relationships r ON r.user_id = ro.user_id AND r.id = ro.relationship_id
WHERE ro.kind IN ('deletion', 'restoration')
UNION ALL
SELECT m.user_id, m.merged_at,
       -- A merge into an entity of another type is how reclassify moves one.
       CASE WHEN t.entity_type = e.entity_type THEN 'merge_entities' ELSE 'reclassify' END,
       'entity', m.from_entity_id, e.entity_type, m.merge_reason,
       jsonb_build_object('merge_id', m.id, 'to_entity_id', m.to_entity_id,
                          'observations_moved', m.observations_moved, 'relationships_moved', m.relationships_moved)
       || CASE WHEN t.entity_type = e.entity_type THEN '{}'::jsonb
               ELSE jsonb_build_object('to_entity_type', t.entity_type) END
FROM neotoma.entity_merges m
JOIN neotoma.entities e ON e.user_id = m.user_id AND e.id = m.from_entity_id
JOIN neotoma.entities t ON t.user_id = m.user_id AND t.id = m.to_entity_id
UNION ALL
SELECT sp.user_id, sp.split_at, 'split_entity', 'entity', sp.from_entity_id, e.entity_type, sp.reason,
       jsonb_build_object('split_id', sp.id, 'to_entity_id', sp.to_entity_id,
                          'created_entity', sp.created_entity, 'observations_moved', sp.observations_moved)
FROM neotoma.entity_splits sp
JOIN neotoma.entities e ON e.user_id = sp.user_id AND e.id = sp.from_entity_id
UNION ALL
SELECT x.user_id, x.erased_at, 'erase', x.target_kind, NULL, NULL, x.reason,
       jsonb_build_object('erasure_id', x.id, 'counts', x.counts)
FROM neotoma.erasures x
UNION ALL
SELECT a.user_id, a.created_at, 'annotate', CASE WHEN a.observation_id IS NULL THEN 'entity' ELSE 'observation' END,
       coalesce(a.observation_id::text, a.entity_id), e.entity_type, NULL,
       jsonb_build_object('annotation_id', a.id, 'entity_id', a.entity_id, 'note', a.note)
FROM neotoma.annotations a
JOIN neotoma.entities e ON e.user_id = a.user_id AND e.id = a.entity_id
UNION ALL
SELECT c.user_id, c.created_at, 'contest', 'observation', c.observation_id::text, o.entity_type, c.reason,
       jsonb_build_object('contest_id', c.id, 'entity_id', o.entity_id)
FROM neotoma.observation_contests c
JOIN neotoma.observations o ON o.user_id = c.user_id AND o.id = c.observation_id;
COMMENT ON VIEW neotoma.audit_trail IS
  'Every deletion, restoration, correction, merge, reclassification, split, erasure, annotation and contest of the user''s memory: when (at), what (action, target_kind, target_id, target_type), why (reason) and details (ids, corrected field names, erased counts, notes; never erased content).';


CREATE OR REPLACE FUNCTION neotoma.export_lines() RETURNS SETOF jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT x.line FROM (
    SELECT 1 AS n, s.id::text AS k, jsonb_build_object('table', 'sources', 'row', to_jsonb(s) - 'user_id'
             || jsonb_build_object('file', translate(encode(f.content, 'base64'), E'\n', ''))) AS line
    FROM neotoma.sources s LEFT JOIN neotoma.files f ON f.user_id = s.user_id AND f.source_id = s.id
    WHERE s.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 2, r.id::text, jsonb_build_object('table', 'interpretation_runs', 'row', to_jsonb(r) - 'user_id')
    FROM neotoma.interpretation_runs r WHERE r.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 3, c.id::text, jsonb_build_object('table', 'entity_schemas', 'row', to_jsonb(c) - 'user_id')
    FROM neotoma.entity_schemas c WHERE c.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 4, e.id, jsonb_build_object('table', 'entities', 'row', to_jsonb(e) - 'user_id')
    FROM neotoma.entities e WHERE e.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 5, sp.id::text, jsonb_build_object('table', 'entity_splits', 'row', to_jsonb(sp) - 'user_id')
    FROM neotoma.entity_splits sp WHERE sp.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 6, m.observation_id::text, jsonb_build_object('table', 'observation_moves', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.observation_moves m WHERE m.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 7, o.id::text, jsonb_build_object('table', 'observations', 'row', to_jsonb(o) - 'user_id')
    FROM neotoma.observations o WHERE o.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 8, f.id::text, jsonb_build_object('table', 'raw_fragments', 'row', to_jsonb(f) - 'user_id')
    FROM neotoma.raw_fragments f WHERE f.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 9, r.id::text, jsonb_build_object('table', 'relationships', 'row', to_jsonb(r) - 'user_id')
    FROM neotoma.relationships r WHERE r.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 10, o.id::text, jsonb_build_object('table', 'relationship_observations', 'row', to_jsonb(o) - 'user_id')
    FROM neotoma.relationship_observations o WHERE o.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 11, m.id::text, jsonb_build_object('table', 'entity_merges', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.entity_merges m WHERE m.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 12, x.id::text, jsonb_build_object('table', 'erasures', 'row', to_jsonb(x) - 'user_id')
    FROM neotoma.erasures x WHERE x.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 13, a.id::text, jsonb_build_object('table', 'annotations', 'row', to_jsonb(a) - 'user_id')
    FROM neotoma.annotations a WHERE a.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 14, c.id::text, jsonb_build_object('table', 'observation_contests', 'row', to_jsonb(c) - 'user_id')
    FROM neotoma.observation_contests c WHERE c.user_id = neotoma.current_user_id()
  ) x ORDER BY x.n, x.k
$$;


CREATE OR REPLACE FUNCTION neotoma.import_lines(lines jsonb[]) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  u uuid := neotoma.current_user_id();
  -- In reference order: a batch writes each table's rows in one statement.
  tables text[] := ARRAY['sources', 'interpretation_runs', 'entity_schemas', 'entities', 'entity_splits',
                         'observation_moves', 'observations', 'raw_fragments', 'relationships',
                         'relationship_observations', 'entity_merges', 'erasures', 'annotations',
                         'observation_contests'];
  t text;
  n bigint;
  bad jsonb;
  counts jsonb := '{}';
BEGIN
  IF u IS NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'USER_ID_REQUIRED',
      'message', 'import acts for the session''s user: set neotoma.user_id', 'details', '{}'::jsonb));
  END IF;
  SELECT l INTO bad FROM unnest(lines) l
  WHERE jsonb_typeof(l->'row') IS DISTINCT FROM 'object' OR (l->>'table') IS NULL OR NOT (l->>'table' = ANY (tables))
  LIMIT 1;
  IF bad IS NOT NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'VALIDATION_ERROR',
      'message', format('each line must be {"table": one of %s, "row": {…}}; unknown table %L', array_to_string(tables, ', '), bad->>'table'),
      'details', jsonb_build_object('line', left(bad::text, 200))));
  END IF;
  FOREACH t IN ARRAY tables LOOP
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT (jsonb_populate_record(NULL::neotoma.%1$I,
                      (l->''row'') - ''file'' || jsonb_build_object(''user_id'', $1))).*
                    FROM unnest($2) l WHERE l->>''table'' = %2$L ON CONFLICT DO NOTHING', t, t)
      USING u, lines;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF t = 'sources' THEN
      INSERT INTO neotoma.files (user_id, source_id, content)
      SELECT u, (l->'row'->>'id')::uuid, decode(l->'row'->>'file', 'base64') FROM unnest(lines) l
      WHERE l->>'table' = 'sources' AND l->'row'->>'file' IS NOT NULL
      ON CONFLICT DO NOTHING;
    END IF;
    IF n > 0 THEN
      counts := counts || jsonb_build_object(t, n);
    END IF;
  END LOOP;
  RETURN counts;
END $$;


-- contest and reclassify, and the strategy in register_schema's description.
CREATE OR REPLACE FUNCTION neotoma.contest(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('contest', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.contest(jsonb) IS
  'Dispute one observation (observation_id) and say why (reason). The observation stays as it was; the contest is recorded and lowers its confidence rating one step of credibility (B2 becomes B3, down to 6), so fields merged by highest_confidence may choose another value and min_confidence filters may leave it out. The entity''s snapshot is recomputed at once. The same reason again changes nothing. Logged in neotoma.audit_trail. Returns {contest_id, observation_id, entity_id, reason, confidence_before, confidence, contests, already_contested, created_at}.';
REVOKE EXECUTE ON FUNCTION neotoma.contest(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.contest(jsonb) TO neotoma_user;
CREATE OR REPLACE FUNCTION neotoma.reclassify(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('reclassify', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.reclassify(jsonb) IS
  'Move an entity (entity_id) to another type (new_entity_type, with an active schema) and say why (reason), its history kept: the entity of the new type is the one its current snapshot identifies under that type''s identity rules (found or made), and the old entity is merged into it, so every observation, relationship and event counts there and the old id redirects there. Later stores under either type reach it. Logged in neotoma.audit_trail as reclassify. Returns {entity_id, entity_type, previous_entity_id, previous_entity_type, joined_existing, observations_moved, relationships_moved, reason, reclassified_at}.';
REVOKE EXECUTE ON FUNCTION neotoma.reclassify(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.reclassify(jsonb) TO neotoma_user;
COMMENT ON FUNCTION neotoma.register_schema(jsonb) IS
  'Define a new entity type, or a new version of one: its fields (type, required), identity fields, temporal fields and a merge policy per field (last_write, highest_priority, most_specific, merge_array, highest_confidence; tie breaker observed_at or source_priority). A new type is usable by store at once; a new version of an existing type becomes active with activate=true (snapshots are recomputed under the new policies).';
