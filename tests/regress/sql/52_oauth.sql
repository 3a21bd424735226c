-- OAuth's state (oauth.sql), as the gateway's role (neotoma_service) and an
-- operator use it: logins and one-time codes, a code good once, PKCE and
-- the resource checked, refresh tokens that rotate (a spent one revokes the
-- grant), revocation, what ordinary users may not see, erasure. Hashes are
-- stand-ins: the gateway passes SHA-256s, the functions only compare.
\ir include/setup.sql

\set SHOW_CONTEXT never
\set VERBOSITY terse
\set u '''0a000000-0000-0000-0000-0000000000a1'''
\set v '''0a000000-0000-0000-0000-0000000000b2'''
\set res '''https://memory.example/mcp'''

-- An operator sets up logins; the gateway cannot.
SET ROLE neotoma_regress_agent;
SELECT neotoma_private.oauth_set_login(:u, 'alice', '$argon2id$stand-in');
RESET ROLE;
SET ROLE neotoma_regress_operator;
SELECT neotoma_private.oauth_set_login(:u, 'alice', '$argon2id$stand-in');
SELECT neotoma_private.oauth_set_login(:v, 'bob', '$argon2id$bob');
-- Usernames are unique whatever their case, and not blank.
SELECT neotoma_private.oauth_set_login(:v, 'ALICE', 'x');
SELECT neotoma_private.oauth_set_login(:v, '  ', 'x');
-- Setting again replaces the password.
SELECT neotoma_private.oauth_set_login(:u, 'alice', '$argon2id$new');
SELECT neotoma_private.oauth_create_login_code(:u, 'code-1', 600) > now() AS code_expires_later;
SELECT neotoma_private.oauth_create_login_code(:u, 'code-0', 0);
RESET ROLE;

SET ROLE neotoma_regress_agent;
SELECT * FROM neotoma_private.oauth_login('Alice');
SELECT count(*) AS unknown FROM neotoma_private.oauth_login('carol');
-- A one-time code logs in once.
SELECT neotoma_private.oauth_use_login_code('code-1') = :u AS first_use;
SELECT neotoma_private.oauth_use_login_code('code-1') AS second_use;

-- A client registers; an authorization makes a code.
SELECT neotoma_private.oauth_register_client('ntc_1', '{"client_name": "Agent", "redirect_uris": ["https://a.example/cb"]}', NULL);
SELECT neotoma_private.oauth_client('ntc_1')->'metadata'->>'client_name' AS client_name;
SELECT neotoma_private.oauth_client('ntc_unknown') AS unknown_client;
SELECT neotoma_private.oauth_authorize(:u, 'ntc_1', 'https://a.example/cb', 'challenge', :res, 'memory', 'code-a')
  IS NOT NULL AS authorized;

-- The exchange checks client, redirect URI, resource and PKCE; any attempt
-- spends the code.
SELECT neotoma_private.oauth_exchange_code('code-a', 'ntc_other', 'https://a.example/cb', 'challenge', :res,
  'access-x', 3600, 'refresh-x', 86400, 'OAuth: Agent') AS other_client;
SELECT neotoma_private.oauth_exchange_code('code-a', 'ntc_1', 'https://a.example/cb', 'wrong', :res,
  'access-x', 3600, 'refresh-x', 86400, 'OAuth: Agent') AS wrong_verifier;
SELECT neotoma_private.oauth_exchange_code('code-a', 'ntc_1', 'https://a.example/cb', 'challenge', :res,
  'access-x', 3600, 'refresh-x', 86400, 'OAuth: Agent') AS spent;
SELECT neotoma_private.oauth_authorize(:u, 'ntc_1', 'https://a.example/cb', 'challenge', :res, 'memory', 'code-b')
  IS NOT NULL AS authorized;
SELECT neotoma_private.oauth_exchange_code('code-b', 'ntc_1', 'https://other.example/cb', 'challenge', :res,
  'access-x', 3600, 'refresh-x', 86400, 'OAuth: Agent') AS other_redirect;
SELECT neotoma_private.oauth_authorize(:u, 'ntc_1', 'https://a.example/cb', 'challenge', :res, 'memory', 'code-c')
  IS NOT NULL AS authorized;
SELECT neotoma_private.oauth_exchange_code('code-c', 'ntc_1', 'https://a.example/cb', 'challenge',
  'https://elsewhere.example/mcp', 'access-x', 3600, 'refresh-x', 86400, 'OAuth: Agent') AS other_resource;
SELECT neotoma_private.oauth_authorize(:u, 'ntc_1', 'https://a.example/cb', 'challenge', :res, 'memory', 'code-d')
  IS NOT NULL AS authorized;
SELECT neotoma_private.oauth_exchange_code('code-d', 'ntc_1', 'https://a.example/cb', 'challenge', :res,
  'access-1', 3600, 'refresh-1', 86400, 'OAuth: Agent') = jsonb_build_object('user_id', :u, 'scope', 'memory',
  'resource', :res) AS exchanged;
-- The access token authenticates, bound to the resource.
SELECT user_id = :u AS own_user, scope, resource FROM neotoma.authenticate_token('access-1');

-- Refresh rotates; the new pair works, the old refresh token is spent.
SELECT neotoma_private.oauth_refresh('refresh-1', 'ntc_other', :res, 'access-2', 3600, 'refresh-2', 86400, 'n')
  AS other_client;
SELECT neotoma_private.oauth_refresh('refresh-1', 'ntc_1', :res, 'access-2', 3600, 'refresh-2', 86400, 'n')
  ->> 'scope' AS rotated;
SELECT count(*) AS both_access_tokens_work FROM neotoma.authenticate_token('access-1')
  UNION ALL SELECT count(*) FROM neotoma.authenticate_token('access-2');
-- A spent refresh token presented again: someone copied it, so the grant
-- and all its tokens end.
SELECT neotoma_private.oauth_refresh('refresh-1', 'ntc_1', :res, 'access-3', 3600, 'refresh-3', 86400, 'n')
  AS replayed;
SELECT count(*) AS access_after_replay FROM neotoma.authenticate_token('access-2');
SELECT neotoma_private.oauth_refresh('refresh-2', 'ntc_1', :res, 'access-3', 3600, 'refresh-3', 86400, 'n')
  AS after_revocation;

-- A code exchanged twice revokes what the first exchange got.
SELECT neotoma_private.oauth_authorize(:u, 'ntc_1', 'https://a.example/cb', 'challenge', :res, 'memory', 'code-e')
  IS NOT NULL AS authorized;
SELECT neotoma_private.oauth_exchange_code('code-e', 'ntc_1', 'https://a.example/cb', 'challenge', :res,
  'access-e', 3600, 'refresh-e', 86400, 'n') ? 'user_id' AS exchanged;
SELECT neotoma_private.oauth_exchange_code('code-e', 'ntc_1', 'https://a.example/cb', 'challenge', :res,
  'access-e2', 3600, 'refresh-e2', 86400, 'n') AS twice;
SELECT count(*) AS access_after_second_exchange FROM neotoma.authenticate_token('access-e');

-- Revocation (RFC 7009) by the client the token was issued to only.
SELECT neotoma_private.oauth_authorize(:u, 'ntc_1', 'https://a.example/cb', 'challenge', :res, 'memory', 'code-f')
  IS NOT NULL AS authorized;
SELECT neotoma_private.oauth_exchange_code('code-f', 'ntc_1', 'https://a.example/cb', 'challenge', :res,
  'access-f', 3600, 'refresh-f', 86400, 'n') ? 'user_id' AS exchanged;
SELECT neotoma_private.oauth_revoke('refresh-f', 'ntc_other') AS by_another_client;
SELECT count(*) AS still_works FROM neotoma.authenticate_token('access-f');
SELECT neotoma_private.oauth_revoke('refresh-f', 'ntc_1') AS revoked;
SELECT count(*) AS after_revoke FROM neotoma.authenticate_token('access-f');
SELECT neotoma_private.oauth_revoke('garbage', 'ntc_1') AS garbage;
RESET ROLE;

-- The gateway's role reads none of the tables, nor does a user; a user
-- calls none of the functions.
SET ROLE neotoma_regress_agent;
SELECT count(*) FROM neotoma.oauth_grants;
SELECT count(*) FROM neotoma.logins;
SELECT count(*) FROM neotoma.oauth_clients;
RESET ROLE;
SELECT r.rolname,
       (SELECT string_agg(p.proname, ',' ORDER BY p.proname) FROM pg_proc p
        WHERE p.pronamespace = 'neotoma_private'::regnamespace AND p.proname LIKE '%oauth%'
          AND has_function_privilege(r.oid, p.oid, 'EXECUTE')) AS oauth_functions,
       (SELECT count(*) FROM pg_class c
        WHERE c.relnamespace = 'neotoma'::regnamespace
          AND c.relname IN ('oauth_clients', 'logins', 'login_codes', 'oauth_grants', 'oauth_refresh_tokens')
          AND has_table_privilege(r.oid, c.oid, 'SELECT,INSERT,UPDATE,DELETE')) AS oauth_tables
FROM pg_roles r WHERE r.rolname IN ('neotoma_user', 'neotoma_service', 'neotoma_operator')
ORDER BY 1;

-- A user's erasure takes their login, codes, grants and tokens.
SELECT (neotoma.erase_user(:u, true)->'counts') IS NOT NULL AS erased;
SELECT (SELECT count(*) FROM neotoma.logins WHERE user_id = :u) AS logins,
       (SELECT count(*) FROM neotoma.login_codes WHERE user_id = :u) AS codes,
       (SELECT count(*) FROM neotoma.oauth_grants WHERE user_id = :u) AS grants,
       (SELECT count(*) FROM neotoma.oauth_refresh_tokens WHERE user_id = :u) AS refresh_tokens,
       (SELECT count(*) FROM neotoma.api_tokens WHERE user_id = :u) AS access_tokens,
       (SELECT count(*) FROM neotoma.logins WHERE user_id = :v) AS other_users_login;

SET ROLE neotoma_regress_operator;
SELECT neotoma_private.oauth_remove_login(:v) AS removed;
SELECT neotoma_private.oauth_remove_login(:v) AS removed_again;
RESET ROLE;
DELETE FROM neotoma.oauth_clients WHERE client_id = 'ntc_1';
