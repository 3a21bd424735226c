-- Bearer tokens of the MCP gateway.

-- Bearer tokens of the MCP gateway's HTTP transport, stored hashed (SHA-256
-- of the token), each with a scope ('user': the user's own data;
-- 'operator': also what all users share) and an optional expiry. Nobody
-- reads this table directly: the SECURITY DEFINER functions below are the
-- only way in (authenticate_token for the gateway's role, the rest for
-- operators). Creating or revoking a token notifies every gateway
-- (channel neotoma_tokens, payload the token's hash) so caches forget it.
CREATE TABLE neotoma.api_tokens (
  user_id    uuid        NOT NULL,
  id         uuid        NOT NULL,
  token_hash text        NOT NULL,
  name       text,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  scope      text        NOT NULL DEFAULT 'user' CHECK (scope IN ('user', 'operator')),
  expires_at timestamptz,
  -- Issued through OAuth (0.15.0): the resource the token is for (the
  -- gateway's /mcp URL), and the grant it belongs to (oauth.sql).
  resource   text,
  grant_id   uuid,
  -- Limits (0.24.0): an agent trusted with less than everything its user
  -- may do calls only actions that write nothing (read_only), only the
  -- tools a `--tools` list names (tools; NULL: all). The extension checks
  -- each call that comes with the token (core's token_limits). When the
  -- token was last used, to the minute (the gateway says: touch_api_token).
  read_only  boolean     NOT NULL DEFAULT false,
  tools      text,
  -- Only these workspaces (NULL: all), sorted (core's token_limits).
  workspaces text[],
  last_used_at timestamptz,
  PRIMARY KEY (user_id, id)
);
-- Authentication looks tokens up by hash before any user is known.
CREATE UNIQUE INDEX api_tokens_hash ON neotoma.api_tokens (token_hash);
CREATE INDEX api_tokens_grant ON neotoma.api_tokens (user_id, grant_id) WHERE grant_id IS NOT NULL;

-- The token's id (from 0.12.0) names its context (set_context); a token
-- with a resource (from 0.15.0) is good for that resource only; its limits
-- (from 0.24.0) decide which tools its session lists.
CREATE FUNCTION neotoma_private.authenticate_token(token_hash text)
RETURNS TABLE (user_id uuid, scope text, expires_at timestamptz, id uuid, resource text,
               read_only boolean, tools text, workspaces text[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT t.user_id, t.scope, t.expires_at, t.id, t.resource, t.read_only, t.tools, t.workspaces
  FROM neotoma.api_tokens t
  WHERE t.token_hash = authenticate_token.token_hash AND t.revoked_at IS NULL
    AND (t.expires_at IS NULL OR t.expires_at > now()) $$;
CREATE FUNCTION neotoma.authenticate_token(token_hash text)
RETURNS TABLE (user_id uuid, scope text, expires_at timestamptz, id uuid, resource text,
               read_only boolean, tools text, workspaces text[])
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM neotoma_private.authenticate_token(token_hash) $$;

CREATE FUNCTION neotoma_private.create_api_token(user_id uuid, token_hash text, name text DEFAULT NULL,
                                         scope text DEFAULT 'user', expires_in_seconds double precision DEFAULT NULL,
                                         read_only boolean DEFAULT false, tools text DEFAULT NULL,
                                         workspaces text[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  t neotoma.api_tokens;
BEGIN
  IF expires_in_seconds IS NOT NULL AND NOT expires_in_seconds > 0 THEN
    RAISE EXCEPTION 'expires_in_seconds must be positive';
  END IF;
  -- An operator's token changes what all users share: it cannot be limited.
  IF create_api_token.scope = 'operator' AND (create_api_token.read_only OR create_api_token.tools IS NOT NULL
                                              OR create_api_token.workspaces IS NOT NULL) THEN
    RAISE EXCEPTION 'an operator token cannot be limited (read_only, tools, workspaces)';
  END IF;
  IF cardinality(create_api_token.workspaces) = 0 THEN
    RAISE EXCEPTION 'workspaces: name at least one (NULL: all)';
  END IF;
  INSERT INTO neotoma.api_tokens (user_id, id, token_hash, name, scope, expires_at, read_only, tools, workspaces)
  VALUES (create_api_token.user_id, gen_random_uuid(), create_api_token.token_hash, create_api_token.name,
          create_api_token.scope, now() + expires_in_seconds * interval '1 second',
          coalesce(create_api_token.read_only, false), nullif(btrim(create_api_token.tools), ''),
          (SELECT array_agg(DISTINCT w ORDER BY w) FROM unnest(create_api_token.workspaces) w))
  RETURNING * INTO t;
  PERFORM pg_notify('neotoma_tokens', t.token_hash);
  RETURN jsonb_build_object('id', t.id, 'user_id', t.user_id, 'scope', t.scope,
                            'expires_at', neotoma._iso(t.expires_at), 'read_only', t.read_only, 'tools', t.tools,
                            'workspaces', t.workspaces);
END $$;
CREATE FUNCTION neotoma.create_api_token(user_id uuid, token_hash text, name text DEFAULT NULL,
                                         scope text DEFAULT 'user', expires_in_seconds double precision DEFAULT NULL,
                                         read_only boolean DEFAULT false, tools text DEFAULT NULL,
                                         workspaces text[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.create_api_token(user_id, token_hash, name, scope, expires_in_seconds, read_only, tools,
                                          workspaces) $$;

-- Revoking an OAuth access token ends its grant (oauth.sql): the grant's
-- other tokens and its refresh tokens, so the client cannot mint another.
-- Inspector sessions signed in with the token end with it (inspector.sql).
CREATE FUNCTION neotoma_private.revoke_api_token(token_id uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  t neotoma.api_tokens;
BEGIN
  UPDATE neotoma.api_tokens x SET revoked_at = now()
  WHERE x.id = revoke_api_token.token_id AND x.revoked_at IS NULL
  RETURNING * INTO t;
  IF t.token_hash IS NULL THEN
    RETURN false;
  END IF;
  -- Its context goes with it.
  DELETE FROM neotoma.contexts c WHERE c.token_id = revoke_api_token.token_id;
  DELETE FROM neotoma.inspector_sessions s WHERE s.user_id = t.user_id AND s.token_id = t.id;
  IF t.grant_id IS NOT NULL THEN
    PERFORM neotoma_private._oauth_revoke_grant(t.user_id, t.grant_id);
  END IF;
  PERFORM pg_notify('neotoma_tokens', t.token_hash);
  RETURN true;
END $$;
CREATE FUNCTION neotoma.revoke_api_token(token_id uuid) RETURNS boolean
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.revoke_api_token(token_id) $$;

CREATE FUNCTION neotoma_private.list_api_tokens() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'user_id', user_id, 'name', name, 'scope', scope,
           'created_at', created_at, 'expires_at', expires_at, 'revoked_at', revoked_at,
           'read_only', read_only, 'tools', tools, 'workspaces', workspaces, 'last_used_at', last_used_at)
           ORDER BY created_at, id), '[]')
  FROM neotoma.api_tokens $$;
CREATE FUNCTION neotoma.list_api_tokens() RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.list_api_tokens() $$;

-- What provenance says of the token an observation was written with
-- (`written_with`): its id, and its name (the agent's) when it is one of
-- the session's user's tokens (NULL for another's, or one that no longer
-- exists); NULL for no token. Users cannot read tokens otherwise.
CREATE FUNCTION neotoma_private._written_with(token_id uuid) RETURNS jsonb
LANGUAGE sql STABLE STRICT SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT jsonb_build_object('token_id', _written_with.token_id, 'name', (
    SELECT t.name FROM neotoma.api_tokens t
    WHERE t.user_id = neotoma.current_user_id() AND t.id = _written_with.token_id)) $$;

-- The gateway says a token was used (at most once a minute per token and
-- gateway, so a read stays a read): `token list` shows when.
CREATE FUNCTION neotoma_private.touch_api_token(token_hash text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  UPDATE neotoma.api_tokens t SET last_used_at = date_trunc('minute', now())
  WHERE t.token_hash = touch_api_token.token_hash
    AND (t.last_used_at IS NULL OR t.last_used_at < date_trunc('minute', now())) $$;
CREATE FUNCTION neotoma.touch_api_token(token_hash text) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.touch_api_token(token_hash) $$;
