-- The lifecycle of a memory: erasures (the audit rows of what erase
-- removed), the change feed (list_recent_changes) and the audit trail.

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

CREATE FUNCTION neotoma_private._observations_changed() RETURNS trigger
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
  EXECUTE FUNCTION neotoma_private._observations_changed();

CREATE FUNCTION neotoma_private._relationship_observations_changed() RETURNS trigger
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
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._relationship_observations_changed();

-- One row per source (a statement inserts one source, at most a few); a
-- structured store writes its source's row itself, with its entities'.
CREATE FUNCTION neotoma_private._source_created() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation, source_id) VALUES (NEW.user_id, 'source', 'created', NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER sources_changes AFTER INSERT ON neotoma.sources
  FOR EACH ROW WHEN (NEW.source_type <> 'structured') EXECUTE FUNCTION neotoma_private._source_created();

-- A merge changes both entities: the one merged away and its target.
CREATE FUNCTION neotoma_private._merges_changed() RETURNS trigger
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
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._merges_changed();

-- A user's own schemas (global ones belong to no user's feed).
CREATE FUNCTION neotoma_private._schemas_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation, entity_type)
  SELECT DISTINCT n.user_id, 'schema', lower(TG_OP), n.entity_type FROM new_schemas n
  WHERE n.user_id <> neotoma.global_user_id();
  RETURN NULL;
END $$;
CREATE TRIGGER entity_schemas_inserted_changes AFTER INSERT ON neotoma.entity_schemas
  REFERENCING NEW TABLE AS new_schemas
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._schemas_changed();
CREATE TRIGGER entity_schemas_updated_changes AFTER UPDATE ON neotoma.entity_schemas
  REFERENCING NEW TABLE AS new_schemas
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._schemas_changed();

-- A split changes both entities: the one split and its target.
CREATE FUNCTION neotoma_private._splits_changed() RETURNS trigger
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
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._splits_changed();

CREATE FUNCTION neotoma_private._erasures_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.changes (user_id, kind, operation)
  SELECT n.user_id, 'erasure', n.target_kind FROM new_erasures n ORDER BY n.user_id, n.id;
  RETURN NULL;
END $$;
CREATE TRIGGER erasures_changes AFTER INSERT ON neotoma.erasures
  REFERENCING NEW TABLE AS new_erasures
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._erasures_changed();

-- Subscriptions: a transaction that adds to a user's feed says so on the
-- channel neotoma_changes when it commits (NOTIFY is transactional; equal
-- payloads fold into one), as "<user id> <transaction id>". Gateways then
-- read that user's feed as the user, under RLS. Any role that can connect may
-- LISTEN, so the payload carries no content: whose feed grew, and when.
CREATE FUNCTION neotoma._changes_notify() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  PERFORM pg_notify('neotoma_changes', u.user_id::text || ' ' || pg_current_xact_id()::text)
  FROM (SELECT DISTINCT c.user_id FROM new_changes c) u;
  RETURN NULL;
END $$;
CREATE TRIGGER changes_notify AFTER INSERT ON neotoma.changes
  REFERENCING NEW TABLE AS new_changes
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._changes_notify();

-- Calls a token's limits refused (issue 43), as the gateway notes them
-- after the refusal (the refused call's own transaction leaves nothing):
-- the user and token the call came with, when, the action and the limit.
-- At most once a minute per token, action and limit (the gateway's
-- count). The owner reads them in the audit trail; users never write them.
CREATE TABLE neotoma.denied_calls (
  user_id    uuid        NOT NULL,
  id         bigint      GENERATED ALWAYS AS IDENTITY,
  at         timestamptz NOT NULL DEFAULT now(),
  token_id   uuid,
  action     text        NOT NULL CHECK (length(action) <= 100),
  limit_name text        NOT NULL CHECK (limit_name IN ('read_only', 'tools', 'workspaces')),
  PRIMARY KEY (user_id, id)
);
-- The gateway's role notes a refusal for the user and token it set
-- (neotoma.user_id, neotoma.token_id): {action, limit}.
CREATE FUNCTION neotoma_private.note_denied_call(args jsonb) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  INSERT INTO neotoma.denied_calls (user_id, token_id, action, limit_name)
  SELECT neotoma.current_user_id(), neotoma._calling_token(), args ->> 'action', args ->> 'limit'
  WHERE neotoma.current_user_id() IS NOT NULL
  RETURNING jsonb_build_object('id', id) $$;
CREATE FUNCTION neotoma.note_denied_call(args jsonb) RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.note_denied_call(args) $$;

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
JOIN neotoma.observations o ON o.user_id = c.user_id AND o.id = c.observation_id
UNION ALL
SELECT d.user_id, d.at, 'denied', 'action', d.action, NULL, d.limit_name,
       jsonb_build_object('limit', d.limit_name, 'token_id', d.token_id)
FROM neotoma.denied_calls d;
COMMENT ON VIEW neotoma.audit_trail IS
  'Every deletion, restoration, correction, merge, reclassification, split, erasure, annotation and contest of the user''s memory, and every call a token''s limits refused (denied): when (at), what (action, target_kind, target_id, target_type), why (reason) and details (ids, corrected field names, erased counts, notes, the limit and token; never erased content).';

-- Export and import (neotoma-mcp export / import): a user's memory as
-- lines {"table", "row"}, in an order where every row's references come
-- before it, each table by key. Derived rows (snapshots, identifiers,
-- events, counts, the change feed) are left out: an import recomputes them.
-- Secrets (connectors, tokens) are not exported, nor contexts (a
-- client's choice of workspace, not memory).
CREATE FUNCTION neotoma.export_lines() RETURNS SETOF jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT x.line FROM (
    SELECT 0 AS n, w.name AS k, jsonb_build_object('table', 'workspaces', 'row', to_jsonb(w) - 'user_id') AS line
    FROM neotoma.workspaces w WHERE w.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 1, s.id::text, jsonb_build_object('table', 'sources', 'row', to_jsonb(s) - 'user_id'
             || jsonb_build_object('file', translate(encode(f.content, 'base64'), E'\n', '')))
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
    -- (Without valid_during, which an import recomputes from the
    -- assertions: a multirange's text depends on the session's settings.)
    SELECT 9, r.id::text, jsonb_build_object('table', 'relationships', 'row', to_jsonb(r) - 'user_id' - 'valid_during')
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
    UNION ALL
    SELECT 15, lpad(g.id::text, 20, '0'), jsonb_build_object('table', 'graph_ids', 'row', to_jsonb(g) - 'user_id')
    FROM neotoma.graph_ids g WHERE g.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 16, m.variant, jsonb_build_object('table', 'entity_type_mappings', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.entity_type_mappings m WHERE m.user_id = neotoma.current_user_id()
  ) x ORDER BY x.n, x.k
$$;

-- Replays exported lines into the session's user's memory: every row is
-- written for that user (whatever the file says), nothing that exists is
-- changed (re-importing adds nothing). Answers the rows written per table.
-- For the gateway's role (neotoma-mcp import). The snapshots are the fold
-- of the imported observations when it returns: the observations trigger
-- folds them (into their merge targets), and the entities whose
-- observations a split moved, which that fold cannot know, are folded
-- again here (an import folds once, instead of folding and then
-- recomputing every snapshot).
CREATE FUNCTION neotoma_private.import_lines(lines jsonb[]) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  u uuid := neotoma.current_user_id();
  -- In reference order: a batch writes each table's rows in one statement.
  tables text[] := ARRAY['workspaces', 'sources', 'interpretation_runs', 'entity_schemas', 'entities', 'entity_splits',
                         'observation_moves', 'observations', 'raw_fragments', 'relationships',
                         'relationship_observations', 'entity_merges', 'erasures', 'annotations',
                         'observation_contests', 'graph_ids', 'entity_type_mappings'];
  t text;
  n bigint;
  moved text[];
  bad jsonb;
  bad_at bigint;
  problem text;
  counts jsonb := '{}';
BEGIN
  IF u IS NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'USER_ID_REQUIRED',
      'message', 'import acts for the session''s user: set neotoma.user_id', 'details', '{}'::jsonb));
  END IF;
  SELECT l INTO bad FROM unnest(lines) l
  WHERE jsonb_typeof(l->'row') IS DISTINCT FROM 'object' OR (l->>'table') IS NULL OR NOT (l->>'table' = ANY (tables))
     OR (l->'row' ? 'workspace' AND NOT coalesce(l->'row'->>'workspace' ~ '^[a-z0-9][a-z0-9_-]{0,62}$', false))
  LIMIT 1;
  IF bad IS NOT NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'VALIDATION_ERROR',
      'message', format('each line must be {"table": one of %s, "row": {…}}, a row''s workspace a workspace name: unknown table or bad row in %L', array_to_string(tables, ', '), left(bad::text, 100)),
      'details', jsonb_build_object('line', left(bad::text, 200))));
  END IF;
  -- A schema is imported only if register_schema would have accepted it:
  -- one that cannot be read would break the user's every use of its type.
  SELECT u.line_at, neotoma._schema_row_problem(u.l->'row') INTO bad_at, problem
  FROM unnest(lines) WITH ORDINALITY u(l, line_at)
  WHERE u.l->>'table' = 'entity_schemas' AND neotoma._schema_row_problem(u.l->'row') IS NOT NULL
  ORDER BY u.line_at LIMIT 1;
  IF problem IS NOT NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'VALIDATION_ERROR',
      'message', format('line %s of the import is an entity schema that cannot be used: %s', bad_at, problem),
      'details', jsonb_build_object('line', bad_at, 'table', 'entity_schemas')));
  END IF;
  FOREACH t IN ARRAY tables LOOP
    -- Rows exported before workspaces existed are in `default`; observations
    -- exported before write orders existed keep 0 (folded as they were);
    -- a relationship holds always until its assertions say otherwise
    -- (below). The row is read once, in FROM: `(f(…)).*` calls f once per
    -- column.
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT r.*
                    FROM unnest($2) l, LATERAL jsonb_populate_record(jsonb_populate_record(
                           jsonb_populate_record(NULL::neotoma.%1$I,
                                                 ''{"workspace": "default", "write_order": 0, "valid_during": "{(,)}"}''),
                           (l->''row'') - ''valid_during''), jsonb_build_object(''user_id'', $1)) r
                    WHERE l->>''table'' = %2$L ON CONFLICT DO NOTHING', t, t)
      USING u, lines;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF t = 'sources' THEN
      INSERT INTO neotoma.files (user_id, source_id, content)
      SELECT u, (l->'row'->>'id')::uuid, decode(l->'row'->>'file', 'base64') FROM unnest(lines) l
      WHERE l->>'table' = 'sources' AND l->'row'->>'file' IS NOT NULL
      ON CONFLICT DO NOTHING;
    END IF;
    -- When this batch's relationships hold: the union of their assertions'
    -- intervals (what create_relationship keeps, and verify() checks).
    IF t = 'relationship_observations' AND n > 0 THEN
      UPDATE neotoma.relationships r
      SET valid_during = coalesce((SELECT range_agg(tstzrange(o.valid_from, o.valid_to))
                                   FROM neotoma.relationship_observations o
                                   WHERE o.user_id = u AND o.relationship_id = r.id AND o.kind = 'assertion'), '{(,)}')
      WHERE r.user_id = u AND r.id IN (SELECT (l->'row'->>'relationship_id')::uuid FROM unnest(lines) l
                                       WHERE l->>'table' = 'relationship_observations');
    END IF;
    IF n > 0 THEN
      counts := counts || jsonb_build_object(t, n);
    END IF;
  END LOOP;
  -- A moved observation counts for the entity its split moved it to (its
  -- copy, imported too), not for the one it names: the entities of this
  -- batch's moved observations, and of the observations this batch's moves
  -- name, folded again from all their observations.
  SELECT array_agg(DISTINCT o.entity_id ORDER BY o.entity_id) INTO moved
  FROM neotoma.observation_moves m
  JOIN neotoma.observations o ON o.user_id = m.user_id AND o.id = m.observation_id
  WHERE m.user_id = u AND m.observation_id IN (
    SELECT (l->'row'->>'id')::uuid FROM unnest(lines) l WHERE l->>'table' = 'observations'
    UNION ALL
    SELECT (l->'row'->>'observation_id')::uuid FROM unnest(lines) l WHERE l->>'table' = 'observation_moves');
  IF moved IS NOT NULL THEN
    PERFORM neotoma_private._recompute_targets(u, moved);
  END IF;
  -- Observations written here from now on come after the imported ones.
  -- (This batch's lines only, here and below: reading all of the user's
  -- rows on every batch made an import grow with the square of its size.)
  SELECT max((l->'row'->>'write_order')::bigint) INTO n FROM unnest(lines) l
  WHERE l->>'table' = 'observations';
  IF n > (SELECT last_value FROM neotoma.observation_write_order) THEN
    PERFORM setval('neotoma.observation_write_order', n);
  END IF;
  -- Every workspace the batch's entities and sources name is one of the
  -- user's (a file may hold them without its workspaces lines).
  INSERT INTO neotoma.workspaces (user_id, name)
  SELECT DISTINCT u, l->'row'->>'workspace' FROM unnest(lines) l
  WHERE l->>'table' IN ('entities', 'sources') AND l->'row'->>'workspace' <> 'default'
  ON CONFLICT DO NOTHING;
  RETURN counts;
END $$;
CREATE FUNCTION neotoma.import_lines(lines jsonb[]) RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.import_lines(lines) $$;

-- Folds again, from all their observations, the snapshots, identifiers and
-- events of the session's user's entities: the next `how_many` after `after`
-- in id order (all from the start when `after` is NULL). Answers the ids it
-- recomputed, in order (none left: empty), so a caller can go on from the
-- last one. After an import; also repairs what verify() reports.
CREATE FUNCTION neotoma.recompute_snapshots(after text, how_many integer) RETURNS text[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE ids text[];
BEGIN
  SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}') INTO ids FROM (
    SELECT e.id FROM neotoma.entities e
    WHERE e.user_id = neotoma.current_user_id() AND (after IS NULL OR e.id > after)
    ORDER BY e.id LIMIT greatest(how_many, 0)) x;
  IF cardinality(ids) > 0 THEN
    PERFORM neotoma_private._recompute(neotoma.current_user_id(), ids);
  END IF;
  RETURN ids;
END $$;
