\set ECHO none
-- What every regression test needs, included by each as its first line
-- (`\ir include/setup.sql`), so that any test runs alone or after others in
-- the same database: the extension, the helpers, the roles. Idempotent.
-- Not echoed: a test's expected output shows the include and `\set ECHO none`
-- only; errors still show. Not a test itself: tests/regress/run runs
-- sql/*.sql only.

-- The extension, unless an earlier test of this run installed it. No
-- IF NOT EXISTS: its "already exists" notice would depend on the order, and
-- silencing notices would hide the installation's own.
SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'neotoma') AS regress_install_neotoma \gset
\if :regress_install_neotoma
CREATE EXTENSION neotoma;
\endif
\unset regress_install_neotoma

-- Runs an action and answers its result, or its SQLSTATE and error envelope
-- when it fails.
CREATE OR REPLACE FUNCTION try_action(action text, args jsonb DEFAULT '{}') RETURNS jsonb
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
CREATE OR REPLACE FUNCTION error_code(result jsonb) RETURNS text
LANGUAGE sql AS $$ SELECT result->'error'->>'code' $$;

-- An ordinary role: row level security applies to it (not to superusers).
-- Like the MCP gateway's role, it is a neotoma_service: trusted to say
-- which user it acts for (neotoma.user_id), and nothing more. And an
-- operator: it also changes what all users share (global schemas, settings).
-- Roles belong to the cluster, so they may exist from an earlier run.
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_regress_agent') THEN
    CREATE ROLE neotoma_regress_agent NOSUPERUSER NOBYPASSRLS;
  END IF;
  IF NOT pg_has_role('neotoma_regress_agent', 'neotoma_service', 'MEMBER') THEN
    GRANT neotoma_service TO neotoma_regress_agent;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_regress_operator') THEN
    CREATE ROLE neotoma_regress_operator NOSUPERUSER NOBYPASSRLS;
  END IF;
  IF NOT pg_has_role('neotoma_regress_operator', 'neotoma_operator', 'MEMBER') THEN
    GRANT neotoma_operator TO neotoma_regress_operator;
  END IF;
END $$;
\set ECHO all
