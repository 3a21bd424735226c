-- 0.11.0 -> 0.12.0: workspaces (docs/design/workspaces.md). Every
-- existing row lands in `default`, whose ids are today's: no id changes and
-- no data is rewritten (a column with a constant default is catalog-only).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

ALTER TABLE neotoma.entities ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE neotoma.sources ADD COLUMN workspace text NOT NULL DEFAULT 'default';
-- The same content stored in two workspaces is two sources.
ALTER TABLE neotoma.sources DROP CONSTRAINT sources_user_id_content_hash_key,
  ADD CONSTRAINT sources_user_id_workspace_content_hash_key UNIQUE (user_id, workspace, content_hash);

-- Derived rows carry their entity's workspace, for listings by workspace.
ALTER TABLE neotoma.timeline_events ADD COLUMN workspace text NOT NULL DEFAULT 'default';
DROP INDEX neotoma.timeline_events_time;
CREATE INDEX timeline_events_time ON neotoma.timeline_events (user_id, workspace, event_timestamp DESC, id);
ALTER TABLE neotoma.entity_snapshots ADD COLUMN workspace text NOT NULL DEFAULT 'default';
DROP INDEX neotoma.entity_snapshots_recent, neotoma.entity_snapshots_recent_any;
CREATE INDEX entity_snapshots_recent ON neotoma.entity_snapshots
  (user_id, workspace, entity_type, last_observation_at DESC NULLS LAST, entity_id);
CREATE INDEX entity_snapshots_recent_any ON neotoma.entity_snapshots
  (user_id, workspace, last_observation_at DESC NULLS LAST, entity_id);

-- A connector's syncs store in the workspace it was connected in.
ALTER TABLE neotoma.connectors ADD COLUMN workspace text NOT NULL DEFAULT 'default';
GRANT SELECT (workspace) ON neotoma.connectors TO neotoma_user;

-- Entities are counted per workspace.
ALTER TABLE neotoma.entity_counts ADD COLUMN workspace text NOT NULL DEFAULT 'default';
CREATE OR REPLACE FUNCTION neotoma._count_entities() RETURNS trigger
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
      INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
      SELECT user_id, entity_type, workspace, count(*) FILTER (WHERE merged_into IS NULL AND deleted_at IS NULL),
             count(*) FILTER (WHERE deleted_at IS NULL)
      FROM new_entities GROUP BY user_id, entity_type, workspace
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  ELSIF TG_OP = 'UPDATE' THEN
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
      SELECT n.user_id, n.entity_type, n.workspace,
             sum((n.merged_into IS NULL AND n.deleted_at IS NULL)::int - (o.merged_into IS NULL AND o.deleted_at IS NULL)::int),
             sum((n.deleted_at IS NULL)::int - (o.deleted_at IS NULL)::int)
      FROM old_entities o JOIN new_entities n ON n.user_id = o.user_id AND n.id = o.id
      WHERE (n.merged_into IS NULL) <> (o.merged_into IS NULL) OR (n.deleted_at IS NULL) <> (o.deleted_at IS NULL)
      GROUP BY n.user_id, n.entity_type, n.workspace
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  ELSE
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
      SELECT user_id, entity_type, workspace, -count(*) FILTER (WHERE merged_into IS NULL AND deleted_at IS NULL),
             -count(*) FILTER (WHERE deleted_at IS NULL)
      FROM old_entities GROUP BY user_id, entity_type, workspace
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
      RETURNING c.user_id, c.entity_type, c.workspace, c.current, c.total)
    INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
    SELECT user_id, entity_type, workspace, sum(current), sum(total) FROM folded
    GROUP BY user_id, entity_type, workspace;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION neotoma._recount_entities() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  WITH scope AS (
    SELECT (SELECT neotoma.current_user_id()) AS user_id,
           (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user) AS everyone),
  cleared AS (
    DELETE FROM neotoma.entity_counts c USING scope s
    WHERE c.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone))
  INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
  SELECT e.user_id, e.entity_type, e.workspace, count(*) FILTER (WHERE e.merged_into IS NULL AND e.deleted_at IS NULL),
         count(*) FILTER (WHERE e.deleted_at IS NULL)
  FROM neotoma.entities e, scope s
  WHERE e.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone)
  GROUP BY e.user_id, e.entity_type, e.workspace;
$$;

-- The views show where each row belongs.
CREATE OR REPLACE VIEW neotoma.entity_overview WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       coalesce(s.snapshot, '{}') AS snapshot,
       coalesce(s.observation_count, 0) AS observation_count,
       s.last_observation_at, s.schema_version,
       e.merged_into, e.merged_at, e.created_at, e.deleted_at, e.deleted_reason, e.workspace
FROM neotoma.entities e
LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id;
COMMENT ON VIEW neotoma.entity_overview IS
  'One row per entity: type, name, current snapshot, observation count; merged_into is set for merged entities, deleted_at and deleted_reason for deleted ones; the workspace it belongs to.';

CREATE OR REPLACE VIEW neotoma.entity_fields WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       f.key AS field, f.value, f.value #>> '{}' AS value_text,
       (p ->> 'observation_id')::uuid AS observation_id,
       (p ->> 'source_id')::uuid AS source_id,
       (p ->> 'observed_at')::timestamptz AS observed_at,
       (p ->> 'source_priority')::integer AS source_priority,
       p ->> 'confidence' AS confidence, e.workspace
FROM neotoma.entities e
JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
CROSS JOIN LATERAL jsonb_each(s.snapshot) AS f
CROSS JOIN LATERAL (SELECT s.field_provenance -> f.key) AS fp(p)
WHERE e.merged_into IS NULL AND e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.entity_fields IS
  'One row per field of each current entity: value (jsonb and text) and its provenance (observation, source, time, priority, confidence rating).';

CREATE OR REPLACE VIEW neotoma.relationship_overview WITH (security_invoker = true) AS
SELECT r.user_id, r.id AS relationship_id, r.relationship_type,
       r.source_entity_id, se.entity_type AS source_entity_type, se.canonical_name AS source_name,
       r.target_entity_id, te.entity_type AS target_entity_type, te.canonical_name AS target_name,
       r.snapshot AS metadata, r.observation_count, r.last_observation_at, r.created_at,
       se.workspace AS source_workspace, te.workspace AS target_workspace
FROM neotoma.relationships r
JOIN neotoma.entities se ON se.user_id = r.user_id AND se.id = r.source_entity_id
JOIN neotoma.entities te ON te.user_id = r.user_id AND te.id = r.target_entity_id
WHERE r.merged_into IS NULL AND r.deleted_at IS NULL AND se.deleted_at IS NULL AND te.deleted_at IS NULL;
COMMENT ON VIEW neotoma.relationship_overview IS
  'Current relationships (not re-keyed by a merge, not deleted, between entities that are not deleted) with the type and name of both entities and the reduced metadata.';

CREATE OR REPLACE VIEW neotoma.timeline WITH (security_invoker = true) AS
SELECT t.user_id, t.id AS event_id, t.event_timestamp, t.event_type,
       t.entity_id, e.entity_type, e.canonical_name,
       t.source_field, t.source_id, t.observation_id, t.properties, t.workspace
FROM neotoma.timeline_events t
JOIN neotoma.entities e ON e.user_id = t.user_id AND e.id = t.entity_id
WHERE e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.timeline IS
  'Timeline events (derived from date fields) with the type and name of their entity.';

-- Export and import carry workspaces; rows exported before are in default.
CREATE OR REPLACE FUNCTION neotoma.export_lines() RETURNS SETOF jsonb
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
  tables text[] := ARRAY['workspaces', 'sources', 'interpretation_runs', 'entity_schemas', 'entities', 'entity_splits',
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
     OR (l->'row' ? 'workspace' AND NOT coalesce(l->'row'->>'workspace' ~ '^[a-z0-9][a-z0-9_-]{0,62}$', false))
  LIMIT 1;
  IF bad IS NOT NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'VALIDATION_ERROR',
      'message', format('each line must be {"table": one of %s, "row": {…}}, a row''s workspace a workspace name: unknown table or bad row in %L', array_to_string(tables, ', '), left(bad::text, 100)),
      'details', jsonb_build_object('line', left(bad::text, 200))));
  END IF;
  FOREACH t IN ARRAY tables LOOP
    -- Rows exported before workspaces existed are in `default`.
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT (jsonb_populate_record(NULL::neotoma.%1$I,
                      ''{"workspace": "default"}'' || (l->''row'') - ''file'' || jsonb_build_object(''user_id'', $1))).*
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
  -- Every workspace rows were imported into is one of the user's (a file
  -- may hold them without its workspaces lines).
  INSERT INTO neotoma.workspaces (user_id, name)
  SELECT u, w FROM (SELECT e.workspace FROM neotoma.entities e WHERE e.user_id = u
                    UNION SELECT s.workspace FROM neotoma.sources s WHERE s.user_id = u) x(w)
  WHERE w <> 'default'
  ON CONFLICT DO NOTHING;
  RETURN counts;
END $$;

-- The workspaces a user has written to or chosen (set_context); `default`
-- needs no row. A read naming a workspace that is neither answers
-- WORKSPACE_NOT_FOUND: a typo must not quietly answer nothing.
CREATE TABLE neotoma.workspaces (
  user_id    uuid        NOT NULL,
  name       text        NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, name)
);
COMMENT ON TABLE neotoma.workspaces IS
  'The workspaces of each user besides default: created by the first write to one, or by set_context.';

-- The workspace an action without `workspace` uses (set_context): one per
-- token of the user (token_id), and one for the user (token_id NULL). In
-- the database, so it holds across stateless requests and gateways.
CREATE TABLE neotoma.contexts (
  user_id           uuid        NOT NULL,
  token_id          uuid,
  workspace         text        NOT NULL CHECK (workspace ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  -- The project entity the context was set from, if it was.
  project_entity_id text,
  set_at            timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (user_id, token_id) REFERENCES neotoma.api_tokens (user_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX contexts_level ON neotoma.contexts (user_id, token_id) NULLS NOT DISTINCT;
COMMENT ON TABLE neotoma.contexts IS
  'The default workspace of each user (token_id NULL) and of each of their tokens (set_context).';

ALTER TABLE neotoma.workspaces ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.workspaces FORCE ROW LEVEL SECURITY;
CREATE POLICY workspaces_own_rows ON neotoma.workspaces USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
ALTER TABLE neotoma.contexts ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.contexts FORCE ROW LEVEL SECURITY;
CREATE POLICY contexts_own_rows ON neotoma.contexts USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.workspaces, neotoma.contexts FROM PUBLIC;
GRANT SELECT, INSERT ON neotoma.workspaces TO neotoma_user;
GRANT SELECT, INSERT, UPDATE, DELETE ON neotoma.contexts TO neotoma_user;

-- The workspace actions.
CREATE OR REPLACE FUNCTION neotoma.list_workspaces(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_workspaces', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_workspaces(jsonb) IS
  'List the workspaces your memory is divided into (`default` first), with how many entities and sources each holds and which one actions without `workspace` use now (in_context; set_context chooses it). Reads take `workspace`: a name, "*" for all, or a list. Returns {workspaces:[{name, entities, entities_including_merged, sources, created_at, in_context}], context:{workspace, from}}.';
REVOKE EXECUTE ON FUNCTION neotoma.list_workspaces(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.list_workspaces(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.set_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('set_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.set_context(jsonb) IS
  'Choose the workspace every later action without `workspace` uses, by name (`workspace`, created if new) or by a project entity (`project_entity_id`: its workspace). It is kept in the memory, so it holds across requests, connections and gateways: for the token you came with (level token, the default with a token), or for you (level user, the default without one, e.g. over stdio). Returns {token, user, effective:{workspace, from}, has_token}.';
REVOKE EXECUTE ON FUNCTION neotoma.set_context(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.set_context(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.get_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_context(jsonb) IS
  'Show which workspace actions without `workspace` use, and why: the context of the token you came with, else yours, else `default`. Returns {token, user, effective:{workspace, from}, has_token}.';
REVOKE EXECUTE ON FUNCTION neotoma.get_context(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.get_context(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.clear_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('clear_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.clear_context(jsonb) IS
  'Forget a context set by set_context (level token or user; by default the one set_context would set), so actions without `workspace` fall back to the next: the user''s context, then `default`. Returns {token, user, effective, has_token, cleared}.';
REVOKE EXECUTE ON FUNCTION neotoma.clear_context(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.clear_context(jsonb) TO neotoma_user;

-- Tokens: authentication answers the token's id too (a new result type:
-- dropped and made again, with the same grants); revoking one forgets its
-- context.
DROP FUNCTION neotoma.authenticate_token(text);
CREATE FUNCTION neotoma.authenticate_token(token_hash text)
RETURNS TABLE (user_id uuid, scope text, expires_at timestamptz, id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT t.user_id, t.scope, t.expires_at, t.id FROM neotoma.api_tokens t
  WHERE t.token_hash = authenticate_token.token_hash AND t.revoked_at IS NULL
    AND (t.expires_at IS NULL OR t.expires_at > now()) $$;

REVOKE EXECUTE ON FUNCTION neotoma.authenticate_token(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.authenticate_token(text) TO neotoma_service;
CREATE OR REPLACE FUNCTION neotoma.revoke_api_token(token_id uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  h text;
BEGIN
  UPDATE neotoma.api_tokens SET revoked_at = now()
  WHERE id = revoke_api_token.token_id AND revoked_at IS NULL
  RETURNING token_hash INTO h;
  IF h IS NULL THEN
    RETURN false;
  END IF;
  -- Its context goes with it.
  DELETE FROM neotoma.contexts c WHERE c.token_id = revoke_api_token.token_id;
  PERFORM pg_notify('neotoma_tokens', h);
  RETURN true;
END $$;

-- The gateway says which token a request came with (whose context applies).
GRANT SET ON PARAMETER neotoma.token_id TO neotoma_service;

ANALYZE neotoma.entities, neotoma.sources, neotoma.timeline_events, neotoma.entity_snapshots, neotoma.entity_counts;
