-- Which user a session acts for.
SELECT neotoma.current_user_id() AS no_user;

SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SELECT neotoma.current_user_id() AS from_guc;

SET neotoma.user_id = 'not-a-uuid';
\set SHOW_CONTEXT never
SELECT neotoma.current_user_id();
RESET neotoma.user_id;

-- Supabase: auth.uid() is used when no GUC is set.
CREATE SCHEMA auth;
CREATE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE AS
  $$ SELECT nullif(current_setting('request.jwt.claim.sub', true), '')::uuid $$;
SET request.jwt.claim.sub = 'b0000000-0000-0000-0000-00000000000b';
SELECT neotoma.current_user_id() AS from_auth_uid;
-- The GUC wins over auth.uid().
SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SELECT neotoma.current_user_id() AS guc_wins;
RESET neotoma.user_id;
RESET request.jwt.claim.sub;
DROP SCHEMA auth CASCADE;

-- Row level security is enabled and forced on every table of the schema.
SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
       (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'neotoma' AND c.relkind = 'r'
ORDER BY 1;

-- Every primary key and unique key leads with user_id.
SELECT conrelid::regclass AS tbl, conname
FROM pg_constraint
WHERE connamespace = 'neotoma'::regnamespace AND contype IN ('p', 'u')
  AND (SELECT attname FROM pg_attribute WHERE attrelid = conrelid AND attnum = conkey[1]) <> 'user_id';
