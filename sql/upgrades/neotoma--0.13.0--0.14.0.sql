-- 0.13.0 -> 0.14.0: Supabase (self-hosted) as a target (docs/supabase.md).
-- The SECURITY DEFINER functions move to schema neotoma_private, which no
-- API should expose; those callers name in neotoma keep a SECURITY INVOKER
-- wrapper there. Supabase's NOINHERIT roles get their privileges directly
-- (neotoma_private.grant_platform_roles()), and a role that may set
-- neotoma.user_id is trusted to name users (Supabase's service_role). The
-- global rows of entity_schemas and entity_type_mappings refuse writes by
-- any non-operator, also by roles that bypass row level security.
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

-- SECURITY DEFINER functions (those that run as the extension's owner:
-- triggers writing derived data, tokens, signing keys, embeddings for the
-- gateway) live in neotoma_private, a schema no API should expose (on
-- Supabase, leave it out of PostgREST's schemas), each with a pinned
-- search_path. Those callers name in `neotoma` keep a SECURITY INVOKER
-- wrapper there, granted to the same roles (security.sql).
CREATE SCHEMA neotoma_private;
COMMENT ON SCHEMA neotoma_private IS
  'Neotoma''s SECURITY DEFINER functions: not for an API to expose; call them through schema neotoma.';

ALTER FUNCTION neotoma._recompute_type(text,uuid) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._recompute(uuid,text[]) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._recompute_targets(uuid,text[]) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._recount_entities() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._embeddings_truncated() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._sign_file(uuid,bigint) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._refresh_statistics() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._observations_inserted() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._observations_changed() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._relationship_observations_changed() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._source_created() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._merges_changed() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._schemas_changed() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._erasures_changed() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._splits_changed() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._name_trigrams_changed() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._name_trigrams_truncated() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._embedding_changed() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._count_entities() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma._contests_inserted() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.authenticate_token(text) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.signed_file(uuid,uuid,bigint,uuid,text) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.graph_orphan_count() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.import_lines(jsonb[]) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.pending_embeddings(text,integer,text[]) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.put_embeddings(text,jsonb) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.pending_embeddings_of(text,uuid,xid8,integer,text[]) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.rotate_signing_key(boolean) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.create_api_token(uuid,text,text,text,double precision) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.revoke_api_token(uuid) SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.list_api_tokens() SET SCHEMA neotoma_private;
ALTER FUNCTION neotoma.drop_embeddings(text) SET SCHEMA neotoma_private;

-- It calls one that moved.
CREATE OR REPLACE FUNCTION neotoma_private._contests_inserted() RETURNS trigger
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

-- The wrappers callers name.
CREATE FUNCTION neotoma.authenticate_token(token_hash text)
RETURNS TABLE (user_id uuid, scope text, expires_at timestamptz, id uuid)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM neotoma_private.authenticate_token(token_hash) $$;
CREATE FUNCTION neotoma.create_api_token(user_id uuid, token_hash text, name text DEFAULT NULL,
                                         scope text DEFAULT 'user', expires_in_seconds double precision DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.create_api_token(user_id, token_hash, name, scope, expires_in_seconds) $$;
CREATE FUNCTION neotoma.revoke_api_token(token_id uuid) RETURNS boolean
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.revoke_api_token(token_id) $$;
CREATE FUNCTION neotoma.list_api_tokens() RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.list_api_tokens() $$;
CREATE FUNCTION neotoma.signed_file(user_id uuid, source_id uuid, expires bigint, kid uuid, sig text)
RETURNS TABLE (mime_type text, original_filename text, content bytea)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM neotoma_private.signed_file(user_id, source_id, expires, kid, sig) $$;
CREATE FUNCTION neotoma.rotate_signing_key(revoke_previous boolean DEFAULT false) RETURNS uuid
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.rotate_signing_key(revoke_previous) $$;
CREATE FUNCTION neotoma.graph_orphan_count() RETURNS bigint
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.graph_orphan_count() $$;
CREATE FUNCTION neotoma.pending_embeddings(model text, max_rows integer DEFAULT 64, skip text[] DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.pending_embeddings(model, max_rows, skip) $$;
CREATE FUNCTION neotoma.pending_embeddings_of(model text, user_id uuid, xid xid8, max_rows integer DEFAULT 64,
                                              skip text[] DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.pending_embeddings_of(model, user_id, xid, max_rows, skip) $$;
CREATE FUNCTION neotoma.put_embeddings(model text, rows jsonb) RETURNS integer
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.put_embeddings(model, rows) $$;
CREATE FUNCTION neotoma.drop_embeddings(model text) RETURNS bigint
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.drop_embeddings(model) $$;
CREATE FUNCTION neotoma.import_lines(lines jsonb[]) RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.import_lines(lines) $$;

-- Rows every user shares (user_id = the nil UUID: global schemas, entity
-- type mappings) are written by operators only. Row level security says so
-- for ordinary roles; this trigger says it also to roles that bypass row
-- level security (Supabase's service_role), which fire triggers all the same.
CREATE FUNCTION neotoma._refuse_shared_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF ((TG_OP <> 'INSERT' AND OLD.user_id = neotoma.global_user_id())
      OR (TG_OP <> 'DELETE' AND NEW.user_id = neotoma.global_user_id()))
     AND NOT neotoma.session_is_operator() THEN
    PERFORM neotoma._raise(jsonb_build_object(
      'code', 'FORBIDDEN',
      'message', format('only an operator changes what all users share (the global rows of %s)', TG_TABLE_NAME),
      'details', jsonb_build_object('table', TG_TABLE_NAME, 'operation', TG_OP)));
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE TRIGGER entity_schemas_shared BEFORE INSERT OR UPDATE OR DELETE ON neotoma.entity_schemas
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_shared_write();
CREATE TRIGGER entity_type_mappings_shared BEFORE INSERT OR UPDATE OR DELETE ON neotoma.entity_type_mappings
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_shared_write();

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

-- What moved keeps no grant of its own: the grants below are a fresh
-- install's (security.sql).
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA neotoma_private FROM neotoma_user, neotoma_service, neotoma_operator;
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
  neotoma_private._refresh_statistics() TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._apply_observations(text), neotoma._changes_notify(),
  neotoma.authenticate_token(text),
  neotoma.signed_file(uuid, uuid, bigint, uuid, text), neotoma.rotate_signing_key(boolean),
  neotoma.create_api_token(uuid, text, text, text, double precision), neotoma.revoke_api_token(uuid),
  neotoma.list_api_tokens(), neotoma.graph_orphan_count(), neotoma.erase_user(uuid, boolean), neotoma.import_lines(jsonb[]),
  neotoma.pending_embeddings(text, integer, text[]), neotoma.put_embeddings(text, jsonb),
  neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[]), neotoma.drop_embeddings(text) FROM neotoma_user;
GRANT EXECUTE ON FUNCTION neotoma.authenticate_token(text), neotoma_private.authenticate_token(text),
  neotoma.signed_file(uuid, uuid, bigint, uuid, text), neotoma_private.signed_file(uuid, uuid, bigint, uuid, text),
  neotoma.graph_orphan_count(), neotoma_private.graph_orphan_count(),
  neotoma.import_lines(jsonb[]), neotoma_private.import_lines(jsonb[]),
  neotoma.pending_embeddings(text, integer, text[]), neotoma_private.pending_embeddings(text, integer, text[]),
  neotoma.put_embeddings(text, jsonb), neotoma_private.put_embeddings(text, jsonb),
  neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[]),
  neotoma_private.pending_embeddings_of(text, uuid, xid8, integer, text[]) TO neotoma_service;
GRANT EXECUTE ON FUNCTION neotoma.rotate_signing_key(boolean), neotoma_private.rotate_signing_key(boolean),
  neotoma.create_api_token(uuid, text, text, text, double precision),
  neotoma_private.create_api_token(uuid, text, text, text, double precision),
  neotoma.revoke_api_token(uuid), neotoma_private.revoke_api_token(uuid),
  neotoma.list_api_tokens(), neotoma_private.list_api_tokens(), neotoma.erase_user(uuid, boolean),
  neotoma.drop_embeddings(text), neotoma_private.drop_embeddings(text) TO neotoma_operator;

SELECT neotoma_private.grant_platform_roles();
