-- Who may do what: roles, grants, SECURITY DEFINER functions, shared rows.
-- Not in one transaction: most refusals here are errors at top level. It
-- leaves a note of user 5ec..., user a's person variant and a new global
-- person version; no other test reads them.
\ir include/setup.sql

\set SHOW_CONTEXT never
\set VERBOSITY terse

-- Every SECURITY DEFINER function pins its search_path and is executable by
-- named roles only, never PUBLIC (each with the reason it is a definer).
SELECT p.proname,
       'search_path=pg_catalog, neotoma, pg_temp' = ANY (p.proconfig) AS pinned_search_path,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_can_execute,
       (SELECT string_agg(r.rolname, ',' ORDER BY r.rolname) FROM pg_roles r
        WHERE r.rolname IN ('neotoma_user', 'neotoma_service', 'neotoma_operator')
          AND has_function_privilege(r.oid, p.oid, 'EXECUTE')) AS executable_by
FROM pg_proc p WHERE p.pronamespace = 'neotoma_private'::regnamespace AND p.prosecdef
ORDER BY 1;

-- Nothing in the schema is PUBLIC: no function, table or view, not the schema.
SELECT count(*) AS public_functions FROM pg_proc p
WHERE p.pronamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
  AND has_function_privilege('public', p.oid, 'EXECUTE');
SELECT count(*) AS public_relations FROM pg_class c
WHERE c.relnamespace = 'neotoma'::regnamespace AND c.relkind IN ('r', 'v')
  AND has_table_privilege('public', c.oid, 'SELECT,INSERT,UPDATE,DELETE');
SELECT has_schema_privilege('public', 'neotoma', 'USAGE') AS public_uses_schema;
SELECT has_schema_privilege('public', 'neotoma_private', 'USAGE') AS public_uses_private_schema;
-- SECURITY DEFINER functions are in neotoma_private only (a schema no API
-- exposes): none elsewhere.
SELECT p.oid::regprocedure AS definer_outside_private FROM pg_proc p
WHERE p.prosecdef AND p.pronamespace <> 'neotoma_private'::regnamespace
  AND EXISTS (SELECT FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
              WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND e.extname = 'neotoma');
-- The internals are the owner's alone.
SELECT p.proname, has_function_privilege('neotoma_operator', p.oid, 'EXECUTE') AS operator_can_execute
FROM pg_proc p WHERE p.pronamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
  AND p.proname IN ('_apply_observations', '_observations_inserted')
ORDER BY 1;
-- Derived data is written by the definer functions only.
SELECT t, has_table_privilege('neotoma_user', 'neotoma.' || t, 'INSERT,UPDATE,DELETE') AS users_write
FROM unnest(ARRAY['entity_snapshots', 'entity_identifiers', 'timeline_events', 'api_tokens', 'signing_keys']) t;
-- Settings that decide what users reach are not theirs to set.
-- (Supabase's roles, which 51_supabase leaves in the cluster, left out.)
SELECT parname, array(SELECT a FROM unnest(paracl) a WHERE a::text !~ '^(anon|authenticated|service_role)=') AS paracl
FROM pg_parameter_acl WHERE parname LIKE 'neotoma.%' ORDER BY 1;

-- A stranger: a role the extension was never granted to reaches nothing.
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_regress_stranger') THEN
    CREATE ROLE neotoma_regress_stranger NOSUPERUSER NOBYPASSRLS;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_regress_web') THEN
    CREATE ROLE neotoma_regress_web NOSUPERUSER NOBYPASSRLS;
    GRANT neotoma_user TO neotoma_regress_web;
  END IF;
END $$;
SET ROLE neotoma_regress_stranger;
SELECT neotoma.retrieve_entities('{"user_id": "a0000000-0000-0000-0000-00000000000a"}');
SELECT count(*) FROM neotoma.entities;
RESET ROLE;

-- A hostile auth.uid(), as a database owner could create it: never run.
CREATE SCHEMA auth;
CREATE FUNCTION auth.uid() RETURNS uuid LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION 'auth.uid() ran as %', current_user; END $$;
GRANT USAGE ON SCHEMA auth TO PUBLIC;

-- An ordinary signed-in user (neotoma_user, e.g. Supabase's authenticated):
-- acts for the subject of its JWT claims, and only for it.
SET ROLE neotoma_regress_web;
SELECT neotoma.current_user_id() AS without_claims;
SELECT error_code(try_action('retrieve_entities', '{"user_id": "a0000000-0000-0000-0000-00000000000a"}')) AS names_a_user;
SELECT error_code(try_action('retrieve_entities', '{}')) AS no_user;
SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SET request.jwt.claims = '{"sub": "5ec00000-0000-0000-0000-00000000005e", "role": "authenticated"}';
SELECT neotoma.store('{"entities": [{"entity_type": "note", "content": "mine"}]}')->'interpretation'->'entities_created' AS stored;
SELECT neotoma.retrieve_entities('{}')->'total' AS sees;
SELECT error_code(try_action('retrieve_entities', '{"user_id": "a0000000-0000-0000-0000-00000000000a"}')) AS names_another;
-- Signing a file URL runs as the owner and still never calls auth.uid().
SELECT neotoma_private._sign_file(gen_random_uuid(), 1) AS sign_unknown_file;
-- Recomputing someone else's snapshots is refused.
SELECT neotoma_private._recompute('a0000000-0000-0000-0000-00000000000a', ARRAY['ent_00000000000000000000000000000000']);
SELECT neotoma_private._recompute_type('note', NULL);
-- Derived data and shared rows cannot be written directly.
UPDATE neotoma.entity_snapshots SET snapshot = '{}';
SELECT * FROM neotoma.signing_keys;
SELECT neotoma._apply_observations('[]');
RESET request.jwt.claims;
RESET ROLE;

-- The global schemas: an ordinary session (even a trusted service) cannot
-- change them, through the actions or directly; its own variant it can.
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field
FROM try_action('register_schema', '{"entity_type": "person", "schema_version": "9.0", "activate": true,
  "schema_definition": {"fields": {"name": {"type": "string"}}}, "reducer_config": {"merge_policies": {}}}') r;
SELECT error_code(try_action('update_schema_incremental', '{"entity_type": "person",
  "fields_to_add": [{"field_name": "nickname", "field_type": "string"}]}')) AS incremental_global;
UPDATE neotoma.entity_schemas SET active = false WHERE user_id = neotoma.global_user_id() AND entity_type = 'person';
DELETE FROM neotoma.entity_schemas WHERE entity_type = 'person';
INSERT INTO neotoma.entity_schemas (user_id, id, entity_type, schema_version, definition, active)
VALUES (neotoma.global_user_id(), gen_random_uuid(), 'person', '9.9', '{}', false);
SET neotoma.operator = on;
SET neotoma.auto_promote = off;
SELECT r->'scope' AS scope, r->'fields_added' AS added
FROM neotoma.update_schema_incremental('{"entity_type": "person", "user_specific": true,
  "fields_to_add": [{"field_name": "nickname", "field_type": "string"}]}') r;
RESET ROLE;
RESET neotoma.user_id;
SELECT count(*) FILTER (WHERE active) AS active_global_person, count(*) AS global_person_versions
FROM neotoma.entity_schemas WHERE user_id = neotoma.global_user_id() AND entity_type = 'person';

-- An operator can (here with the gateway's switch: neotoma.operator).
SET ROLE neotoma_regress_operator;
SET neotoma.operator = off;
SELECT error_code(try_action('update_schema_incremental', '{"entity_type": "person",
  "fields_to_add": [{"field_name": "nickname", "field_type": "string"}]}')) AS operator_switched_off;
SET neotoma.operator = on;
SELECT r->'scope' AS scope, r->'schema_version' AS version
FROM neotoma.update_schema_incremental('{"entity_type": "person",
  "fields_to_add": [{"field_name": "nickname", "field_type": "string"}]}') r;
RESET neotoma.operator;
RESET ROLE;

DROP SCHEMA auth CASCADE;
SELECT neotoma.verify()->'ok' AS verified;
