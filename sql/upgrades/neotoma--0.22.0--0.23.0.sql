-- 0.22.0 -> 0.23.0: a partition's side of a router (issue 42,
-- docs/scale-out.md). A router database (the neotoma_router extension
-- beside neotoma, with PL/Proxy) runs each action on the partition of its
-- user through neotoma.routed, which only a member of the new role
-- neotoma_router may call: it names the user (and whether the router's
-- caller acts as an operator) and runs the action with the settings the
-- router's call had; an action that answers an error leaves nothing
-- written there; neotoma_router may also erase_user (a moved user's old
-- copy). The gateway's handshake also says whether the database
-- is a router. No table or data changes.
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_router') THEN
    CREATE ROLE neotoma_router NOLOGIN;
  END IF;
  IF NOT pg_has_role('neotoma_router', 'neotoma_service', 'MEMBER') THEN
    GRANT neotoma_service TO neotoma_router;
  END IF;
END $$;
GRANT SET ON PARAMETER neotoma.operator TO neotoma_router;

CREATE FUNCTION neotoma.routed(user_id uuid, as_operator boolean, settings jsonb, action text, args text) RETURNS jsonb
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, neotoma, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'routed_wrapper';
REVOKE EXECUTE ON FUNCTION neotoma.routed(uuid, boolean, jsonb, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.routed(uuid, boolean, jsonb, text, text) TO neotoma_router;
-- A router deletes the old copy of a user it moved to another partition.
GRANT EXECUTE ON FUNCTION neotoma.erase_user(uuid, boolean) TO neotoma_router;

-- The gateway's handshake says whether the database is a router (its
-- upkeep then runs on the partitions).
CREATE OR REPLACE FUNCTION neotoma.gateway_handshake() RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object(
    'extension_version', (SELECT extversion FROM pg_extension WHERE extname = 'neotoma'),
    'operator', pg_has_role('neotoma_operator', 'USAGE'),
    'token_context', has_parameter_privilege('neotoma.token_id', 'SET'),
    'router', EXISTS (SELECT FROM pg_extension WHERE extname = 'neotoma_router')) $$;

SELECT neotoma_private.grant_platform_roles();
