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
                           'observation_contests', 'workspaces', 'contexts', 'graph_ids'] LOOP
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

-- Nothing is PUBLIC. Users read every table (row level security picks the
-- rows) and write what the actions write; derived data (snapshots,
-- identifiers, timeline events) only the SECURITY DEFINER functions write.
REVOKE ALL ON SCHEMA neotoma FROM PUBLIC;
GRANT USAGE ON SCHEMA neotoma TO neotoma_user;
REVOKE ALL ON ALL TABLES IN SCHEMA neotoma FROM PUBLIC;
GRANT SELECT ON ALL TABLES IN SCHEMA neotoma TO neotoma_user;
REVOKE ALL ON neotoma.api_tokens, neotoma.signing_keys FROM neotoma_user;
-- Connectors: users read every column but the secret and update a sync's
-- outcome; the extension's owner writes the rest (save_connector).
REVOKE ALL ON neotoma.connectors FROM neotoma_user;
GRANT SELECT (user_id, id, provider, external_id, settings, cursor, status, last_error,
              last_successful_sync, created_at, updated_at, workspace) ON neotoma.connectors TO neotoma_user;
GRANT UPDATE (cursor, status, last_error, last_successful_sync, updated_at) ON neotoma.connectors TO neotoma_user;
GRANT INSERT, UPDATE ON neotoma.sync_runs TO neotoma_user;
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

-- Functions: the actions and what they call, for users; the gateway's
-- entry points for services; token and key management for operators;
-- internals for nobody but the owner.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA neotoma FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA neotoma TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._apply_observations(text), neotoma._observations_inserted(),
  neotoma._observations_changed(), neotoma._relationship_observations_changed(), neotoma._source_created(),
  neotoma._merges_changed(), neotoma._schemas_changed(), neotoma._erasures_changed(), neotoma._splits_changed(),
  neotoma._changes_notify(), neotoma._name_trigrams_changed(), neotoma._name_trigrams_truncated(),
  neotoma._embedding_changed(), neotoma._embeddings_truncated(),
  neotoma.pending_embeddings(text, integer, text[]), neotoma.put_embeddings(text, jsonb),
  neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[]), neotoma.drop_embeddings(text),
  neotoma._count_entities(), neotoma._contests_inserted(),
  neotoma.authenticate_token(text),
  neotoma.signed_file(uuid, uuid, bigint, uuid, text), neotoma.rotate_signing_key(boolean),
  neotoma.create_api_token(uuid, text, text, text, double precision), neotoma.revoke_api_token(uuid),
  neotoma.list_api_tokens(), neotoma.graph_orphan_count(), neotoma.erase_user(uuid, boolean), neotoma.import_lines(jsonb[]) FROM neotoma_user;
GRANT EXECUTE ON FUNCTION neotoma.authenticate_token(text), neotoma.signed_file(uuid, uuid, bigint, uuid, text),
  neotoma.graph_orphan_count(), neotoma.import_lines(jsonb[]),
  neotoma.pending_embeddings(text, integer, text[]), neotoma.put_embeddings(text, jsonb),
  neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[]) TO neotoma_service;
GRANT EXECUTE ON FUNCTION neotoma.rotate_signing_key(boolean),
  neotoma.create_api_token(uuid, text, text, text, double precision), neotoma.revoke_api_token(uuid),
  neotoma.list_api_tokens(), neotoma.erase_user(uuid, boolean), neotoma.drop_embeddings(text) TO neotoma_operator;

COMMENT ON FUNCTION neotoma.current_user_id() IS
  'The user this session acts for: neotoma.user_id (settable by neotoma_service), else the JWT claims'' sub, else NULL.';
COMMENT ON SCHEMA neotoma IS
  'Neotoma: a memory for AI agents. One function per action (neotoma.<action>(jsonb)); '
  'see neotoma.action_catalog().';
