-- OAuth 2.1: the MCP gateway as its own authorization server (docs/oauth.md).
--
-- The gateway speaks HTTP and checks requests; these tables keep what must
-- outlive a request or be shared by every gateway of the database: clients
-- that registered, the owners' logins, authorization grants and their
-- refresh tokens. Access tokens are rows of neotoma.api_tokens bound to a
-- resource and a grant. Every secret is stored hashed (SHA-256, passwords
-- Argon2id by the gateway). Nobody reads these tables directly: the
-- SECURITY DEFINER functions below are the way in, for neotoma_service (the
-- gateway) and neotoma_operator (logins).

-- Dynamically registered clients (RFC 7591), as registered. No user's:
-- a client registers before anyone logs in. Row level security without a
-- policy: only the functions below (the extension's owner) read it.
CREATE TABLE neotoma.oauth_clients (
  client_id   text        PRIMARY KEY,
  metadata    jsonb       NOT NULL,
  -- SHA-256 of the client secret, for confidential clients.
  secret_hash text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE neotoma.oauth_clients ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.oauth_clients FORCE ROW LEVEL SECURITY;

-- Who may authorize a client for a user: a username and password.
CREATE TABLE neotoma.logins (
  user_id       uuid        PRIMARY KEY,
  username      text        NOT NULL,
  password_hash text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX logins_username ON neotoma.logins (lower(username));

-- One-time codes an operator hands a user instead of a password.
CREATE TABLE neotoma.login_codes (
  user_id    uuid        NOT NULL,
  code_hash  text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  PRIMARY KEY (user_id, code_hash)
);
-- A code is looked up by its hash before any user is known.
CREATE UNIQUE INDEX login_codes_hash ON neotoma.login_codes (code_hash);

-- An authorization: the code the owner's consent produced, then the tokens
-- exchanged for it. Revoking the grant ends all its tokens.
CREATE TABLE neotoma.oauth_grants (
  user_id         uuid        NOT NULL,
  id              uuid        NOT NULL,
  client_id       text        NOT NULL,
  resource        text        NOT NULL,
  scope           text        NOT NULL,
  code_hash       text        NOT NULL,
  redirect_uri    text        NOT NULL,
  code_challenge  text        NOT NULL,
  code_expires_at timestamptz NOT NULL,
  code_used_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz,
  PRIMARY KEY (user_id, id)
);
CREATE UNIQUE INDEX oauth_grants_code ON neotoma.oauth_grants (code_hash);

-- Refresh tokens: each is spent by its use, which issues the next.
CREATE TABLE neotoma.oauth_refresh_tokens (
  user_id    uuid        NOT NULL,
  token_hash text        NOT NULL,
  grant_id   uuid        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  PRIMARY KEY (user_id, token_hash)
);
CREATE UNIQUE INDEX oauth_refresh_tokens_hash ON neotoma.oauth_refresh_tokens (token_hash);
CREATE INDEX oauth_refresh_tokens_grant ON neotoma.oauth_refresh_tokens (user_id, grant_id);

CREATE FUNCTION neotoma_private.oauth_register_client(client_id text, metadata jsonb, secret_hash text)
RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  -- Registration is open to anyone: clients that never got a grant are
  -- forgotten after a day.
  DELETE FROM neotoma.oauth_clients c
  WHERE c.created_at < now() - interval '1 day'
    AND NOT EXISTS (SELECT FROM neotoma.oauth_grants g WHERE g.client_id = c.client_id);
  INSERT INTO neotoma.oauth_clients (client_id, metadata, secret_hash)
  VALUES (oauth_register_client.client_id, oauth_register_client.metadata, oauth_register_client.secret_hash) $$;

CREATE FUNCTION neotoma_private.oauth_client(client_id text) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT jsonb_build_object('metadata', c.metadata, 'secret_hash', c.secret_hash)
  FROM neotoma.oauth_clients c WHERE c.client_id = oauth_client.client_id $$;

CREATE FUNCTION neotoma_private.oauth_login(username text)
RETURNS TABLE (user_id uuid, password_hash text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT l.user_id, l.password_hash FROM neotoma.logins l
  WHERE lower(l.username) = lower(oauth_login.username) $$;

-- Spends a one-time code: the user it was for, or NULL.
CREATE FUNCTION neotoma_private.oauth_use_login_code(code_hash text) RETURNS uuid
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  UPDATE neotoma.login_codes c SET used_at = now()
  WHERE c.code_hash = oauth_use_login_code.code_hash AND c.used_at IS NULL AND c.expires_at > now()
  RETURNING c.user_id $$;

-- The owner allowed the client: a grant whose code lives two minutes.
CREATE FUNCTION neotoma_private.oauth_authorize(user_id uuid, client_id text, redirect_uri text,
                                                code_challenge text, resource text, scope text, code_hash text)
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  grant_id uuid := gen_random_uuid();
BEGIN
  -- Codes never exchanged are forgotten after a day.
  DELETE FROM neotoma.oauth_grants g
  WHERE g.code_used_at IS NULL AND g.code_expires_at < now() - interval '1 day';
  INSERT INTO neotoma.oauth_grants (user_id, id, client_id, resource, scope, code_hash, redirect_uri,
                                    code_challenge, code_expires_at)
  VALUES (oauth_authorize.user_id, grant_id, oauth_authorize.client_id, oauth_authorize.resource,
          oauth_authorize.scope, oauth_authorize.code_hash, oauth_authorize.redirect_uri,
          oauth_authorize.code_challenge, now() + interval '2 minutes');
  RETURN grant_id;
END $$;

-- Ends a grant: every access token it issued (each gateway is told) and
-- its refresh tokens.
CREATE FUNCTION neotoma_private._oauth_revoke_grant(user_id uuid, grant_id uuid) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  h text;
BEGIN
  UPDATE neotoma.oauth_grants g SET revoked_at = now()
  WHERE g.user_id = _oauth_revoke_grant.user_id AND g.id = _oauth_revoke_grant.grant_id AND g.revoked_at IS NULL;
  FOR h IN UPDATE neotoma.api_tokens t SET revoked_at = now()
           WHERE t.user_id = _oauth_revoke_grant.user_id AND t.grant_id = _oauth_revoke_grant.grant_id
             AND t.revoked_at IS NULL
           RETURNING t.token_hash LOOP
    PERFORM pg_notify('neotoma_tokens', h);
  END LOOP;
  DELETE FROM neotoma.contexts c
  WHERE c.token_id IN (SELECT t.id FROM neotoma.api_tokens t
                       WHERE t.user_id = _oauth_revoke_grant.user_id AND t.grant_id = _oauth_revoke_grant.grant_id);
END $$;

-- An access token and a refresh token for a grant; a grant of `memory:read`
-- (the client asked to read only, or the owner allowed only that) issues
-- read-only tokens, one with `workspace:<name>` scopes tokens limited to
-- those workspaces.
CREATE FUNCTION neotoma_private._oauth_issue(g neotoma.oauth_grants, access_hash text, access_seconds double precision,
                                             refresh_hash text, refresh_seconds double precision, token_name text)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.api_tokens (user_id, id, token_hash, name, scope, expires_at, resource, grant_id, read_only,
                                  workspaces)
  VALUES (g.user_id, gen_random_uuid(), access_hash, token_name, 'user',
          now() + access_seconds * interval '1 second', g.resource, g.id,
          'memory:read' = ANY (regexp_split_to_array(g.scope, '\s+')),
          -- `workspace:<name>` scopes (the gateway checked the names).
          (SELECT array_agg(DISTINCT substr(s, 11) ORDER BY substr(s, 11))
           FROM regexp_split_to_table(g.scope, '\s+') s WHERE s LIKE 'workspace:%'));
  INSERT INTO neotoma.oauth_refresh_tokens (token_hash, user_id, grant_id, expires_at)
  VALUES (refresh_hash, g.user_id, g.id, now() + refresh_seconds * interval '1 second');
  PERFORM pg_notify('neotoma_tokens', access_hash);
  RETURN jsonb_build_object('user_id', g.user_id, 'scope', g.scope, 'resource', g.resource);
END $$;

-- Exchanges a code (RFC 6749 4.1.3 with PKCE): answers the grant's user and
-- scope, or {error} in OAuth's terms. A code is good once: any attempt
-- spends it, and a second exchange revokes what the first one got.
CREATE FUNCTION neotoma_private.oauth_exchange_code(code_hash text, client_id text, redirect_uri text,
                                                    verifier_challenge text, resource text,
                                                    access_hash text, access_seconds double precision,
                                                    refresh_hash text, refresh_seconds double precision,
                                                    token_name text)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  g neotoma.oauth_grants;
  refused jsonb := jsonb_build_object('error', 'invalid_grant');
BEGIN
  SELECT * INTO g FROM neotoma.oauth_grants WHERE oauth_grants.code_hash = oauth_exchange_code.code_hash FOR UPDATE;
  IF NOT FOUND OR g.client_id <> oauth_exchange_code.client_id THEN
    RETURN refused || '{"error_description": "unknown authorization code"}';
  END IF;
  IF g.code_used_at IS NOT NULL THEN
    PERFORM neotoma_private._oauth_revoke_grant(g.user_id, g.id);
    RETURN refused || '{"error_description": "the authorization code was already used (what it got is revoked)"}';
  END IF;
  UPDATE neotoma.oauth_grants SET code_used_at = now() WHERE user_id = g.user_id AND id = g.id;
  IF g.code_expires_at <= now() OR g.revoked_at IS NOT NULL THEN
    RETURN refused || '{"error_description": "the authorization code expired"}';
  END IF;
  IF g.redirect_uri <> oauth_exchange_code.redirect_uri THEN
    RETURN refused || '{"error_description": "redirect_uri differs from the authorization request''s"}';
  END IF;
  IF g.resource <> oauth_exchange_code.resource THEN
    RETURN refused || '{"error_description": "the code was issued for another resource"}';
  END IF;
  IF g.code_challenge <> verifier_challenge THEN
    RETURN refused || '{"error_description": "code_verifier does not match the code_challenge"}';
  END IF;
  RETURN neotoma_private._oauth_issue(g, access_hash, access_seconds, refresh_hash, refresh_seconds, token_name);
END $$;

-- Rotates a refresh token: a new access token and refresh token, the old
-- refresh token spent. A spent one presented again revokes the grant
-- (someone else holds a copy).
CREATE FUNCTION neotoma_private.oauth_refresh(refresh_hash text, client_id text, resource text,
                                              access_hash text, access_seconds double precision,
                                              new_refresh_hash text, refresh_seconds double precision,
                                              token_name text)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  r neotoma.oauth_refresh_tokens;
  g neotoma.oauth_grants;
  refused jsonb := jsonb_build_object('error', 'invalid_grant');
BEGIN
  SELECT * INTO r FROM neotoma.oauth_refresh_tokens t WHERE t.token_hash = oauth_refresh.refresh_hash FOR UPDATE;
  IF FOUND THEN
    SELECT * INTO g FROM neotoma.oauth_grants x WHERE x.user_id = r.user_id AND x.id = r.grant_id FOR UPDATE;
  END IF;
  IF r.token_hash IS NULL OR g.id IS NULL OR g.client_id <> oauth_refresh.client_id THEN
    RETURN refused || '{"error_description": "unknown refresh token"}';
  END IF;
  IF g.revoked_at IS NOT NULL THEN
    RETURN refused || '{"error_description": "the grant was revoked"}';
  END IF;
  IF r.used_at IS NOT NULL THEN
    PERFORM neotoma_private._oauth_revoke_grant(g.user_id, g.id);
    RETURN refused || '{"error_description": "the refresh token was already used; the grant is revoked"}';
  END IF;
  IF r.expires_at <= now() THEN
    RETURN refused || '{"error_description": "the refresh token expired"}';
  END IF;
  IF g.resource <> oauth_refresh.resource THEN
    RETURN refused || '{"error_description": "the refresh token was issued for another resource"}';
  END IF;
  UPDATE neotoma.oauth_refresh_tokens t SET used_at = now() WHERE t.token_hash = r.token_hash;
  RETURN neotoma_private._oauth_issue(g, access_hash, access_seconds, new_refresh_hash, refresh_seconds, token_name);
END $$;

-- Revokes the grant of an access or refresh token (RFC 7009), if that
-- token was issued to client_id. Whether anything was revoked.
CREATE FUNCTION neotoma_private.oauth_revoke(token_hash text, client_id text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  g neotoma.oauth_grants;
BEGIN
  SELECT x.* INTO g FROM neotoma.oauth_grants x
  WHERE (x.user_id, x.id) IN (SELECT t.user_id, t.grant_id FROM neotoma.api_tokens t
                              WHERE t.token_hash = oauth_revoke.token_hash
                              UNION ALL
                              SELECT r.user_id, r.grant_id FROM neotoma.oauth_refresh_tokens r
                              WHERE r.token_hash = oauth_revoke.token_hash)
    AND x.client_id = oauth_revoke.client_id AND x.revoked_at IS NULL;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM neotoma_private._oauth_revoke_grant(g.user_id, g.id);
  RETURN true;
END $$;

-- Operators: a user's login (set or replace), a one-time code, removal.
CREATE FUNCTION neotoma_private.oauth_set_login(user_id uuid, username text, password_hash text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  IF coalesce(btrim(username), '') = '' OR length(username) > 200 THEN
    RAISE EXCEPTION 'a username is 1 to 200 characters';
  END IF;
  IF EXISTS (SELECT FROM neotoma.logins l WHERE lower(l.username) = lower(btrim(oauth_set_login.username))
                                            AND l.user_id <> oauth_set_login.user_id) THEN
    RAISE EXCEPTION 'the username % belongs to another user', btrim(username);
  END IF;
  INSERT INTO neotoma.logins AS l (user_id, username, password_hash)
  VALUES (oauth_set_login.user_id, btrim(oauth_set_login.username), oauth_set_login.password_hash)
  ON CONFLICT ON CONSTRAINT logins_pkey DO UPDATE SET username = excluded.username, password_hash = excluded.password_hash,
                                      updated_at = now();
END $$;

CREATE FUNCTION neotoma_private.oauth_create_login_code(user_id uuid, code_hash text,
                                                        expires_in_seconds double precision)
RETURNS timestamptz
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  expires timestamptz;
BEGIN
  IF NOT expires_in_seconds > 0 THEN
    RAISE EXCEPTION 'expires_in_seconds must be positive';
  END IF;
  DELETE FROM neotoma.login_codes c WHERE c.expires_at < now() - interval '1 day';
  INSERT INTO neotoma.login_codes (code_hash, user_id, expires_at)
  VALUES (oauth_create_login_code.code_hash, oauth_create_login_code.user_id,
          now() + expires_in_seconds * interval '1 second')
  RETURNING expires_at INTO expires;
  RETURN expires;
END $$;

CREATE FUNCTION neotoma_private.oauth_remove_login(user_id uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  DELETE FROM neotoma.login_codes c WHERE c.user_id = oauth_remove_login.user_id AND c.used_at IS NULL;
  DELETE FROM neotoma.logins l WHERE l.user_id = oauth_remove_login.user_id;
  RETURN FOUND;
END $$;
