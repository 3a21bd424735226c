-- 0.15.0 -> 0.16.0: hardening and fidelity (docs/security.md, docs/decisions.md).
-- Inspector sessions live in the database and end with what they were
-- signed in with; revoking an OAuth access token ends its grant;
-- observations have a write order (at one instant the later write wins);
-- imports check entity schemas; entity_overview leaves deleted entities to
-- the new view deleted_entities.
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

-- Observations' write order. Those written before keep 0: they fold as
-- they did, and their snapshots are unchanged (no recomputation).
CREATE SEQUENCE neotoma.observation_write_order;
ALTER TABLE neotoma.observations ADD COLUMN write_order bigint NOT NULL DEFAULT 0;
ALTER TABLE neotoma.observations ALTER COLUMN write_order SET DEFAULT nextval('neotoma.observation_write_order');
GRANT USAGE ON SEQUENCE neotoma.observation_write_order TO neotoma_user;
CREATE OR REPLACE FUNCTION neotoma_private._observations_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  PERFORM neotoma._apply_observations((
    SELECT jsonb_agg(jsonb_build_object(
             'user_id', n.user_id, 'id', n.id, 'entity_id', n.entity_id, 'entity_type', n.entity_type,
             'source_id', n.source_id, 'observed_at', neotoma._micros(n.observed_at),
             'source_priority', n.source_priority, 'specificity_score', n.specificity_score,
             'fields', n.fields, 'confidence', n.confidence, 'write_order', n.write_order)
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
        ORDER BY o.user_id, o.entity_id, o.observed_at DESC, o.write_order DESC, o.id DESC) l
  WHERE e.user_id = l.user_id AND e.id = l.entity_id;
  RETURN NULL;
END $$;

-- Imports check each entity schema as register_schema would.
CREATE FUNCTION neotoma."_schema_row_problem"(
	"row" jsonb /* pgrx::datum::json::JsonB */
) RETURNS TEXT /* core::option::Option<alloc::string::String> */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'schema_row_problem_wrapper';
CREATE OR REPLACE FUNCTION neotoma_private.import_lines(lines jsonb[]) RETURNS jsonb
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
    -- exported before write orders existed keep 0 (folded as they were).
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT (jsonb_populate_record(NULL::neotoma.%1$I,
                      ''{"workspace": "default", "write_order": 0}'' || (l->''row'') - ''file''
                      || jsonb_build_object(''user_id'', $1))).*
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
  -- Observations written here from now on come after the imported ones.
  SELECT max(o.write_order) INTO n FROM neotoma.observations o WHERE o.user_id = u;
  IF n > (SELECT last_value FROM neotoma.observation_write_order) THEN
    PERFORM setval('neotoma.observation_write_order', n);
  END IF;
  -- Every workspace rows were imported into is one of the user's (a file
  -- may hold them without its workspaces lines).
  INSERT INTO neotoma.workspaces (user_id, name)
  SELECT u, w FROM (SELECT e.workspace FROM neotoma.entities e WHERE e.user_id = u
                    UNION SELECT s.workspace FROM neotoma.sources s WHERE s.user_id = u) x(w)
  WHERE w <> 'default'
  ON CONFLICT DO NOTHING;
  RETURN counts;
END $$;

-- Revoking an OAuth access token ends its grant (oauth.sql): the grant's
-- other tokens and its refresh tokens, so the client cannot mint another.
-- Inspector sessions signed in with the token end with it (inspector.sql).
CREATE OR REPLACE FUNCTION neotoma_private.revoke_api_token(token_id uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  t neotoma.api_tokens;
BEGIN
  UPDATE neotoma.api_tokens x SET revoked_at = now()
  WHERE x.id = revoke_api_token.token_id AND x.revoked_at IS NULL
  RETURNING * INTO t;
  IF t.token_hash IS NULL THEN
    RETURN false;
  END IF;
  -- Its context goes with it.
  DELETE FROM neotoma.contexts c WHERE c.token_id = revoke_api_token.token_id;
  DELETE FROM neotoma.inspector_sessions s WHERE s.user_id = t.user_id AND s.token_id = t.id;
  IF t.grant_id IS NOT NULL THEN
    PERFORM neotoma_private._oauth_revoke_grant(t.user_id, t.grant_id);
  END IF;
  PERFORM pg_notify('neotoma_tokens', t.token_hash);
  RETURN true;
END $$;

-- Views: deleted entities leave entity_overview for deleted_entities.
CREATE OR REPLACE VIEW neotoma.entity_overview WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       coalesce(s.snapshot, '{}') AS snapshot,
       coalesce(s.observation_count, 0) AS observation_count,
       s.last_observation_at, s.schema_version,
       e.merged_into, e.merged_at, e.created_at, e.deleted_at, e.deleted_reason, e.workspace
FROM neotoma.entities e
LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
WHERE e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.entity_overview IS
  'One row per entity that is not deleted: type, name, current snapshot, observation count; merged_into is set for merged entities; the workspace it belongs to. Deleted entities: neotoma.deleted_entities.';

-- Deleted entities (delete_entity; restore_entity brings one back), which
-- every other view leaves out.
CREATE VIEW neotoma.deleted_entities WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       coalesce(s.snapshot, '{}') AS snapshot, e.deleted_at, e.deleted_reason, e.workspace
FROM neotoma.entities e
LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
WHERE e.deleted_at IS NOT NULL;
COMMENT ON VIEW neotoma.deleted_entities IS
  'One row per deleted entity: type, name, its snapshot when deleted, when and why it was deleted (restore_entity brings it back).';

GRANT SELECT ON neotoma.deleted_entities TO neotoma_user;

-- The inspector's sessions.
-- Sign-ins of the inspector (the gateway's /inspector pages): a session is
-- the SHA-256 of a random cookie, for a user, bound to what it was signed in
-- with. It ends on the next request, on every gateway of the database, when
-- that ends: its API token revoked or expired, its login removed or its
-- password changed, its user erased; and after an idle period the gateway
-- names. Each user keeps a few sessions at most (opening one more closes
-- the least recently used). Nobody reads the table directly: the functions
-- below are the gateway's (neotoma_service) way in.
CREATE TABLE neotoma.inspector_sessions (
  user_id      uuid        NOT NULL,
  session_hash text        NOT NULL,
  -- Signed in with this API token: the session lives no longer than it.
  token_id     uuid,
  -- Signed in with the user's login (username and password): its
  -- updated_at then; a new password or a removed login ends the session.
  login_at     timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  used_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, session_hash)
);
CREATE UNIQUE INDEX inspector_sessions_hash ON neotoma.inspector_sessions (session_hash);

-- Opens a session for user_id signed in with token_id (an API token), or
-- with the login (by_login), or with a one-time code (neither); keeps the
-- user's `keep` most recently used sessions. Whether it was opened: false
-- when the token or login ended meanwhile.
CREATE FUNCTION neotoma_private.inspector_open(user_id uuid, session_hash text, token_id uuid, by_login boolean,
                                               keep integer, idle_seconds double precision)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  login timestamptz;
BEGIN
  IF token_id IS NOT NULL AND NOT EXISTS (
       SELECT FROM neotoma.api_tokens t
       WHERE t.user_id = inspector_open.user_id AND t.id = inspector_open.token_id
         AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())) THEN
    RETURN false;
  END IF;
  IF by_login THEN
    SELECT l.updated_at INTO login FROM neotoma.logins l WHERE l.user_id = inspector_open.user_id;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
  END IF;
  DELETE FROM neotoma.inspector_sessions s
  WHERE s.user_id = inspector_open.user_id AND s.used_at <= now() - idle_seconds * interval '1 second';
  INSERT INTO neotoma.inspector_sessions (user_id, session_hash, token_id, login_at)
  VALUES (inspector_open.user_id, inspector_open.session_hash, inspector_open.token_id, login);
  DELETE FROM neotoma.inspector_sessions s
  WHERE s.user_id = inspector_open.user_id
    AND s.session_hash NOT IN (SELECT k.session_hash FROM neotoma.inspector_sessions k
                               WHERE k.user_id = inspector_open.user_id
                               ORDER BY k.used_at DESC, k.created_at DESC, k.session_hash
                               LIMIT greatest(keep, 1));
  RETURN true;
END $$;

-- The session a cookie's hash names, if it is still good: {user_id,
-- operator, token_id}, else NULL (and an ended session is forgotten). Using it
-- renews its idle period (written at most once a minute).
CREATE FUNCTION neotoma_private.inspector_session(session_hash text, idle_seconds double precision)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  s neotoma.inspector_sessions;
  scope text;
BEGIN
  SELECT * INTO s FROM neotoma.inspector_sessions x WHERE x.session_hash = inspector_session.session_hash;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF s.token_id IS NOT NULL THEN
    SELECT t.scope INTO scope FROM neotoma.api_tokens t
    WHERE t.user_id = s.user_id AND t.id = s.token_id AND t.revoked_at IS NULL
      AND (t.expires_at IS NULL OR t.expires_at > now());
  END IF;
  IF s.used_at <= now() - idle_seconds * interval '1 second'
     OR (s.token_id IS NOT NULL AND scope IS NULL)
     OR (s.login_at IS NOT NULL
         AND NOT EXISTS (SELECT FROM neotoma.logins l WHERE l.user_id = s.user_id AND l.updated_at = s.login_at)) THEN
    DELETE FROM neotoma.inspector_sessions x WHERE x.user_id = s.user_id AND x.session_hash = s.session_hash;
    RETURN NULL;
  END IF;
  IF s.used_at < now() - interval '1 minute' THEN
    UPDATE neotoma.inspector_sessions x SET used_at = now()
    WHERE x.user_id = s.user_id AND x.session_hash = s.session_hash;
  END IF;
  RETURN jsonb_build_object('user_id', s.user_id, 'operator', coalesce(scope = 'operator', false),
                            'token_id', s.token_id);
END $$;

CREATE FUNCTION neotoma_private.inspector_close(session_hash text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  DELETE FROM neotoma.inspector_sessions x WHERE x.session_hash = inspector_close.session_hash $$;

ALTER TABLE neotoma.inspector_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.inspector_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY inspector_sessions_own_rows ON neotoma.inspector_sessions
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.inspector_sessions FROM PUBLIC, neotoma_user;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA neotoma_private FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma_private.inspector_open(uuid, text, uuid, boolean, integer, double precision),
  neotoma_private.inspector_session(text, double precision),
  neotoma_private.inspector_close(text) TO neotoma_service;
REVOKE ALL ON FUNCTION neotoma."_schema_row_problem"(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma."_schema_row_problem"(jsonb) TO neotoma_user;

-- list_entity_types answers a compact catalogue by default.
COMMENT ON FUNCTION neotoma.list_entity_types(jsonb) IS
  'The entity types you can store, one line each (name, what it is for, the fields that identify it). `keyword` ranks them by name, fields and meaning (''payment'' finds transaction and invoice); `entity_type` gives one type in full (its fields, types, merge policies); `detail: true` gives every type in full.';

-- Search reads a question: the character pairs of scripts written without
-- spaces are searched beside the words (a rewrite of entity_snapshots).
CREATE FUNCTION neotoma."_text_grams"(
	"text" TEXT /* &str */
) RETURNS TEXT[] /* alloc::vec::Vec<alloc::string::String> */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'text_grams_wrapper';
REVOKE ALL ON FUNCTION neotoma."_text_grams"(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma."_text_grams"(text) TO neotoma_user;
-- Row level security lets an index answer a condition before the policy
-- has filtered the rows only if the condition's function is LEAKPROOF (it
-- tells nothing of a row the session may not see). Postgres does not mark
-- `tsvector @@ tsquery` so, though it only answers true or false: through
-- RLS no GIN index of words was ever used, and a search read every entity
-- of the user. neotoma.@@ is the same function (ts_match_vq) marked
-- LEAKPROOF, with a GIN operator class of its own made of the core's
-- tsvector support functions, so the word indexes below serve ordinary
-- roles (docs/decisions.md).
CREATE FUNCTION neotoma._ts_match(tsvector, tsquery) RETURNS boolean
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'ts_match_vq';
REVOKE ALL ON FUNCTION neotoma._ts_match(tsvector, tsquery) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._ts_match(tsvector, tsquery) TO neotoma_user;
CREATE OPERATOR neotoma.@@ (LEFTARG = tsvector, RIGHTARG = tsquery, FUNCTION = neotoma._ts_match,
                            RESTRICT = tsmatchsel, JOIN = tsmatchjoinsel);
CREATE OPERATOR CLASS neotoma.tsvector_rls_ops FOR TYPE tsvector USING gin AS
  OPERATOR 1 neotoma.@@ (tsvector, tsquery),
  FUNCTION 1 gin_cmp_tslexeme(text, text),
  FUNCTION 2 gin_extract_tsvector(tsvector, internal, internal),
  FUNCTION 3 gin_extract_tsquery(tsvector, internal, int2, internal, internal, internal, internal),
  FUNCTION 4 gin_tsquery_consistent(internal, int2, tsvector, int4, internal, internal, internal, internal),
  FUNCTION 5 gin_cmp_prefix(text, text, int2, internal),
  FUNCTION 6 gin_tsquery_triconsistent(internal, int2, tsvector, int4, internal, internal, internal),
  STORAGE text;

-- The word indexes again, in that class (a rewrite of each index).
DROP INDEX neotoma.entity_snapshots_search;
CREATE INDEX entity_snapshots_search ON neotoma.entity_snapshots USING gin (search_vector neotoma.tsvector_rls_ops);
DROP INDEX neotoma.observations_search;
CREATE INDEX observations_search ON neotoma.observations USING gin (neotoma._observation_vector(fields) neotoma.tsvector_rls_ops);
DROP INDEX neotoma.files_search;
CREATE INDEX files_search ON neotoma.files USING gin (search_vector neotoma.tsvector_rls_ops);

-- What search finds in scripts written without spaces between words
-- (Chinese, Japanese, Thai…): the character pairs of a snapshot's text
-- (neotoma._text_grams), so a word inside a sentence is found by the pairs
-- it is made of. Beside search_vector, which has the words of the other
-- scripts. After workspaces.sql's column, so that a fresh install numbers
-- the columns as an updated database does.
ALTER TABLE neotoma.entity_snapshots
  ADD COLUMN search_grams tsvector GENERATED ALWAYS AS (array_to_tsvector(neotoma._text_grams(snapshot::text))) STORED;
CREATE INDEX entity_snapshots_search_grams ON neotoma.entity_snapshots USING gin (search_grams neotoma.tsvector_rls_ops);

-- Statistics follow embeddings and name trigrams too (semantic search
-- planned for an empty table stayed slow after a bulk store).
CREATE OR REPLACE FUNCTION neotoma_private._refresh_statistics() RETURNS integer
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
                             'neotoma.entity_counts', 'neotoma.entity_embeddings',
                             'neotoma.entity_name_trigrams']::regclass[])
      AND pg_relation_size(c.oid) >= 8192::bigint * greatest(2 * c.relpages, 1)
    ORDER BY c.oid
  LOOP
    EXECUTE format('ANALYZE (SKIP_LOCKED) %s', t);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;


SELECT neotoma_private.grant_platform_roles();
