\ir include/setup.sql
-- Self-hosted Supabase (docs/supabase.md), in a database of its own: the
-- roles and the auth schema as the supabase/postgres image makes them
-- before anything is installed, then CREATE EXTENSION, then calls the way
-- PostgREST makes them: its login role `authenticator` switches to the
-- JWT's role and sets the claims, per transaction. Nothing here runs as a
-- superuser except the setup and the checks that read the catalog.
-- Leaves Supabase's roles in the cluster (roles belong to it): from Postgres
-- 17 on, a grant on a setting made by an extension's script pins its role
-- (DROP ROLE and DROP OWNED fail), and Supabase never drops them either.
-- So the roles may exist already, and every later install in this cluster
-- grants to them, as it would on Supabase. The databases are dropped.
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS neotoma_regress_supabase;
DROP DATABASE IF EXISTS neotoma_regress_supabase_updated;
RESET client_min_messages;
CREATE DATABASE neotoma_regress_supabase;
\c neotoma_regress_supabase
\set VERBOSITY terse

-- Supabase's roles: NOINHERIT, so a role granted to them gives them nothing;
-- service_role bypasses row level security.
DO $$
DECLARE r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['anon', 'authenticated', 'service_role', 'authenticator'] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN
      EXECUTE format('CREATE ROLE %I', r);
    END IF;
  END LOOP;
END $$;
ALTER ROLE anon NOLOGIN NOINHERIT NOBYPASSRLS;
ALTER ROLE authenticated NOLOGIN NOINHERIT NOBYPASSRLS;
ALTER ROLE service_role NOLOGIN NOINHERIT BYPASSRLS;
ALTER ROLE authenticator LOGIN NOINHERIT NOBYPASSRLS;
SET client_min_messages = warning;
GRANT anon, authenticated, service_role TO authenticator;
RESET client_min_messages;
-- Its auth schema: the claims PostgREST sets, read as settings.
CREATE SCHEMA auth;
CREATE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                  (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub'))::uuid $$;
CREATE FUNCTION auth.jwt() RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('request.jwt.claim', true), ''),
                  nullif(current_setting('request.jwt.claims', true), ''))::jsonb $$;
GRANT USAGE ON SCHEMA auth TO anon, authenticated, service_role;
-- Its default privileges: everything created in public is the API roles'.
-- Functions are executable by PUBLIC unless revoked, whatever schema.
GRANT USAGE ON SCHEMA public TO anon, authenticated, service_role;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO anon, authenticated, service_role;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON FUNCTIONS TO anon, authenticated, service_role;

CREATE EXTENSION neotoma;
\ir include/setup.sql

-- authenticated has exactly neotoma_user's privileges, service_role
-- neotoma_user's and neotoma_service's, anon none: on every function,
-- table, column, schema and setting of Neotoma.
\ir include/platform_privileges.sql
-- neotoma_service's own privileges are the user's and its own; so the
-- union of both is what service_role should have.
SELECT (SELECT count(*) FROM pg_temp.privileges('neotoma_user')) > 100 AS users_have_privileges,
       NOT EXISTS (SELECT pg_temp.privileges('authenticated') EXCEPT SELECT pg_temp.privileges('neotoma_user'))
       AND NOT EXISTS (SELECT pg_temp.privileges('neotoma_user') EXCEPT SELECT pg_temp.privileges('authenticated'))
         AS authenticated_is_a_user,
       NOT EXISTS (SELECT pg_temp.privileges('service_role') EXCEPT SELECT pg_temp.privileges('neotoma_service'))
       AND NOT EXISTS (SELECT pg_temp.privileges('neotoma_service') EXCEPT SELECT pg_temp.privileges('service_role'))
         AS service_role_is_a_service,
       (SELECT count(*) FROM pg_temp.privileges('anon')) AS anon_privileges;
SELECT p AS authenticated_may_set FROM pg_temp.privileges('authenticated') p WHERE p LIKE 'set %';
SELECT p AS service_role_may_set FROM pg_temp.privileges('service_role') p WHERE p LIKE 'set %';
-- Neither reaches the tokens, the signing keys or the operators' functions.
SELECT r, has_table_privilege(r, 'neotoma.api_tokens', 'SELECT') AS reads_tokens,
       has_table_privilege(r, 'neotoma.signing_keys', 'SELECT') AS reads_keys,
       has_function_privilege(r, 'neotoma.create_api_token(uuid, text, text, text, double precision, boolean, text, text[])', 'EXECUTE')
         AS creates_tokens,
       has_function_privilege(r, 'neotoma_private.grant_platform_roles()', 'EXECUTE') AS grants_roles
FROM unnest(ARRAY['anon', 'authenticated', 'service_role']) r ORDER BY 1;

-- Two signed-in users, A and B, each in a transaction of their own.
\set user_a '''aaaaaaaa-0000-4000-8000-00000000000a'''
\set user_b '''bbbbbbbb-0000-4000-8000-00000000000b'''
SET SESSION AUTHORIZATION authenticator;
BEGIN;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', json_build_object('sub', :user_a, 'role', 'authenticated')::text, true) IS NOT NULL AS signed_in;
SELECT auth.uid() = neotoma.current_user_id() AS auth_uid_is_neotomas_user, neotoma.current_user_id() = :user_a AS is_a;
SELECT jsonb_array_length(try_action('store', '{"entities": [{"entity_type": "note", "title": "A''s secret"}]}')->'entities') AS a_stored;
SELECT neotoma.store('{"entities": [{"entity_type": "note", "title": "A''s second"}]}') IS NOT NULL AS a_stored_again;
SELECT (neotoma.retrieve_entities('{"entity_type": "note"}')->>'total')::int AS a_sees;
SELECT count(*) AS a_reads_rows FROM neotoma.entities;
COMMIT;
BEGIN;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', json_build_object('sub', :user_b, 'role', 'authenticated')::text, true) IS NOT NULL AS signed_in;
SELECT (neotoma.retrieve_entities('{"entity_type": "note"}')->>'total')::int AS b_sees;
SELECT count(*) AS b_reads_rows FROM neotoma.entities;
SELECT count(*) AS b_reads_observations FROM neotoma.observations;
-- B cannot name A, nor pose as A, nor write a row of A's.
SELECT error_code(try_action('retrieve_entities', jsonb_build_object('user_id', :user_a))) AS b_names_a;
SELECT set_config('neotoma.user_id', :user_a, true);
ROLLBACK;
BEGIN;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', json_build_object('sub', :user_b, 'role', 'authenticated')::text, true) IS NOT NULL AS signed_in;
INSERT INTO neotoma.workspaces (user_id, name) VALUES (:user_a, 'planted');
ROLLBACK;
BEGIN;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', json_build_object('sub', :user_b, 'role', 'authenticated')::text, true) IS NOT NULL AS signed_in;
-- Nor change what all users share.
INSERT INTO neotoma.entity_schemas (user_id, entity_type, schema_version, definition, active)
VALUES (neotoma.global_user_id(), 'note', '9.0', '{}', false);
ROLLBACK;
BEGIN;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', json_build_object('sub', :user_b, 'role', 'authenticated')::text, true) IS NOT NULL AS signed_in;
SELECT error_code(try_action('register_schema', '{"entity_type": "note", "schema_definition": {"fields": {"title": {"type": "string"}}}, "reducer_config": {"merge_policies": {}}}')) AS b_rewrites_global_schema;
SELECT jsonb_array_length(neotoma.store('{"entities": [{"entity_type": "note", "title": "B''s own"}]}')->'entities') AS b_stored;
COMMIT;
-- Signed in with a token that names no user (a service key has no sub):
-- no user, so nothing; and it may not name one.
BEGIN;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"role": "authenticated"}', true) IS NOT NULL AS no_subject;
SELECT error_code(try_action('retrieve_entities', '{}')) AS without_subject,
       error_code(try_action('retrieve_entities', jsonb_build_object('user_id', :user_a))) AS names_a;
SELECT count(*) AS reads_rows FROM neotoma.entities;
COMMIT;

-- anon: nothing at all, with or without claims.
BEGIN;
SET LOCAL ROLE anon;
SELECT set_config('request.jwt.claims', json_build_object('sub', :user_a, 'role', 'anon')::text, true) IS NOT NULL AS claims;
SELECT neotoma.retrieve_entities('{}');
ROLLBACK;
BEGIN;
SET LOCAL ROLE anon;
SELECT count(*) FROM neotoma.entities;
ROLLBACK;
BEGIN;
SET LOCAL ROLE anon;
SELECT neotoma_private.authenticate_token('x');
ROLLBACK;

-- service_role: bypasses row level security, as Supabase intends, and is
-- trusted to act for any user it names; an action still answers only that
-- user's rows.
BEGIN;
SET LOCAL ROLE service_role;
SELECT set_config('request.jwt.claims', '{"role": "service_role"}', true) IS NOT NULL AS service_key;
SELECT count(*) AS service_reads_rows FROM neotoma.entities;
SELECT (neotoma.retrieve_entities(jsonb_build_object('entity_type', 'note', 'user_id', :user_b))->>'total')::int AS for_b,
       (neotoma.retrieve_entities(jsonb_build_object('entity_type', 'note', 'user_id', :user_a))->>'total')::int AS for_a;
SELECT error_code(try_action('retrieve_entities', '{}')) AS names_nobody;
-- Bypassing row level security does not reach what all users share: the
-- global rows are an operator's (a trigger, which fires for it too).
SAVEPOINT shared;
UPDATE neotoma.entity_schemas SET description = 'rewritten' WHERE user_id = neotoma.global_user_id();
ROLLBACK TO SAVEPOINT shared;
INSERT INTO neotoma.entity_type_mappings (user_id, variant, canonical) VALUES (neotoma.global_user_id(), 'planted', 'Project');
ROLLBACK TO SAVEPOINT shared;
DELETE FROM neotoma.entity_type_mappings WHERE user_id = neotoma.global_user_id();
ROLLBACK TO SAVEPOINT shared;
SELECT jsonb_array_length(neotoma.store(jsonb_build_object('user_id', :user_a,
         'entities', jsonb_build_array(jsonb_build_object('entity_type', 'note', 'title', 'for A, by the server'))))->'entities')
  AS stored_for_a;
COMMIT;
BEGIN;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', json_build_object('sub', :user_a, 'role', 'authenticated')::text, true) IS NOT NULL AS signed_in;
SELECT neotoma.retrieve_entities('{"entity_type": "note"}') #> '{entities}' @? '$[*].snapshot.title ? (@ == "for A, by the server")' AS a_sees_it;
COMMIT;
RESET SESSION AUTHORIZATION;

-- Roles created after the extension: a superuser runs grant_platform_roles()
-- (as every upgrade does), and it is idempotent.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA neotoma FROM authenticated;
SELECT has_function_privilege('authenticated', 'neotoma.store(jsonb)', 'EXECUTE') AS before;
SELECT neotoma_private.grant_platform_roles();
SELECT neotoma_private.grant_platform_roles();
SELECT has_function_privilege('authenticated', 'neotoma.store(jsonb)', 'EXECUTE') AS after,
       NOT EXISTS (SELECT pg_temp.privileges('authenticated') EXCEPT SELECT pg_temp.privileges('neotoma_user'))
       AND NOT EXISTS (SELECT pg_temp.privileges('neotoma_user') EXCEPT SELECT pg_temp.privileges('authenticated'))
         AS authenticated_is_a_user;
SELECT neotoma.verify()->'ok' AS verified;

-- A database installed at the oldest release (0.1.0), before Neotoma knew
-- Supabase's roles, and
-- updated: the update grants them as an install does.
CREATE DATABASE neotoma_regress_supabase_updated;
\c neotoma_regress_supabase_updated
SET client_min_messages = warning;
CREATE EXTENSION neotoma VERSION '0.1.0';
ALTER EXTENSION neotoma UPDATE;
RESET client_min_messages;
\ir include/platform_privileges.sql
SELECT NOT EXISTS (SELECT pg_temp.privileges('authenticated') EXCEPT SELECT pg_temp.privileges('neotoma_user'))
       AND NOT EXISTS (SELECT pg_temp.privileges('neotoma_user') EXCEPT SELECT pg_temp.privileges('authenticated'))
         AS authenticated_is_a_user,
       NOT EXISTS (SELECT pg_temp.privileges('service_role') EXCEPT SELECT pg_temp.privileges('neotoma_service'))
       AND NOT EXISTS (SELECT pg_temp.privileges('neotoma_service') EXCEPT SELECT pg_temp.privileges('service_role'))
         AS service_role_is_a_service,
       (SELECT count(*) FROM pg_temp.privileges('anon')) AS anon_privileges;

\c :regress_db
DROP DATABASE neotoma_regress_supabase;
DROP DATABASE neotoma_regress_supabase_updated;
