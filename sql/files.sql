-- Files: their bytes (once per user and content hash) and the keys that
-- sign their download URLs, with the functions that sign and fetch.

-- File bytes, stored once per user and content hash (the source row holds
-- the metadata: MIME type, name, size, storage path).
CREATE TABLE neotoma.files (
  user_id   uuid  NOT NULL,
  source_id uuid  NOT NULL,
  content   bytea NOT NULL,
  PRIMARY KEY (user_id, source_id),
  FOREIGN KEY (user_id, source_id) REFERENCES neotoma.sources (user_id, id)
);

-- Keys that sign file URLs (global: user_id is the nil UUID). Rotating adds a
-- key; URLs signed with a retired key stay valid until they expire, unless it
-- was revoked. Only the SECURITY DEFINER functions below read this table.
CREATE TABLE neotoma.signing_keys (
  user_id    uuid        NOT NULL,
  id         uuid        NOT NULL,
  secret     bytea       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  retired_at timestamptz,
  revoked_at timestamptz,
  PRIMARY KEY (user_id, id)
);

-- Signed file URLs. Signing checks that the source is a file of the session's
-- user; fetching needs a valid, unexpired signature (the URL is the
-- capability), so both run as the extension's owner.
INSERT INTO neotoma.signing_keys (user_id, id, secret)
VALUES (neotoma.global_user_id(), gen_random_uuid(), neotoma._random_bytes(32));

CREATE FUNCTION neotoma_private._sign_file(source_id uuid, expires bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT jsonb_build_object('user_id', s.user_id, 'kid', k.id,
           'sig', neotoma._hmac_sha256(k.secret, s.user_id || ':' || s.id || ':' || expires))
  FROM neotoma.sources s,
       LATERAL (SELECT id, secret FROM neotoma.signing_keys
                WHERE retired_at IS NULL AND revoked_at IS NULL ORDER BY created_at DESC, id LIMIT 1) k
  WHERE s.id = _sign_file.source_id AND s.user_id = neotoma.current_user_id() AND s.source_type = 'file' $$;

CREATE FUNCTION neotoma_private.signed_file(user_id uuid, source_id uuid, expires bigint, kid uuid, sig text)
RETURNS TABLE (mime_type text, original_filename text, content bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT s.mime_type, s.original_filename, f.content
  FROM neotoma.signing_keys k
  JOIN neotoma.sources s ON s.user_id = signed_file.user_id AND s.id = signed_file.source_id
  JOIN neotoma.files f ON f.user_id = s.user_id AND f.source_id = s.id
  WHERE k.id = signed_file.kid AND k.revoked_at IS NULL
    AND signed_file.expires >= extract(epoch FROM clock_timestamp())
    AND neotoma._hmac_sha256_verify(k.secret, signed_file.user_id || ':' || signed_file.source_id || ':' || signed_file.expires, signed_file.sig) $$;
CREATE FUNCTION neotoma.signed_file(user_id uuid, source_id uuid, expires bigint, kid uuid, sig text)
RETURNS TABLE (mime_type text, original_filename text, content bytea)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM neotoma_private.signed_file(user_id, source_id, expires, kid, sig) $$;

-- The bytes of one of the session's user's files (NULL when it has none),
-- read under row level security like any action: what the gateway hands
-- its model interpreter.
CREATE FUNCTION neotoma.file_content(source_id uuid) RETURNS bytea
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT f.content FROM neotoma.files f
  WHERE f.user_id = neotoma.current_user_id() AND f.source_id = file_content.source_id $$;

CREATE FUNCTION neotoma_private.rotate_signing_key(revoke_previous boolean DEFAULT false) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE k uuid := gen_random_uuid();
BEGIN
  UPDATE neotoma.signing_keys SET retired_at = clock_timestamp() WHERE retired_at IS NULL;
  IF revoke_previous THEN
    UPDATE neotoma.signing_keys SET revoked_at = clock_timestamp() WHERE revoked_at IS NULL;
  END IF;
  INSERT INTO neotoma.signing_keys (user_id, id, secret) VALUES (neotoma.global_user_id(), k, neotoma._random_bytes(32));
  -- On a router the files, and the keys that sign their URLs, are the
  -- partitions': they rotate too (docs/scale-out.md).
  IF EXISTS (SELECT FROM pg_extension WHERE extname = 'neotoma_router') THEN
    EXECUTE 'SELECT neotoma_router.rotate_signing_keys($1)' USING revoke_previous;
  END IF;
  RETURN k;
END $$;
CREATE FUNCTION neotoma.rotate_signing_key(revoke_previous boolean DEFAULT false) RETURNS uuid
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.rotate_signing_key(revoke_previous) $$;
