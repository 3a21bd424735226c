-- Sign-ins of the inspector (the gateway's /inspector pages): a session is
-- the SHA-256 of a random cookie, for a user, bound to what it was signed in
-- with. It ends on the next request, on every gateway of the database, when
-- that ends: its API token revoked or expired, its login removed or its
-- password changed, its user erased; and after an idle period the gateway
-- names. Each user keeps a few sessions at most (opening one more closes
-- the least recently used). Nobody reads the table directly: the functions
-- below are the gateway's (neotoma_service) way in.
CREATE TABLE neotoma.inspector_sessions (
  user_id      uuid        NOT NULL,
  session_hash text        NOT NULL,
  -- Signed in with this API token: the session lives no longer than it.
  token_id     uuid,
  -- Signed in with the user's login (username and password): its
  -- updated_at then; a new password or a removed login ends the session.
  login_at     timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  used_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, session_hash)
);
CREATE UNIQUE INDEX inspector_sessions_hash ON neotoma.inspector_sessions (session_hash);

-- Opens a session for user_id signed in with token_id (an API token), or
-- with the login (by_login), or with a one-time code (neither); keeps the
-- user's `keep` most recently used sessions. Whether it was opened: false
-- when the token or login ended meanwhile.
CREATE FUNCTION neotoma_private.inspector_open(user_id uuid, session_hash text, token_id uuid, by_login boolean,
                                               keep integer, idle_seconds double precision)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  login timestamptz;
BEGIN
  IF token_id IS NOT NULL AND NOT EXISTS (
       SELECT FROM neotoma.api_tokens t
       WHERE t.user_id = inspector_open.user_id AND t.id = inspector_open.token_id
         AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())) THEN
    RETURN false;
  END IF;
  IF by_login THEN
    SELECT l.updated_at INTO login FROM neotoma.logins l WHERE l.user_id = inspector_open.user_id;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
  END IF;
  DELETE FROM neotoma.inspector_sessions s
  WHERE s.user_id = inspector_open.user_id AND s.used_at <= now() - idle_seconds * interval '1 second';
  INSERT INTO neotoma.inspector_sessions (user_id, session_hash, token_id, login_at)
  VALUES (inspector_open.user_id, inspector_open.session_hash, inspector_open.token_id, login);
  DELETE FROM neotoma.inspector_sessions s
  WHERE s.user_id = inspector_open.user_id
    AND s.session_hash NOT IN (SELECT k.session_hash FROM neotoma.inspector_sessions k
                               WHERE k.user_id = inspector_open.user_id
                               ORDER BY k.used_at DESC, k.created_at DESC, k.session_hash
                               LIMIT greatest(keep, 1));
  RETURN true;
END $$;

-- The session a cookie's hash names, if it is still good: {user_id,
-- operator, token_id}, else NULL (and an ended session is forgotten). Using it
-- renews its idle period (written at most once a minute).
CREATE FUNCTION neotoma_private.inspector_session(session_hash text, idle_seconds double precision)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  s neotoma.inspector_sessions;
  scope text;
BEGIN
  SELECT * INTO s FROM neotoma.inspector_sessions x WHERE x.session_hash = inspector_session.session_hash;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF s.token_id IS NOT NULL THEN
    SELECT t.scope INTO scope FROM neotoma.api_tokens t
    WHERE t.user_id = s.user_id AND t.id = s.token_id AND t.revoked_at IS NULL
      AND (t.expires_at IS NULL OR t.expires_at > now());
  END IF;
  IF s.used_at <= now() - idle_seconds * interval '1 second'
     OR (s.token_id IS NOT NULL AND scope IS NULL)
     OR (s.login_at IS NOT NULL
         AND NOT EXISTS (SELECT FROM neotoma.logins l WHERE l.user_id = s.user_id AND l.updated_at = s.login_at)) THEN
    DELETE FROM neotoma.inspector_sessions x WHERE x.user_id = s.user_id AND x.session_hash = s.session_hash;
    RETURN NULL;
  END IF;
  IF s.used_at < now() - interval '1 minute' THEN
    UPDATE neotoma.inspector_sessions x SET used_at = now()
    WHERE x.user_id = s.user_id AND x.session_hash = s.session_hash;
  END IF;
  RETURN jsonb_build_object('user_id', s.user_id, 'operator', coalesce(scope = 'operator', false),
                            'token_id', s.token_id);
END $$;

CREATE FUNCTION neotoma_private.inspector_close(session_hash text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  DELETE FROM neotoma.inspector_sessions x WHERE x.session_hash = inspector_close.session_hash $$;
