-- Runs first: installs the extension in the fresh regression database and a
-- helper that runs an action and answers its result, or its SQLSTATE and
-- error envelope when it fails.
CREATE EXTENSION neotoma;

CREATE FUNCTION try_action(action text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  r jsonb;
  st text;
  det text;
BEGIN
  EXECUTE format('SELECT neotoma.%I($1)', action) INTO r USING args;
  RETURN r;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, det = PG_EXCEPTION_DETAIL;
  RETURN jsonb_build_object('sqlstate', st,
    'error', CASE WHEN st = 'NT001' THEN det::jsonb ELSE to_jsonb(det) END);
END $$;

-- The error code of a failed action (NULL when it succeeded).
CREATE FUNCTION error_code(result jsonb) RETURNS text
LANGUAGE sql AS $$ SELECT result->'error'->>'code' $$;

-- An ordinary role: row level security applies to it (not to superusers).
-- Like the MCP gateway's role, it is a neotoma_service: trusted to say
-- which user it acts for (neotoma.user_id), and nothing more. And an
-- operator: it also changes what all users share (global schemas, settings).
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_regress_agent') THEN
    CREATE ROLE neotoma_regress_agent NOSUPERUSER NOBYPASSRLS;
    GRANT neotoma_service TO neotoma_regress_agent;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_regress_operator') THEN
    CREATE ROLE neotoma_regress_operator NOSUPERUSER NOBYPASSRLS;
    GRANT neotoma_operator TO neotoma_regress_operator;
  END IF;
END $$;
