-- get_technical_metrics: checks the request and builds the Prometheus
-- query the gateway runs (no network inside Postgres); operators only.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_operator;

-- A p95 of a histogram over a day in hours: histogram_quantile over the
-- buckets' rates, label filters as matchers; values are the gateway's.
SELECT m->>'metric_name' AS metric, m->'time_range' AS time_range, m->'values' AS values,
       m->'metadata'->>'unit' AS unit, m->'external' AS external
FROM neotoma.get_technical_metrics('{"metric_name": "neotoma_record_upload_duration_ms", "aggregation": "p95",
  "time_range": {"start": "2024-01-15T00:00:00Z", "end": "2024-01-15T23:59:59Z"}, "step": "1h",
  "labels": {"action": "store"}}') AS m;

-- Each kind of metric with its aggregations.
SELECT args->>'metric_name' AS metric, args->>'aggregation' AS aggregation, m->'external'->>'query' AS query
FROM (VALUES
  ('{"metric_name": "neotoma_record_upload_total", "aggregation": "sum", "labels": {"status": "failure"}}'::jsonb),
  ('{"metric_name": "neotoma_record_upload_total", "aggregation": "max"}'),
  ('{"metric_name": "neotoma_search_duration_ms", "aggregation": "avg"}'),
  ('{"metric_name": "neotoma_search_duration_ms", "aggregation": "count"}'),
  ('{"metric_name": "neotoma_mcp_error_rate", "aggregation": "p99"}'),
  ('{"metric_name": "neotoma_db_connection_pool_usage", "aggregation": "min"}'),
  ('{"metric_name": "neotoma_graph_orphan_nodes_total"}')
) AS t(args), LATERAL neotoma.get_technical_metrics(args || '{"step": "5m"}') AS m;

-- The default range is the hour before now, in 60 steps.
SELECT (m->'external'->>'end')::bigint - (m->'external'->>'start')::bigint AS seconds,
       m->'external'->'step' AS step, m->>'aggregation' AS aggregation
FROM neotoma.get_technical_metrics('{"metric_name": "neotoma_mcp_error_rate"}') AS m;

-- Bad requests: the seed's codes, the field named.
SELECT args, error_code(r) AS code, r->'error'->'details'->>'field' AS field
FROM (VALUES
  ('{}'::jsonb),
  ('{"metric_name": "neotoma_unknown_total"}'),
  ('{"metric_name": "up{job=\"x\"} or vector(1)"}'),
  ('{"metric_name": "neotoma_record_upload_total", "aggregation": "p95"}'),
  ('{"metric_name": "neotoma_record_upload_total", "aggregation": "median"}'),
  ('{"metric_name": "neotoma_record_upload_total", "labels": {"zone": "eu"}}'),
  ('{"metric_name": "neotoma_mcp_error_rate", "step": "often"}'),
  ('{"metric_name": "neotoma_mcp_error_rate", "step": "1s", "time_range": {"start": "2024-01-01", "end": "2024-01-02"}}'),
  ('{"metric_name": "neotoma_mcp_error_rate", "time_range": {"start": "2024-01-02", "end": "2024-01-01"}}'),
  ('{"metric_name": "neotoma_mcp_error_rate", "time_range": {"start": "yesterday", "end": "2024-01-01"}}')
) AS t(args), LATERAL try_action('get_technical_metrics', args) AS r;

-- Users are not operators: the metrics describe the whole server.
RESET ROLE;
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '27000000-0000-0000-0000-000000000001';
SELECT error_code(try_action('get_technical_metrics', '{"metric_name": "neotoma_mcp_error_rate"}')) AS as_user;
RESET ROLE;
-- Nor may users count the orphans of everyone's graph; the gateway's role may.
SELECT has_function_privilege('neotoma_user', 'neotoma.graph_orphan_count()', 'EXECUTE') AS users,
       has_function_privilege('neotoma_service', 'neotoma.graph_orphan_count()', 'EXECUTE') AS service;
ROLLBACK;
