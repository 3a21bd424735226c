-- The action catalog and the per-action SQL functions made from it.
\ir include/setup.sql
BEGIN;

SELECT jsonb_typeof(c->'actions') AS actions,
       c->>'extension_version' = (SELECT extversion FROM pg_extension WHERE extname = 'neotoma') AS version_matches,
       c->>'catalog_version' LIKE (c->>'extension_version') || '+%' AS catalog_version_shape,
       c->>'api_version' AS api_version
FROM neotoma.action_catalog() AS c;

-- Every entry has what the gateway needs.
SELECT a->>'name' AS name,
       a->'input_schema'->>'type' AS input_type,
       a->>'sql_function' AS sql_function,
       a->'annotations' AS annotations,
       length(a->>'description') > 40 AS described
FROM jsonb_array_elements(neotoma.action_catalog()->'actions') AS a
ORDER BY 1;

-- Every catalog name and alias has its SQL function, and nothing else does.
WITH names AS (
  SELECT a->>'name' AS fn FROM jsonb_array_elements(neotoma.action_catalog()->'actions') a
  UNION ALL
  SELECT jsonb_array_elements_text(a->'aliases') FROM jsonb_array_elements(neotoma.action_catalog()->'actions') a
), funcs AS (
  SELECT p.proname AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = 'neotoma' AND pg_get_function_arguments(p.oid) = 'args jsonb DEFAULT ''{}''::jsonb'
)
SELECT (SELECT count(*) FROM names) AS catalog_names,
       (SELECT count(*) FROM names WHERE fn NOT IN (SELECT fn FROM funcs)) AS without_function,
       (SELECT count(*) FROM funcs WHERE fn NOT IN (SELECT fn FROM names)) AS without_catalog_entry;

-- Every action of the catalog has a handler: called with no arguments it
-- answers or refuses with an envelope, never "no handler" (SERVICE_UNAVAILABLE)
-- and never a raw SQL error.
SELECT a->>'name' AS action_without_handler, r
FROM jsonb_array_elements(neotoma.action_catalog()->'actions') AS a,
     LATERAL try_action(a->>'name') AS r
WHERE (r ? 'sqlstate' AND r->>'sqlstate' <> 'NT001') OR error_code(r) = 'SERVICE_UNAVAILABLE';

-- get_version and get_current_time.
SELECT r->>'extension_version' = (SELECT extversion FROM pg_extension WHERE extname = 'neotoma') AS extension_version,
       r->>'api_version' AS api_version,
       r->>'postgres_version' = current_setting('server_version') AS postgres_version,
       r->'server_version' AS server_version
FROM neotoma.get_version() AS r;
SET neotoma.server_version = '9.9.9';
SELECT neotoma.get_version()->>'server_version' AS server_version;
RESET neotoma.server_version;

SELECT abs(extract(epoch FROM ((r->>'now')::timestamptz - clock_timestamp()))) < 60 AS now_is_now,
       abs((r->>'unix_ms')::bigint - (extract(epoch FROM (r->>'now')::timestamptz) * 1000)::bigint) <= 1 AS unix_ms_agrees,
       r->>'timezone' AS timezone,
       r->>'now' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$' AS iso_utc
FROM neotoma.get_current_time() AS r;
ROLLBACK;
