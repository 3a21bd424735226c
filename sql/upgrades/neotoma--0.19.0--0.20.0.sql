-- 0.19.0 -> 0.20.0: the gateway reads no table or catalog itself (issue
-- 41): neotoma.gateway_handshake() answers the installed version and the
-- role's privileges, neotoma.file_content() a file's bytes, and
-- neotoma.recompute_snapshots() folds an imported memory again (no table
-- changes).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

CREATE FUNCTION neotoma.gateway_handshake() RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object(
    'extension_version', (SELECT extversion FROM pg_extension WHERE extname = 'neotoma'),
    'operator', pg_has_role('neotoma_operator', 'USAGE'),
    'token_context', has_parameter_privilege('neotoma.token_id', 'SET')) $$;

CREATE FUNCTION neotoma.file_content(source_id uuid) RETURNS bytea
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT f.content FROM neotoma.files f
  WHERE f.user_id = neotoma.current_user_id() AND f.source_id = file_content.source_id $$;

CREATE FUNCTION neotoma.recompute_snapshots(after text, how_many integer) RETURNS text[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE ids text[];
BEGIN
  SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}') INTO ids FROM (
    SELECT e.id FROM neotoma.entities e
    WHERE e.user_id = neotoma.current_user_id() AND (after IS NULL OR e.id > after)
    ORDER BY e.id LIMIT greatest(how_many, 0)) x;
  IF cardinality(ids) > 0 THEN
    PERFORM neotoma_private._recompute(neotoma.current_user_id(), ids);
  END IF;
  RETURN ids;
END $$;

REVOKE EXECUTE ON FUNCTION neotoma.gateway_handshake(), neotoma.file_content(uuid),
  neotoma.recompute_snapshots(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.gateway_handshake(), neotoma.file_content(uuid),
  neotoma.recompute_snapshots(text, integer) TO neotoma_user;

-- Supabase-style platform roles get what neotoma_user has, as at install.
SELECT neotoma_private.grant_platform_roles();
