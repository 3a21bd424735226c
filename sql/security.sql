-- Installed last by CREATE EXTENSION neotoma, once every table and
-- function exists: row level security, roles, grants.

-- Row level security: every table, forced so that table owners obey it too.
-- A session sees and writes the rows of neotoma.current_user_id() only.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['sources', 'interpretation_runs', 'entities', 'observations',
                           'entity_snapshots', 'entity_identifiers', 'raw_fragments', 'relationships',
                           'relationship_observations', 'timeline_events', 'entity_merges',
                           'schema_recommendations', 'api_tokens', 'files', 'signing_keys',
                           'graph_write_locks', 'entity_counts', 'connectors', 'sync_runs', 'erasures', 'changes', 'entity_splits',
                           'observation_moves', 'entity_name_trigrams', 'entity_embeddings', 'annotations',
                           'observation_contests', 'workspaces', 'contexts', 'graph_ids', 'logins', 'login_codes',
                           'oauth_grants', 'oauth_refresh_tokens', 'inspector_sessions', 'embedding_lists', 'embedding_list_codes',
                           'embedding_list_builds', 'common_lexemes', 'common_name_trigrams', 'timeline_counts', 'denied_calls',
                           'posted_lexemes', 'word_postings'] LOOP
    EXECUTE format('ALTER TABLE neotoma.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE neotoma.%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY %I ON neotoma.%I USING (user_id = (SELECT neotoma.current_user_id())) '
                   'WITH CHECK (user_id = (SELECT neotoma.current_user_id()))', t || '_own_rows', t);
  END LOOP;
END $$;

-- Roles (cluster-wide, so created once and kept if the extension is
-- dropped). See docs/security.md.
--   neotoma_user      calls the actions and reads the views, for the user its
--                     session establishes (JWT claims); never names a user.
--   neotoma_service   also trusted to name the user it acts for (sets
--                     neotoma.user_id, passes user_id): the MCP gateway's role.
--   neotoma_operator  also changes what all users share: global schemas,
--                     settings, tokens, signing keys.
--   neotoma_router    a router's role on a partition (docs/scale-out.md):
--                     runs actions for the user the router names, as an
--                     operator when the router's caller is one
--                     (neotoma.routed).
-- On Supabase, `authenticated` becomes a neotoma_user; `anon` gets nothing.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_user') THEN
    CREATE ROLE neotoma_user NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_service') THEN
    CREATE ROLE neotoma_service NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_operator') THEN
    CREATE ROLE neotoma_operator NOLOGIN;
  END IF;
  IF NOT pg_has_role('neotoma_service', 'neotoma_user', 'MEMBER') THEN
    GRANT neotoma_user TO neotoma_service;
  END IF;
  IF NOT pg_has_role('neotoma_operator', 'neotoma_service', 'MEMBER') THEN
    GRANT neotoma_service TO neotoma_operator;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_router') THEN
    CREATE ROLE neotoma_router NOLOGIN;
  END IF;
  IF NOT pg_has_role('neotoma_router', 'neotoma_service', 'MEMBER') THEN
    GRANT neotoma_service TO neotoma_router;
  END IF;
  -- (Supabase makes authenticated NOINHERIT, so this membership alone gives
  -- it nothing: grant_platform_roles() below grants it directly.)
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'authenticated')
     AND NOT pg_has_role('authenticated', 'neotoma_user', 'MEMBER') THEN
    GRANT neotoma_user TO authenticated;
  END IF;
END $$;

-- Who may set which setting (superusers may set all).
GRANT SET ON PARAMETER neotoma.user_id, neotoma.token_id TO neotoma_service;
GRANT SET ON PARAMETER neotoma.operator, neotoma.max_file_bytes, neotoma.interpretation_quota,
  neotoma.interpret_max_rows, neotoma.auto_promote, neotoma.auto_promote_min_consistency,
  neotoma.auto_promote_min_sources, neotoma.auto_promote_min_occurrences TO neotoma_operator;
-- A router passes on whether its caller acts as an operator, either way.
GRANT SET ON PARAMETER neotoma.operator TO neotoma_router;

-- Nothing is PUBLIC. Users read every table (row level security picks the
-- rows) and write what the actions write; derived data (snapshots,
-- identifiers, timeline events) only the SECURITY DEFINER functions write.
REVOKE ALL ON SCHEMA neotoma FROM PUBLIC;
GRANT USAGE ON SCHEMA neotoma TO neotoma_user;
REVOKE ALL ON ALL TABLES IN SCHEMA neotoma FROM PUBLIC;
GRANT SELECT ON ALL TABLES IN SCHEMA neotoma TO neotoma_user;
REVOKE ALL ON neotoma.api_tokens, neotoma.signing_keys FROM neotoma_user;
-- OAuth's clients, logins, grants and refresh tokens: only through the
-- functions of oauth.sql.
REVOKE ALL ON neotoma.oauth_clients, neotoma.logins, neotoma.login_codes, neotoma.oauth_grants,
  neotoma.oauth_refresh_tokens FROM neotoma_user;
-- The inspector's sessions: only through the functions of inspector.sql.
REVOKE ALL ON neotoma.inspector_sessions FROM neotoma_user;
-- Connectors: users read every column but the secret and update a sync's
-- outcome; the extension's owner writes the rest (save_connector).
REVOKE ALL ON neotoma.connectors FROM neotoma_user;
GRANT SELECT (user_id, id, provider, external_id, settings, cursor, status, last_error,
              last_successful_sync, created_at, updated_at, workspace) ON neotoma.connectors TO neotoma_user;
GRANT UPDATE (cursor, status, last_error, last_successful_sync, updated_at) ON neotoma.connectors TO neotoma_user;
GRANT INSERT, UPDATE ON neotoma.sync_runs TO neotoma_user;
-- Observations take their write order from a sequence (a store reserves
-- its own, for the fold it makes before inserting them).
GRANT USAGE ON SEQUENCE neotoma.observation_write_order TO neotoma_user;
GRANT INSERT ON neotoma.sources, neotoma.interpretation_runs, neotoma.entities, neotoma.observations,
  neotoma.raw_fragments, neotoma.entity_schemas, neotoma.relationships, neotoma.relationship_observations,
  neotoma.entity_merges, neotoma.files, neotoma.schema_recommendations, neotoma.graph_write_locks,
  neotoma.annotations, neotoma.observation_contests, neotoma.workspaces, neotoma.contexts
  TO neotoma_user;
GRANT UPDATE, DELETE ON neotoma.contexts TO neotoma_user;
GRANT INSERT, UPDATE ON neotoma.graph_ids TO neotoma_user;
GRANT INSERT, UPDATE, DELETE ON neotoma.entity_type_mappings TO neotoma_user;
GRANT UPDATE ON neotoma.entities, neotoma.interpretation_runs, neotoma.raw_fragments, neotoma.entity_schemas,
  neotoma.relationships, neotoma.schema_recommendations, neotoma.graph_write_locks TO neotoma_user;

-- Platforms whose API roles are NOINHERIT (Supabase: anon, authenticated,
-- service_role) give such a role none of neotoma_user's privileges by
-- granting it neotoma_user. So the platform's roles get them directly:
-- authenticated neotoma_user's, service_role neotoma_user's and
-- neotoma_service's (it acts for any user, as Supabase intends), anon none.
-- Each run starts them from nothing on Neotoma's objects and copies the
-- current grants, so it is run at install, at the end of every upgrade, and
-- by a superuser after creating these roles later (docs/supabase.md).
-- Answers the roles it granted to.
-- A setting's name as SQL names it: each dot-separated part quoted as needed.
CREATE FUNCTION neotoma_private._parameter_name(name text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT string_agg(quote_ident(part), '.' ORDER BY n) FROM unnest(string_to_array(name, '.')) WITH ORDINALITY u(part, n) $$;
REVOKE ALL ON FUNCTION neotoma_private._parameter_name(text) FROM PUBLIC;

CREATE FUNCTION neotoma_private.grant_platform_roles() RETURNS text[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  schemas oid[] := ARRAY['neotoma'::regnamespace, 'neotoma_private'::regnamespace];
  target text;
  sources oid[];
  granted text[] := '{}';
  r record;
BEGIN
  FOR target, sources IN
    SELECT p.role, array_agg(s.oid) FILTER (WHERE s.oid IS NOT NULL)
    FROM (VALUES ('anon', NULL), ('authenticated', 'neotoma_user'),
                 ('service_role', 'neotoma_user'), ('service_role', 'neotoma_service')) p(role, source)
    JOIN pg_roles t ON t.rolname = p.role
    LEFT JOIN pg_roles s ON s.rolname = p.source
    GROUP BY p.role ORDER BY p.role
  LOOP
    EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA neotoma, neotoma_private FROM %I', target);
    EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA neotoma, neotoma_private FROM %I', target);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA neotoma, neotoma_private FROM %I', target);
    EXECUTE format('REVOKE ALL ON SCHEMA neotoma, neotoma_private FROM %I', target);
    FOR r IN SELECT DISTINCT neotoma_private._parameter_name(p.parname) AS parname
             FROM pg_parameter_acl p, aclexplode(p.paracl) a
             WHERE p.parname LIKE 'neotoma.%' AND a.grantee = target::regrole LOOP
      EXECUTE format('REVOKE ALL ON PARAMETER %s FROM %I', r.parname, target);
    END LOOP;
    CONTINUE WHEN sources IS NULL;
    FOR r IN SELECT DISTINCT n.nspname, a.privilege_type FROM pg_namespace n, aclexplode(n.nspacl) a
             WHERE n.oid = ANY (schemas) AND a.grantee = ANY (sources) ORDER BY 1, 2 LOOP
      EXECUTE format('GRANT %s ON SCHEMA %I TO %I', r.privilege_type, r.nspname, target);
    END LOOP;
    FOR r IN SELECT DISTINCT c.oid::regclass::text AS rel, c.relkind = 'S' AS seq, a.privilege_type
             FROM pg_class c, aclexplode(c.relacl) a
             WHERE c.relnamespace = ANY (schemas) AND a.grantee = ANY (sources) ORDER BY 1, 3 LOOP
      EXECUTE format('GRANT %s ON %s %s TO %I', r.privilege_type,
                     CASE WHEN r.seq THEN 'SEQUENCE' ELSE 'TABLE' END, r.rel, target);
    END LOOP;
    FOR r IN SELECT DISTINCT c.oid::regclass::text AS rel, t.attname, a.privilege_type
             FROM pg_attribute t JOIN pg_class c ON c.oid = t.attrelid, aclexplode(t.attacl) a
             WHERE c.relnamespace = ANY (schemas) AND NOT t.attisdropped AND a.grantee = ANY (sources)
             ORDER BY 1, 2, 3 LOOP
      EXECUTE format('GRANT %s (%I) ON TABLE %s TO %I', r.privilege_type, r.attname, r.rel, target);
    END LOOP;
    FOR r IN SELECT DISTINCT p.oid::regprocedure::text AS fn FROM pg_proc p, aclexplode(p.proacl) a
             WHERE p.pronamespace = ANY (schemas) AND a.grantee = ANY (sources) ORDER BY 1 LOOP
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', r.fn, target);
    END LOOP;
    FOR r IN SELECT DISTINCT neotoma_private._parameter_name(p.parname) AS parname, a.privilege_type
             FROM pg_parameter_acl p, aclexplode(p.paracl) a
             WHERE p.parname LIKE 'neotoma.%' AND a.grantee = ANY (sources) ORDER BY 1, 2 LOOP
      EXECUTE format('GRANT %s ON PARAMETER %s TO %I', r.privilege_type, r.parname, target);
    END LOOP;
    granted := granted || target;
  END LOOP;
  RETURN granted;
END $$;
REVOKE ALL ON FUNCTION neotoma_private.grant_platform_roles() FROM PUBLIC;
COMMENT ON FUNCTION neotoma_private.grant_platform_roles() IS
  'Gives Supabase''s NOINHERIT roles their privileges on Neotoma directly: authenticated neotoma_user''s, '
  'service_role neotoma_user''s and neotoma_service''s, anon none. Run by a superuser after creating them.';

-- What a gateway asks once when it starts and at each readiness check, so
-- that it reads no catalog itself: the version of the installed SQL (the
-- library's, in action_catalog(), is newer until ALTER EXTENSION neotoma
-- UPDATE), whether its role may act as an operator, whether it may say
-- which token a call came with (set neotoma.token_id), and whether the
-- database is a router (docs/scale-out.md: its upkeep runs on the
-- partitions).
CREATE FUNCTION neotoma.gateway_handshake() RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object(
    'extension_version', (SELECT extversion FROM pg_extension WHERE extname = 'neotoma'),
    'operator', pg_has_role('neotoma_operator', 'USAGE'),
    'token_context', has_parameter_privilege('neotoma.token_id', 'SET'),
    'router', EXISTS (SELECT FROM pg_extension WHERE extname = 'neotoma_router')) $$;

-- Functions: the actions and what they call, for users; the gateway's
-- entry points for services; token and key management for operators;
-- internals for nobody but the owner. The SECURITY DEFINER functions are in
-- neotoma_private (base.sql); a caller reaches those its role may call,
-- through their wrappers in neotoma or (the library) directly.
REVOKE ALL ON SCHEMA neotoma_private FROM PUBLIC;
GRANT USAGE ON SCHEMA neotoma_private TO neotoma_user;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA neotoma, neotoma_private FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA neotoma TO neotoma_user;
GRANT EXECUTE ON FUNCTION neotoma_private._recompute(uuid, text[]), neotoma_private._recompute_type(text, uuid),
  neotoma_private._sign_file(uuid, bigint), neotoma_private._recount_entities(),
  neotoma_private._recount_events(), neotoma_private._refresh_statistics(),
  neotoma_private._written_with(uuid) TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._apply_observations(text), neotoma._changes_notify(),
  neotoma.authenticate_token(text), neotoma.touch_api_token(text),
  neotoma.signed_file(uuid, uuid, bigint, uuid, text), neotoma.rotate_signing_key(boolean),
  neotoma.create_api_token(uuid, text, text, text, double precision, boolean, text, text[]), neotoma.revoke_api_token(uuid),
  neotoma.list_api_tokens(), neotoma.graph_orphan_count(), neotoma.erase_user(uuid, boolean), neotoma.import_lines(jsonb[]),
  neotoma.pending_embeddings(text, integer, text[]), neotoma.put_embeddings(text, jsonb),
  neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[]), neotoma.drop_embeddings(text),
  neotoma.maintain_embedding_lists(integer, integer), neotoma.routed(uuid, boolean, jsonb, text, text),
  neotoma.note_denied_call(jsonb) FROM neotoma_user;
GRANT EXECUTE ON FUNCTION neotoma.routed(uuid, boolean, jsonb, text, text) TO neotoma_router;
GRANT EXECUTE ON FUNCTION neotoma.authenticate_token(text), neotoma_private.authenticate_token(text),
  neotoma.touch_api_token(text), neotoma_private.touch_api_token(text),
  neotoma.note_denied_call(jsonb), neotoma_private.note_denied_call(jsonb),
  neotoma.signed_file(uuid, uuid, bigint, uuid, text), neotoma_private.signed_file(uuid, uuid, bigint, uuid, text),
  neotoma.graph_orphan_count(), neotoma_private.graph_orphan_count(),
  neotoma.import_lines(jsonb[]), neotoma_private.import_lines(jsonb[]),
  neotoma.pending_embeddings(text, integer, text[]), neotoma_private.pending_embeddings(text, integer, text[]),
  neotoma.put_embeddings(text, jsonb), neotoma_private.put_embeddings(text, jsonb),
  neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[]),
  neotoma_private.pending_embeddings_of(text, uuid, xid8, integer, text[]),
  neotoma.maintain_embedding_lists(integer, integer), neotoma_private.maintain_embedding_lists(integer, integer)
  TO neotoma_service;
GRANT EXECUTE ON FUNCTION neotoma_private.index_embeddings(integer) TO neotoma_user;
GRANT EXECUTE ON FUNCTION neotoma.rotate_signing_key(boolean), neotoma_private.rotate_signing_key(boolean),
  neotoma.create_api_token(uuid, text, text, text, double precision, boolean, text, text[]),
  neotoma_private.create_api_token(uuid, text, text, text, double precision, boolean, text, text[]),
  neotoma.revoke_api_token(uuid), neotoma_private.revoke_api_token(uuid),
  neotoma.list_api_tokens(), neotoma_private.list_api_tokens(), neotoma.erase_user(uuid, boolean),
  neotoma.drop_embeddings(text), neotoma_private.drop_embeddings(text) TO neotoma_operator;
-- A router rotates its partitions' keys with its own (files.sql).
GRANT EXECUTE ON FUNCTION neotoma.rotate_signing_key(boolean), neotoma_private.rotate_signing_key(boolean)
  TO neotoma_router;
-- A router deletes the old copy of a user it moved to another partition.
GRANT EXECUTE ON FUNCTION neotoma.erase_user(uuid, boolean) TO neotoma_router;

-- OAuth (oauth.sql): the gateway runs the flow; operators set up logins.
GRANT EXECUTE ON FUNCTION neotoma_private.oauth_register_client(text, jsonb, text),
  neotoma_private.oauth_client(text), neotoma_private.oauth_login(text),
  neotoma_private.oauth_use_login_code(text),
  neotoma_private.oauth_authorize(uuid, text, text, text, text, text, text),
  neotoma_private.oauth_exchange_code(text, text, text, text, text, text, double precision, text,
                                      double precision, text),
  neotoma_private.oauth_refresh(text, text, text, text, double precision, text, double precision, text),
  neotoma_private.oauth_revoke(text, text) TO neotoma_service;
GRANT EXECUTE ON FUNCTION neotoma_private.oauth_set_login(uuid, text, text),
  neotoma_private.oauth_create_login_code(uuid, text, double precision),
  neotoma_private.oauth_remove_login(uuid) TO neotoma_operator;
-- The inspector's sessions (inspector.sql): the gateway's.
GRANT EXECUTE ON FUNCTION neotoma_private.inspector_open(uuid, text, uuid, boolean, integer, double precision),
  neotoma_private.inspector_session(text, double precision),
  neotoma_private.inspector_close(text) TO neotoma_service;

COMMENT ON FUNCTION neotoma.current_user_id() IS
  'The user this session acts for: neotoma.user_id (settable by neotoma_service), else the JWT claims'' sub, else NULL.';
COMMENT ON SCHEMA neotoma IS
  'Neotoma: a memory for AI agents. One function per action (neotoma.<action>(jsonb)); '
  'see neotoma.action_catalog().';

SELECT neotoma_private.grant_platform_roles();
