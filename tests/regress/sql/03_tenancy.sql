-- Which user a session acts for.
\ir include/setup.sql

SELECT neotoma.current_user_id() AS no_user;

SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SELECT neotoma.current_user_id() AS from_guc;

SET neotoma.user_id = 'not-a-uuid';
\set SHOW_CONTEXT never
SELECT neotoma.current_user_id();
RESET neotoma.user_id;

-- Supabase/PostgREST: the sub of the request's JWT claims is used when no
-- GUC is set. It is read as a setting: no auth.uid() is ever called.
SET request.jwt.claims = '{"sub": "b0000000-0000-0000-0000-00000000000b", "role": "authenticated"}';
SELECT neotoma.current_user_id() AS from_jwt_claims;
RESET request.jwt.claims;
SET request.jwt.claim.sub = 'c0000000-0000-0000-0000-00000000000c';
SELECT neotoma.current_user_id() AS from_claim_sub;
-- The GUC wins over the claims.
SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SELECT neotoma.current_user_id() AS guc_wins;
RESET neotoma.user_id;
-- A subject that is not a UUID (a service key) names no user.
SET request.jwt.claim.sub = 'service_role';
SELECT neotoma.current_user_id() AS not_a_user;
RESET request.jwt.claim.sub;

-- Row level security is enabled and forced on every table of the schema.
SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
       (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'neotoma' AND c.relkind = 'r'
ORDER BY 1;

-- Every primary key and unique key leads with user_id (but OAuth's
-- clients', which register before any user is known).
SELECT conrelid::regclass AS tbl, conname
FROM pg_constraint
WHERE connamespace = 'neotoma'::regnamespace AND contype IN ('p', 'u')
  AND (SELECT attname FROM pg_attribute WHERE attrelid = conrelid AND attnum = conkey[1]) <> 'user_id'
  AND conrelid <> 'neotoma.oauth_clients'::regclass;
