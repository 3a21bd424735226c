-- Runs last in CREATE EXTENSION neotoma, after the Rust functions exist.

-- Creates one SQL function per action of the catalog (and per legacy alias):
--   neotoma.<action>(args jsonb DEFAULT '{}') RETURNS jsonb
-- Each calls the Rust dispatcher and turns an error result into a raised
-- NT001 error carrying the envelope, so the whole action is one transaction.
CREATE FUNCTION neotoma._install_action_functions() RETURNS integer
LANGUAGE plpgsql AS $install$
DECLARE
  a jsonb;
  fn text;
  n integer := 0;
BEGIN
  FOR a IN SELECT value FROM jsonb_array_elements(neotoma.action_catalog()->'actions') LOOP
    FOR fn IN SELECT a->>'name' UNION ALL SELECT jsonb_array_elements_text(a->'aliases') LOOP
      EXECUTE format($f$
        CREATE OR REPLACE FUNCTION neotoma.%I(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
        LANGUAGE plpgsql VOLATILE AS $body$
        DECLARE r jsonb := neotoma._invoke(%L, args);
        BEGIN
          IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
          RETURN r->'ok';
        END $body$$f$, fn, fn);
      EXECUTE format('COMMENT ON FUNCTION neotoma.%I(jsonb) IS %L', fn,
        CASE WHEN fn = a->>'name' THEN a->>'description'
             ELSE format('Legacy name of neotoma.%s: %s', a->>'name', a->>'description') END);
      n := n + 1;
    END LOOP;
  END LOOP;
  RETURN n;
END $install$;

SELECT neotoma._install_action_functions();

-- The seeded entity schemas (global, active).
INSERT INTO neotoma.entity_schemas (user_id, id, entity_type, schema_version, description, definition, active)
SELECT neotoma.global_user_id(), (s->>'id')::uuid, s->>'entity_type', s->>'schema_version',
       s->>'description', s->'definition', true
FROM jsonb_array_elements(neotoma._builtin_schemas()) AS s;

-- Snapshots follow observations: every statement that inserts observations
-- folds them into their entities' snapshots (and identifiers) before it ends.
CREATE FUNCTION neotoma._observations_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM neotoma._apply_observations((
    SELECT jsonb_agg(jsonb_build_object(
             'user_id', n.user_id, 'id', n.id, 'entity_id', n.entity_id,
             'source_id', n.source_id, 'observed_at', neotoma._micros(n.observed_at),
             'source_priority', n.source_priority, 'specificity_score', n.specificity_score,
             'fields', n.fields)
           ORDER BY n.user_id, n.entity_id, n.id)
    FROM new_observations n));
  RETURN NULL;
END $$;
CREATE TRIGGER observations_reduce AFTER INSERT ON neotoma.observations
  REFERENCING NEW TABLE AS new_observations
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._observations_inserted();

-- Signed file URLs. Signing checks that the source is a file of the session's
-- user; fetching needs a valid, unexpired signature (the URL is the
-- capability), so both run as the extension's owner.
INSERT INTO neotoma.signing_keys (user_id, id, secret)
VALUES (neotoma.global_user_id(), gen_random_uuid(), neotoma._random_bytes(32));

CREATE FUNCTION neotoma._sign_file(source_id uuid, expires bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog AS $$
  SELECT jsonb_build_object('user_id', s.user_id, 'kid', k.id,
           'sig', neotoma._hmac_sha256(k.secret, s.user_id || ':' || s.id || ':' || expires))
  FROM neotoma.sources s,
       LATERAL (SELECT id, secret FROM neotoma.signing_keys
                WHERE retired_at IS NULL AND revoked_at IS NULL ORDER BY created_at DESC, id LIMIT 1) k
  WHERE s.id = _sign_file.source_id AND s.user_id = neotoma.current_user_id() AND s.source_type = 'file' $$;

CREATE FUNCTION neotoma.signed_file(user_id uuid, source_id uuid, expires bigint, kid uuid, sig text)
RETURNS TABLE (mime_type text, original_filename text, content bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog AS $$
  SELECT s.mime_type, s.original_filename, f.content
  FROM neotoma.signing_keys k
  JOIN neotoma.sources s ON s.user_id = signed_file.user_id AND s.id = signed_file.source_id
  JOIN neotoma.files f ON f.user_id = s.user_id AND f.source_id = s.id
  WHERE k.id = signed_file.kid AND k.revoked_at IS NULL
    AND signed_file.expires >= extract(epoch FROM clock_timestamp())
    AND neotoma._hmac_sha256_verify(k.secret, signed_file.user_id || ':' || signed_file.source_id || ':' || signed_file.expires, signed_file.sig) $$;

CREATE FUNCTION neotoma.rotate_signing_key(revoke_previous boolean DEFAULT false) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE k uuid := gen_random_uuid();
BEGIN
  UPDATE neotoma.signing_keys SET retired_at = clock_timestamp() WHERE retired_at IS NULL;
  IF revoke_previous THEN
    UPDATE neotoma.signing_keys SET revoked_at = clock_timestamp() WHERE revoked_at IS NULL;
  END IF;
  INSERT INTO neotoma.signing_keys (user_id, id, secret) VALUES (neotoma.global_user_id(), k, neotoma._random_bytes(32));
  RETURN k;
END $$;
REVOKE EXECUTE ON FUNCTION neotoma.rotate_signing_key(boolean) FROM PUBLIC;

-- Everyone may use the schema; row level security decides which rows.
GRANT USAGE ON SCHEMA neotoma TO PUBLIC;
GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA neotoma TO PUBLIC;
REVOKE ALL ON neotoma.api_tokens, neotoma.signing_keys FROM PUBLIC;
GRANT UPDATE, DELETE ON neotoma.entities, neotoma.entity_snapshots, neotoma.entity_identifiers,
  neotoma.interpretation_runs, neotoma.raw_fragments, neotoma.entity_schemas, neotoma.relationships,
  neotoma.timeline_events, neotoma.schema_recommendations TO PUBLIC;

COMMENT ON SCHEMA neotoma IS
  'Neotoma: a memory for AI agents. One function per action (neotoma.<action>(jsonb)); '
  'see neotoma.action_catalog().';
