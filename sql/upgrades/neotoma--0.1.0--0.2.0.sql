-- neotoma 0.1.0 -> 0.2.0: trust.
--  * who the session acts for is read from settings (neotoma.user_id, the
--    JWT claims), never by calling auth.uid();
--  * roles neotoma_user, neotoma_service, neotoma_operator; nothing PUBLIC;
--    the settings that decide what users reach are SUSET, granted to them;
--  * global schemas are written by operators only; derived data
--    (snapshots, identifiers, timeline events) by SECURITY DEFINER
--    functions only, all with a pinned search_path;
--  * requests reach Rust as text (input serde cannot read is an error
--    envelope, not a crash); tokens have scopes, expiry and notifications;
--    cycle checks lock a row (safe under REPEATABLE READ).
-- An upgraded database equals a fresh 0.2.0 install (tests/upgrade).
\echo Use "ALTER EXTENSION neotoma UPDATE TO '0.2.0'" to load this file. \quit

-- The session's user and operator status, from settings.
CREATE OR REPLACE FUNCTION neotoma.current_user_id() RETURNS uuid
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'current_user_id_wrapper';
CREATE FUNCTION neotoma.session_is_operator() RETURNS bool
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'session_is_operator_wrapper';

-- Microseconds become timestamps exactly, whatever the year.
CREATE OR REPLACE FUNCTION neotoma._from_micros(us bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  -- Whole days and the microseconds of the last day, so that no product
  -- exceeds a double's exact range (interval * bigint multiplies in floating
  -- point and rounds microseconds away from 2255 on).
  SELECT ('1970-01-01'::timestamp + make_interval(days => (us / 86400000000)::int,
                                                 secs => (us % 86400000000) / 1000000.0)) AT TIME ZONE 'UTC' $$;

-- The dispatcher takes the request as text.
DROP FUNCTION neotoma._invoke(text, jsonb);
CREATE FUNCTION neotoma._invoke(action text, args text) RETURNS jsonb
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'invoke_text_wrapper';
CREATE OR REPLACE FUNCTION neotoma._install_action_functions() RETURNS integer
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

-- The trigger hands its rows over as JSON text.
DROP FUNCTION neotoma._apply_observations(jsonb);
CREATE FUNCTION neotoma._apply_observations(batch text) RETURNS void
VOLATILE PARALLEL UNSAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'apply_observation_batch_wrapper';

-- Recomputing snapshots runs as the owner.
CREATE FUNCTION neotoma._recompute(user_id uuid, entity_ids text[]) RETURNS bigint
STRICT VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, neotoma, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'recompute_sql_wrapper';
CREATE FUNCTION neotoma._recompute_type(entity_type text, only_user uuid) RETURNS bigint
VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, neotoma, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'recompute_type_sql_wrapper';
CREATE OR REPLACE FUNCTION neotoma._observations_inserted() RETURNS trigger
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

-- Tokens: scope, expiry, notifications.
ALTER TABLE neotoma.api_tokens
  ADD COLUMN scope text NOT NULL DEFAULT 'user' CHECK (scope IN ('user', 'operator')),
  ADD COLUMN expires_at timestamptz;
DROP FUNCTION neotoma.authenticate_token(text);
DROP FUNCTION neotoma.create_api_token(uuid, text, text);
CREATE FUNCTION neotoma.authenticate_token(token_hash text)
RETURNS TABLE (user_id uuid, scope text, expires_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT t.user_id, t.scope, t.expires_at FROM neotoma.api_tokens t
  WHERE t.token_hash = authenticate_token.token_hash AND t.revoked_at IS NULL
    AND (t.expires_at IS NULL OR t.expires_at > now()) $$;

CREATE FUNCTION neotoma.create_api_token(user_id uuid, token_hash text, name text DEFAULT NULL,
                                         scope text DEFAULT 'user', expires_in_seconds double precision DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  t neotoma.api_tokens;
BEGIN
  IF expires_in_seconds IS NOT NULL AND NOT expires_in_seconds > 0 THEN
    RAISE EXCEPTION 'expires_in_seconds must be positive';
  END IF;
  INSERT INTO neotoma.api_tokens (user_id, id, token_hash, name, scope, expires_at)
  VALUES (create_api_token.user_id, gen_random_uuid(), create_api_token.token_hash, create_api_token.name,
          create_api_token.scope, now() + expires_in_seconds * interval '1 second')
  RETURNING * INTO t;
  PERFORM pg_notify('neotoma_tokens', t.token_hash);
  RETURN jsonb_build_object('id', t.id, 'user_id', t.user_id, 'scope', t.scope,
                            'expires_at', neotoma._iso(t.expires_at));
END $$;

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
  PERFORM pg_notify('neotoma_tokens', h);
  RETURN true;
END $$;

CREATE OR REPLACE FUNCTION neotoma.list_api_tokens() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'user_id', user_id, 'name', name, 'scope', scope,
           'created_at', created_at, 'expires_at', expires_at, 'revoked_at', revoked_at)
           ORDER BY created_at, id), '[]')
  FROM neotoma.api_tokens $$;

-- One row per user and acyclic relationship type, updated by every write
-- that checks for cycles: the row lock serialises those checks, and under
-- REPEATABLE READ a concurrent one fails instead of closing a cycle.
CREATE TABLE neotoma.graph_write_locks (
  user_id           uuid   NOT NULL,
  relationship_type text   NOT NULL,
  writes            bigint NOT NULL,
  PRIMARY KEY (user_id, relationship_type)
);

-- Signed file URLs: pinned search_path.
CREATE OR REPLACE FUNCTION neotoma._sign_file(source_id uuid, expires bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT jsonb_build_object('user_id', s.user_id, 'kid', k.id,
           'sig', neotoma._hmac_sha256(k.secret, s.user_id || ':' || s.id || ':' || expires))
  FROM neotoma.sources s,
       LATERAL (SELECT id, secret FROM neotoma.signing_keys
                WHERE retired_at IS NULL AND revoked_at IS NULL ORDER BY created_at DESC, id LIMIT 1) k
  WHERE s.id = _sign_file.source_id AND s.user_id = neotoma.current_user_id() AND s.source_type = 'file' $$;

CREATE OR REPLACE FUNCTION neotoma.signed_file(user_id uuid, source_id uuid, expires bigint, kid uuid, sig text)
RETURNS TABLE (mime_type text, original_filename text, content bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT s.mime_type, s.original_filename, f.content
  FROM neotoma.signing_keys k
  JOIN neotoma.sources s ON s.user_id = signed_file.user_id AND s.id = signed_file.source_id
  JOIN neotoma.files f ON f.user_id = s.user_id AND f.source_id = s.id
  WHERE k.id = signed_file.kid AND k.revoked_at IS NULL
    AND signed_file.expires >= extract(epoch FROM clock_timestamp())
    AND neotoma._hmac_sha256_verify(k.secret, signed_file.user_id || ':' || signed_file.source_id || ':' || signed_file.expires, signed_file.sig) $$;

CREATE OR REPLACE FUNCTION neotoma.rotate_signing_key(revoke_previous boolean DEFAULT false) RETURNS uuid
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

-- Row level security of the new table, and the schema registry's policies.
ALTER TABLE neotoma.graph_write_locks ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.graph_write_locks FORCE ROW LEVEL SECURITY;
CREATE POLICY graph_write_locks_own_rows ON neotoma.graph_write_locks USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
DROP POLICY entity_schemas_visible ON neotoma.entity_schemas;
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
