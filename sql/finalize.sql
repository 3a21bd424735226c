-- Runs last in CREATE EXTENSION neotoma, after the Rust functions exist.

-- Creates one SQL function per action of the catalog (and per legacy alias):
--   neotoma.<action>(args jsonb DEFAULT '{}') RETURNS jsonb
-- Each calls the Rust dispatcher with the request's text (parsed there, so
-- that input serde cannot read is a VALIDATION_ERROR, not a crash) and turns
-- an error result into a raised NT001 error carrying the envelope, so the
-- whole action is one transaction.
CREATE FUNCTION neotoma._install_action_functions() RETURNS integer
LANGUAGE plpgsql AS $install$
DECLARE
  a jsonb;
  fn text;
  n integer := 0;
BEGIN
  FOR a IN SELECT value FROM jsonb_array_elements(neotoma.action_catalog()->'actions') LOOP
    FOR fn IN SELECT a->>'name' UNION ALL SELECT jsonb_array_elements_text(a->'aliases') LOOP
      EXECUTE format($f$
        CREATE OR REPLACE FUNCTION neotoma.%I(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
        LANGUAGE plpgsql VOLATILE AS $body$
        DECLARE r jsonb := neotoma._invoke(%L, coalesce(args, 'null')::text);
        BEGIN
          IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
          RETURN r->'ok';
        END $body$$f$, fn, fn);
      EXECUTE format('COMMENT ON FUNCTION neotoma.%I(jsonb) IS %L', fn,
        CASE WHEN fn = a->>'name' THEN a->>'description'
             ELSE format('Legacy name of neotoma.%s: %s', a->>'name', a->>'description') END);
      n := n + 1;
    END LOOP;
  END LOOP;
  RETURN n;
END $install$;

SELECT neotoma._install_action_functions();

-- The seeded entity schemas (global, active).
INSERT INTO neotoma.entity_schemas (user_id, id, entity_type, schema_version, description, definition, active)
SELECT neotoma.global_user_id(), (s->>'id')::uuid, s->>'entity_type', s->>'schema_version',
       s->>'description', s->'definition', true
FROM jsonb_array_elements(neotoma._builtin_schemas()) AS s;

-- Snapshots follow observations: every statement that inserts observations
-- folds them into their entities' snapshots (and identifiers, and timeline
-- events) before it ends. Derived data is written as the extension's owner
-- (SECURITY DEFINER): users insert observations, never snapshots. The rows
-- folded are exactly the statement's new rows, which row level security
-- already checked on insert.
CREATE FUNCTION neotoma._observations_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  PERFORM neotoma._apply_observations((
    SELECT jsonb_agg(jsonb_build_object(
             'user_id', n.user_id, 'id', n.id, 'entity_id', n.entity_id, 'entity_type', n.entity_type,
             'source_id', n.source_id, 'observed_at', neotoma._micros(n.observed_at),
             'source_priority', n.source_priority, 'specificity_score', n.specificity_score,
             'fields', n.fields)
           ORDER BY n.user_id, n.entity_id, n.id)::text
    FROM new_observations n));
  RETURN NULL;
END $$;
CREATE TRIGGER observations_reduce AFTER INSERT ON neotoma.observations
  REFERENCING NEW TABLE AS new_observations
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._observations_inserted();

-- Signed file URLs. Signing checks that the source is a file of the session's
-- user; fetching needs a valid, unexpired signature (the URL is the
-- capability), so both run as the extension's owner.
INSERT INTO neotoma.signing_keys (user_id, id, secret)
VALUES (neotoma.global_user_id(), gen_random_uuid(), neotoma._random_bytes(32));

CREATE FUNCTION neotoma._sign_file(source_id uuid, expires bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT jsonb_build_object('user_id', s.user_id, 'kid', k.id,
           'sig', neotoma._hmac_sha256(k.secret, s.user_id || ':' || s.id || ':' || expires))
  FROM neotoma.sources s,
       LATERAL (SELECT id, secret FROM neotoma.signing_keys
                WHERE retired_at IS NULL AND revoked_at IS NULL ORDER BY created_at DESC, id LIMIT 1) k
  WHERE s.id = _sign_file.source_id AND s.user_id = neotoma.current_user_id() AND s.source_type = 'file' $$;

CREATE FUNCTION neotoma.signed_file(user_id uuid, source_id uuid, expires bigint, kid uuid, sig text)
RETURNS TABLE (mime_type text, original_filename text, content bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT s.mime_type, s.original_filename, f.content
  FROM neotoma.signing_keys k
  JOIN neotoma.sources s ON s.user_id = signed_file.user_id AND s.id = signed_file.source_id
  JOIN neotoma.files f ON f.user_id = s.user_id AND f.source_id = s.id
  WHERE k.id = signed_file.kid AND k.revoked_at IS NULL
    AND signed_file.expires >= extract(epoch FROM clock_timestamp())
    AND neotoma._hmac_sha256_verify(k.secret, signed_file.user_id || ':' || signed_file.source_id || ':' || signed_file.expires, signed_file.sig) $$;

CREATE FUNCTION neotoma.rotate_signing_key(revoke_previous boolean DEFAULT false) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE k uuid := gen_random_uuid();
BEGIN
  UPDATE neotoma.signing_keys SET retired_at = clock_timestamp() WHERE retired_at IS NULL;
  IF revoke_previous THEN
    UPDATE neotoma.signing_keys SET revoked_at = clock_timestamp() WHERE revoked_at IS NULL;
  END IF;
  INSERT INTO neotoma.signing_keys (user_id, id, secret) VALUES (neotoma.global_user_id(), k, neotoma._random_bytes(32));
  RETURN k;
END $$;

-- Row level security: every table, forced so that table owners obey it too.
-- A session sees and writes the rows of neotoma.current_user_id() only.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['sources', 'interpretation_runs', 'entities', 'observations',
                           'entity_snapshots', 'entity_identifiers', 'raw_fragments', 'relationships',
                           'relationship_observations', 'timeline_events', 'entity_merges',
                           'schema_recommendations', 'api_tokens', 'files', 'signing_keys',
                           'graph_write_locks'] LOOP
    EXECUTE format('ALTER TABLE neotoma.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE neotoma.%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY %I ON neotoma.%I USING (user_id = (SELECT neotoma.current_user_id())) '
                   'WITH CHECK (user_id = (SELECT neotoma.current_user_id()))', t || '_own_rows', t);
  END LOOP;
END $$;

-- Schemas: everyone reads the global ones and their own; a user writes only
-- its own variants; the global ones (what every user relies on) only an
-- operator writes.
ALTER TABLE neotoma.entity_schemas ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.entity_schemas FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_schemas_visible ON neotoma.entity_schemas FOR SELECT
  USING (user_id IN (neotoma.global_user_id(), (SELECT neotoma.current_user_id())));
CREATE POLICY entity_schemas_own ON neotoma.entity_schemas
  USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
CREATE POLICY entity_schemas_global ON neotoma.entity_schemas
  USING (user_id = neotoma.global_user_id() AND (SELECT neotoma.session_is_operator()))
  WITH CHECK (user_id = neotoma.global_user_id() AND (SELECT neotoma.session_is_operator()));

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
GRANT SET ON PARAMETER neotoma.user_id TO neotoma_service;
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
GRANT INSERT ON neotoma.sources, neotoma.interpretation_runs, neotoma.entities, neotoma.observations,
  neotoma.raw_fragments, neotoma.entity_schemas, neotoma.relationships, neotoma.relationship_observations,
  neotoma.entity_merges, neotoma.files, neotoma.schema_recommendations, neotoma.graph_write_locks
  TO neotoma_user;
GRANT UPDATE ON neotoma.entities, neotoma.interpretation_runs, neotoma.raw_fragments, neotoma.entity_schemas,
  neotoma.relationships, neotoma.schema_recommendations, neotoma.graph_write_locks TO neotoma_user;

-- Functions: the actions and what they call, for users; the gateway's
-- entry points for services; token and key management for operators;
-- internals for nobody but the owner.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA neotoma FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA neotoma TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._apply_observations(text), neotoma._install_action_functions(),
  neotoma._observations_inserted(), neotoma.authenticate_token(text),
  neotoma.signed_file(uuid, uuid, bigint, uuid, text), neotoma.rotate_signing_key(boolean),
  neotoma.create_api_token(uuid, text, text, text, double precision), neotoma.revoke_api_token(uuid),
  neotoma.list_api_tokens() FROM neotoma_user;
GRANT EXECUTE ON FUNCTION neotoma.authenticate_token(text), neotoma.signed_file(uuid, uuid, bigint, uuid, text)
  TO neotoma_service;
GRANT EXECUTE ON FUNCTION neotoma.rotate_signing_key(boolean),
  neotoma.create_api_token(uuid, text, text, text, double precision), neotoma.revoke_api_token(uuid),
  neotoma.list_api_tokens() TO neotoma_operator;

COMMENT ON FUNCTION neotoma.current_user_id() IS
  'The user this session acts for: neotoma.user_id (settable by neotoma_service), else the JWT claims'' sub, else NULL.';
COMMENT ON SCHEMA neotoma IS
  'Neotoma: a memory for AI agents. One function per action (neotoma.<action>(jsonb)); '
  'see neotoma.action_catalog().';
