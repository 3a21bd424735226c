-- neotoma 0.6.0 -> 0.7.0: deleting and restoring relationships
-- (delete_relationship, restore_relationship: relationship observations of
-- kind deletion / restoration, relationships.deleted_at / deleted_reason);
-- erase (GDPR) and the operators' neotoma.erase_user(): sources and
-- observations give way to erasure alone (neotoma._erasing()), sources keep
-- erased_at when their content was removed, neotoma.erasures keeps counts;
-- list_potential_duplicates and split_entity (neotoma.entity_splits,
-- neotoma.observation_moves: moved observations leave their entity's fold);
-- the change feed (neotoma.changes, filled by triggers, read by
-- list_recent_changes); the view neotoma.audit_trail; neotoma.export_lines()
-- and neotoma.import_lines() (neotoma-mcp export / import). relationship_overview
-- and graph_orphan_count() leave deleted relationships out.
\echo Use "ALTER EXTENSION neotoma UPDATE TO '0.7.0'" to load this file. \quit

ALTER TABLE neotoma.relationships ADD COLUMN deleted_at timestamptz, ADD COLUMN deleted_reason text;
ALTER TABLE neotoma.relationship_observations
  ADD COLUMN kind text NOT NULL DEFAULT 'assertion' CHECK (kind IN ('assertion', 'deletion', 'restoration'));
ALTER TABLE neotoma.sources ADD COLUMN erased_at timestamptz;

CREATE FUNCTION neotoma."_erasing"() RETURNS bool
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'erasing_wrapper';
REVOKE EXECUTE ON FUNCTION neotoma._erasing() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._erasing() TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma._refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF neotoma._erasing() THEN
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  END IF;
  PERFORM neotoma._raise(jsonb_build_object(
    'code', 'VALIDATION_ERROR',
    'message', format('%s is append-only: %s is not allowed', TG_TABLE_NAME, TG_OP),
    'details', jsonb_build_object('table', TG_TABLE_NAME, 'operation', TG_OP)));
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION neotoma.graph_orphan_count() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT count(*) FROM neotoma.entities e
  WHERE e.merged_into IS NULL AND e.deleted_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM neotoma.relationships r
                    JOIN neotoma.entities o ON o.user_id = r.user_id AND o.id = r.target_entity_id
                    WHERE r.user_id = e.user_id AND r.source_entity_id = e.id AND r.merged_into IS NULL AND r.deleted_at IS NULL
                      AND o.deleted_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM neotoma.relationships r
                    JOIN neotoma.entities o ON o.user_id = r.user_id AND o.id = r.source_entity_id
                    WHERE r.user_id = e.user_id AND r.target_entity_id = e.id AND r.merged_into IS NULL AND r.deleted_at IS NULL
                      AND o.deleted_at IS NULL)
$$;

CREATE OR REPLACE VIEW neotoma.relationship_overview WITH (security_invoker = true) AS
SELECT r.user_id, r.id AS relationship_id, r.relationship_type,
       r.source_entity_id, se.entity_type AS source_entity_type, se.canonical_name AS source_name,
       r.target_entity_id, te.entity_type AS target_entity_type, te.canonical_name AS target_name,
       r.snapshot AS metadata, r.observation_count, r.last_observation_at, r.created_at
FROM neotoma.relationships r
JOIN neotoma.entities se ON se.user_id = r.user_id AND se.id = r.source_entity_id
JOIN neotoma.entities te ON te.user_id = r.user_id AND te.id = r.target_entity_id
WHERE r.merged_into IS NULL AND r.deleted_at IS NULL AND se.deleted_at IS NULL AND te.deleted_at IS NULL;
COMMENT ON VIEW neotoma.relationship_overview IS
  'Current relationships (not re-keyed by a merge, not deleted, between entities that are not deleted) with the type and name of both entities and the reduced metadata.';

CREATE FUNCTION neotoma."erase_user"("user_id" uuid, "confirm" bool) RETURNS jsonb
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'erase_user_sql_wrapper';
REVOKE EXECUTE ON FUNCTION neotoma.erase_user(uuid, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.erase_user(uuid, boolean) TO neotoma_operator;

-- One row per erasure: counts only, no content (what was erased is gone).
CREATE TABLE neotoma.erasures (
  user_id     uuid        NOT NULL,
  id          uuid        NOT NULL,
  target_kind text        NOT NULL CHECK (target_kind IN ('entity', 'source', 'user')),
  reason      text,
  counts      jsonb       NOT NULL,
  erased_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, id)
);

-- Splits (split_entity): which observations of an entity count for another
-- from then on. The observations never change: each moved one has a copy
-- (same source, time, fields) under the target, and the original is left
-- out of its entity's fold (neotoma.observation_moves).
CREATE TABLE neotoma.entity_splits (
  user_id            uuid        NOT NULL,
  id                 uuid        NOT NULL,
  from_entity_id     text        NOT NULL,
  to_entity_id       text        NOT NULL,
  created_entity     boolean     NOT NULL,
  reason             text,
  observations_moved bigint      NOT NULL,
  split_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, from_entity_id) REFERENCES neotoma.entities (user_id, id),
  FOREIGN KEY (user_id, to_entity_id) REFERENCES neotoma.entities (user_id, id)
);
CREATE TABLE neotoma.observation_moves (
  user_id        uuid NOT NULL,
  observation_id uuid NOT NULL,
  split_id       uuid NOT NULL,
  to_entity_id   text NOT NULL,
  copy_id        uuid NOT NULL,
  PRIMARY KEY (user_id, observation_id),
  FOREIGN KEY (user_id, split_id) REFERENCES neotoma.entity_splits (user_id, id)
);

-- The change feed: one row per entity, relationship, source or schema a
-- statement changed, appended by the triggers below (as the extension's
-- owner; users read their rows). Rows are read in (xid, seq) order and only
-- below the oldest transaction still running (pg_snapshot_xmin), so a
-- reader paging with a cursor never skips a change that commits late.
CREATE TABLE neotoma.changes (
  user_id         uuid        NOT NULL,
  xid             xid8        NOT NULL DEFAULT pg_current_xact_id(),
  seq             bigint      GENERATED ALWAYS AS IDENTITY,
  changed_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind            text        NOT NULL CHECK (kind IN ('entity', 'relationship', 'source', 'schema', 'erasure')),
  operation       text        NOT NULL,
  entity_id       text,
  entity_type     text,
  relationship_id uuid,
  source_id       uuid,
  PRIMARY KEY (user_id, xid, seq)
);

CREATE FUNCTION neotoma._observations_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation, entity_id, entity_type, source_id)
  SELECT DISTINCT ON (n.user_id, n.entity_id, k.op) n.user_id, 'entity', k.op, n.entity_id, n.entity_type, n.source_id
  FROM new_observations n
  CROSS JOIN LATERAL (SELECT CASE n.kind WHEN 'deletion' THEN 'deleted' WHEN 'restoration' THEN 'restored'
                                         WHEN 'correction' THEN 'corrected' ELSE 'observed' END) k(op)
  ORDER BY n.user_id, n.entity_id, k.op, n.id;
  RETURN NULL;
END $$;
-- A store writes its own rows in the statement that writes its observations
-- (while neotoma._store_folding() is true): cheaper than this trigger.
CREATE TRIGGER observations_changes AFTER INSERT ON neotoma.observations
  REFERENCING NEW TABLE AS new_observations
  FOR EACH STATEMENT WHEN (NOT neotoma._store_folding())
  EXECUTE FUNCTION neotoma._observations_changed();

CREATE FUNCTION neotoma._relationship_observations_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation, relationship_id, source_id)
  SELECT DISTINCT ON (n.user_id, n.relationship_id, k.op) n.user_id, 'relationship', k.op, n.relationship_id, n.source_id
  FROM new_observations n
  CROSS JOIN LATERAL (SELECT CASE n.kind WHEN 'deletion' THEN 'deleted' WHEN 'restoration' THEN 'restored'
                                         ELSE 'asserted' END) k(op)
  ORDER BY n.user_id, n.relationship_id, k.op, n.id;
  RETURN NULL;
END $$;
CREATE TRIGGER relationship_observations_changes AFTER INSERT ON neotoma.relationship_observations
  REFERENCING NEW TABLE AS new_observations
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._relationship_observations_changed();

-- One row per source (a statement inserts one source, at most a few); a
-- structured store writes its source's row itself, with its entities'.
CREATE FUNCTION neotoma._source_created() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation, source_id) VALUES (NEW.user_id, 'source', 'created', NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER sources_changes AFTER INSERT ON neotoma.sources
  FOR EACH ROW WHEN (NEW.source_type <> 'structured') EXECUTE FUNCTION neotoma._source_created();

-- A merge changes both entities: the one merged away and its target.
CREATE FUNCTION neotoma._merges_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation, entity_id, entity_type)
  SELECT m.user_id, 'entity', x.op, x.id, e.entity_type
  FROM new_merges m
  CROSS JOIN LATERAL (VALUES ('merged', m.from_entity_id), ('merge_target', m.to_entity_id)) x(op, id)
  JOIN neotoma.entities e ON e.user_id = m.user_id AND e.id = x.id
  ORDER BY m.user_id, m.id, x.op;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_merges_changes AFTER INSERT ON neotoma.entity_merges
  REFERENCING NEW TABLE AS new_merges
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._merges_changed();

-- A user's own schemas (global ones belong to no user's feed).
CREATE FUNCTION neotoma._schemas_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation, entity_type)
  SELECT DISTINCT n.user_id, 'schema', lower(TG_OP), n.entity_type FROM new_schemas n
  WHERE n.user_id <> neotoma.global_user_id();
  RETURN NULL;
END $$;
CREATE TRIGGER entity_schemas_inserted_changes AFTER INSERT ON neotoma.entity_schemas
  REFERENCING NEW TABLE AS new_schemas
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._schemas_changed();
CREATE TRIGGER entity_schemas_updated_changes AFTER UPDATE ON neotoma.entity_schemas
  REFERENCING NEW TABLE AS new_schemas
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._schemas_changed();

-- A split changes both entities: the one split and its target.
CREATE FUNCTION neotoma._splits_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation, entity_id, entity_type)
  SELECT n.user_id, 'entity', x.op, x.id, e.entity_type
  FROM new_splits n
  CROSS JOIN LATERAL (VALUES ('split', n.from_entity_id), ('split_target', n.to_entity_id)) x(op, id)
  JOIN neotoma.entities e ON e.user_id = n.user_id AND e.id = x.id
  ORDER BY n.user_id, n.id, x.op;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_splits_changes AFTER INSERT ON neotoma.entity_splits
  REFERENCING NEW TABLE AS new_splits
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._splits_changed();

CREATE FUNCTION neotoma._erasures_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation)
  SELECT n.user_id, 'erasure', n.target_kind FROM new_erasures n ORDER BY n.user_id, n.id;
  RETURN NULL;
END $$;
CREATE TRIGGER erasures_changes AFTER INSERT ON neotoma.erasures
  REFERENCING NEW TABLE AS new_erasures
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._erasures_changed();

-- Who did what, when and why: every deletion, restoration, correction,
-- merge, split and erasure, newest last. `user_id` is whose memory it is (the
-- user the acting agent's session or token stands for). Corrections list
-- the fields they set, not the values; erasures their counts.
CREATE VIEW neotoma.audit_trail WITH (security_invoker = true) AS
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
SELECT m.user_id, m.merged_at, 'merge_entities', 'entity', m.from_entity_id, e.entity_type, m.merge_reason,
       jsonb_build_object('merge_id', m.id, 'to_entity_id', m.to_entity_id,
                          'observations_moved', m.observations_moved, 'relationships_moved', m.relationships_moved)
FROM neotoma.entity_merges m
JOIN neotoma.entities e ON e.user_id = m.user_id AND e.id = m.from_entity_id
UNION ALL
SELECT sp.user_id, sp.split_at, 'split_entity', 'entity', sp.from_entity_id, e.entity_type, sp.reason,
       jsonb_build_object('split_id', sp.id, 'to_entity_id', sp.to_entity_id,
                          'created_entity', sp.created_entity, 'observations_moved', sp.observations_moved)
FROM neotoma.entity_splits sp
JOIN neotoma.entities e ON e.user_id = sp.user_id AND e.id = sp.from_entity_id
UNION ALL
SELECT x.user_id, x.erased_at, 'erase', x.target_kind, NULL, NULL, x.reason,
       jsonb_build_object('erasure_id', x.id, 'counts', x.counts)
FROM neotoma.erasures x;
COMMENT ON VIEW neotoma.audit_trail IS
  'Every deletion, restoration, correction, merge, split and erasure of the user''s memory: when (at), what (action, target_kind, target_id, target_type), why (reason) and details (ids, corrected field names, erased counts; never erased content).';

-- Export and import (neotoma-mcp export / import): a user's memory as
-- lines {"table", "row"}, in an order where every row's references come
-- before it, each table by key. Derived rows (snapshots, identifiers,
-- events, counts, the change feed) are left out: an import recomputes them.
-- Secrets (connectors, tokens) are not exported.
CREATE FUNCTION neotoma.export_lines() RETURNS SETOF jsonb
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
  ) x ORDER BY x.n, x.k
$$;

-- Replays exported lines into the session's user's memory: every row is
-- written for that user (whatever the file says), nothing that exists is
-- changed (re-importing adds nothing). Answers the rows written per table.
-- For the gateway's role (neotoma-mcp import), which recomputes the
-- snapshots afterwards (neotoma._recompute).
CREATE FUNCTION neotoma.import_lines(lines jsonb[]) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  u uuid := neotoma.current_user_id();
  -- In reference order: a batch writes each table's rows in one statement.
  tables text[] := ARRAY['sources', 'interpretation_runs', 'entity_schemas', 'entities', 'entity_splits',
                         'observation_moves', 'observations', 'raw_fragments', 'relationships',
                         'relationship_observations', 'entity_merges', 'erasures'];
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

ALTER TABLE neotoma.erasures ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.erasures FORCE ROW LEVEL SECURITY;
CREATE POLICY erasures_own_rows ON neotoma.erasures USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
ALTER TABLE neotoma.entity_splits ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.entity_splits FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_splits_own_rows ON neotoma.entity_splits USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
ALTER TABLE neotoma.observation_moves ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.observation_moves FORCE ROW LEVEL SECURITY;
CREATE POLICY observation_moves_own_rows ON neotoma.observation_moves USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
ALTER TABLE neotoma.changes ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.changes FORCE ROW LEVEL SECURITY;
CREATE POLICY changes_own_rows ON neotoma.changes USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.erasures, neotoma.entity_splits, neotoma.observation_moves, neotoma.changes, neotoma.audit_trail FROM PUBLIC;
GRANT SELECT ON neotoma.erasures, neotoma.entity_splits, neotoma.observation_moves, neotoma.changes, neotoma.audit_trail TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._observations_changed(), neotoma._relationship_observations_changed(), neotoma._source_created(), neotoma._merges_changed(), neotoma._schemas_changed(), neotoma._splits_changed(), neotoma._erasures_changed() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION neotoma.export_lines(), neotoma.import_lines(jsonb[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.export_lines() TO neotoma_user;
GRANT EXECUTE ON FUNCTION neotoma.import_lines(jsonb[]) TO neotoma_service;

-- The actions.
CREATE OR REPLACE FUNCTION neotoma.delete_relationship(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('delete_relationship', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.delete_relationship(jsonb) IS
  'Delete the relationship of relationship_type from source_entity_id to target_entity_id: it disappears from list_relationships, traversals, neighborhoods and store''s related_* (include_deleted shows it, with deleted_at and the reason) until restore_relationship brings it back exactly as it was. Nothing is erased: the deletion is an observation of the relationship. The entities stay. Deleting a deleted relationship is an error; an unknown one is NOT_FOUND. Returns {relationship_id, relationship_type, source_entity_id, target_entity_id, deleted, deleted_at, reason, observation_id}.';

CREATE OR REPLACE FUNCTION neotoma.restore_relationship(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('restore_relationship', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.restore_relationship(jsonb) IS
  'Bring back a deleted relationship exactly as it was (recorded as a restoration observation of it). Restoring a relationship that is not deleted is an error. Returns {relationship_id, relationship_type, source_entity_id, target_entity_id, deleted: false, deleted_at: null, reason, observation_id}.';

CREATE OR REPLACE FUNCTION neotoma.erase(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('erase', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.erase(jsonb) IS
  'Erase an entity (entity_id) or a source (source_id) for good, with confirm: true. An entity goes with its observations, relationships, timeline events, raw fragments and merges, and the sources only it came from (sources that also fed other entities lose their stored content and file bytes). A source goes with everything it gave; its entities are recomputed from what other sources say, and erased if nothing else does. Signed file URLs stop working. Unlike delete_entity this cannot be undone; an audit row of counts (no content) stays in neotoma.audit_trail. Returns {erased, erasure_id, erased_at, counts}.';

CREATE OR REPLACE FUNCTION neotoma.list_recent_changes(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_recent_changes', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_recent_changes(jsonb) IS
  'The change feed of this user''s memory: entities observed, corrected, deleted, restored or merged; relationships asserted, deleted or restored; sources created; schemas registered or updated; erasures. Oldest first, in an order that never skips a change: pass the answer''s next_cursor as `since` to read on (polling with it returns nothing until something changes). entity_type keeps entity changes of that type. Returns {changes: [{cursor, kind, operation, entity_id, entity_type, relationship_id, source_id, changed_at}], next_cursor, has_more}.';

CREATE OR REPLACE FUNCTION neotoma.list_potential_duplicates(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_potential_duplicates', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_potential_duplicates(jsonb) IS
  'Pairs of current entities of entity_type that may be the same thing, best first: names (the snapshot''s name or title) whose trigram similarity (as pg_trgm computes it) is at least threshold (default 0.6), or the same normalised identifier (e-mail, phone, …; score 1). Each pair once, with its evidence (which field matched how). Read-only: merge the ones that are duplicates with merge_entities. Returns {pairs: [{entity_id, other_entity_id, name, other_name, score, evidence: [{field, method, score, values}]}], entity_type, threshold, entities_compared, truncated}.';

CREATE OR REPLACE FUNCTION neotoma.split_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('split_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.split_entity(jsonb) IS
  'The inverse of merge_entities: move some observations of entity_id (by observation_ids, or every one from source_ids) to another entity of its type (to_entity_id) or to a new one. The observations themselves never change: copies with the same source, time and fields count for the target, the originals no longer count for entity_id; both snapshots are recomputed; relationships stay with entity_id. Logged in neotoma.audit_trail. Returns {split_id, from_entity_id, to_entity_id, created, observations_moved, split_at, reason}.';

REVOKE EXECUTE ON FUNCTION neotoma.delete_relationship(jsonb), neotoma.restore_relationship(jsonb), neotoma.erase(jsonb), neotoma.list_recent_changes(jsonb), neotoma.list_potential_duplicates(jsonb), neotoma.split_entity(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.delete_relationship(jsonb), neotoma.restore_relationship(jsonb), neotoma.erase(jsonb), neotoma.list_recent_changes(jsonb), neotoma.list_potential_duplicates(jsonb), neotoma.split_entity(jsonb) TO neotoma_user;
