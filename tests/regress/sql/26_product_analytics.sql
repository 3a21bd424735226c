-- get_product_analytics: product metrics computed from the truth tables
-- across users, for operators only, checked against a fixture history whose
-- answers are computed by hand below. January 2024 (its 1st is a Monday):
--   U1 signs up Jan 1 10:00 (structured), stores a file at 12:00, an entity
--      at 13:00, comes back Jan 2;
--   U2 signs up Jan 1 09:00 with a file, interpreted at 09:05, comes back
--      Jan 9 (day 8);
--   U3 signs up Jan 2 08:00, has an entity Jan 5 (not within a day);
--   U4 signs up Feb 15 (outside the range).
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never

INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, content, created_at) VALUES
  ('26000000-0000-0000-0000-000000000001', '26000000-0000-0000-0000-0000000000a1', 'u1-a', 'structured', '{}', '2024-01-01 10:00Z'),
  ('26000000-0000-0000-0000-000000000001', '26000000-0000-0000-0000-0000000000a2', 'u1-b', 'file', NULL, '2024-01-01 12:00Z'),
  ('26000000-0000-0000-0000-000000000001', '26000000-0000-0000-0000-0000000000a3', 'u1-c', 'structured', '{}', '2024-01-02 15:00Z'),
  ('26000000-0000-0000-0000-000000000002', '26000000-0000-0000-0000-0000000000b1', 'u2-a', 'file', NULL, '2024-01-01 09:00Z'),
  ('26000000-0000-0000-0000-000000000002', '26000000-0000-0000-0000-0000000000b2', 'u2-b', 'structured', '{}', '2024-01-09 10:00Z'),
  ('26000000-0000-0000-0000-000000000003', '26000000-0000-0000-0000-0000000000c1', 'u3-a', 'structured', '{}', '2024-01-02 08:00Z'),
  ('26000000-0000-0000-0000-000000000004', '26000000-0000-0000-0000-0000000000d1', 'u4-a', 'structured', '{}', '2024-02-15 08:00Z');
INSERT INTO neotoma.interpretation_runs (user_id, id, source_id, interpreter, status, started_at) VALUES
  ('26000000-0000-0000-0000-000000000002', '26000000-0000-0000-0000-0000000000e1',
   '26000000-0000-0000-0000-0000000000b1', 'csv', 'completed', '2024-01-01 09:05Z');
INSERT INTO neotoma.entities (user_id, id, entity_type, canonical_name, identity_key, created_at) VALUES
  ('26000000-0000-0000-0000-000000000001', 'ent_26000000000000000000000000000001', 'note', 'u1 note', 'u1', '2024-01-01 13:00Z'),
  ('26000000-0000-0000-0000-000000000003', 'ent_26000000000000000000000000000003', 'note', 'u3 note', 'u3', '2024-01-05 00:00Z');

SET ROLE neotoma_regress_operator;
CREATE TEMP VIEW jan AS SELECT '{"start": "2024-01-01T00:00:00Z", "end": "2024-02-01T00:00:00Z"}'::jsonb AS r;

-- Activation: 2 of 3 uploaded within a day, 1 of 3 had an extraction, 1 of
-- 3 an entity, none a timeline event.
SELECT a->>'metric_name' AS metric, a->'value' AS value, a->'metadata'->'users' AS users,
       a->'metadata'->'threshold' AS threshold
FROM jan, unnest(ARRAY['activation_first_upload_rate', 'activation_first_extraction_rate',
                       'activation_first_entity_rate', 'activation_first_event_rate']) AS m,
     LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'activation', 'metric_name', m,
                                                              'time_range', jan.r)) AS a;

-- Retention: day 1 by signup day (Jan 1: U1 back, U2 not; Jan 2: U3 not);
-- week 1 by signup week (U2 back on day 8); month 1: nobody.
SELECT a->>'metric_name' AS metric, a->'value' AS value
FROM jan, unnest(ARRAY['day_1_retention', 'week_1_retention', 'month_1_retention']) AS m,
     LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'retention', 'metric_name', m,
                                                              'time_range', jan.r)) AS a;

-- Usage: users active per day (31 days; the busy ones shown) and per week;
-- 2 files by 3 active users over 31/7 weeks.
SELECT d->>'date' AS day, d->'value' AS users
FROM jan, LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'usage',
       'metric_name', 'daily_active_users', 'time_range', jan.r)) AS a,
     LATERAL jsonb_array_elements(a->'value') AS d
WHERE (d->>'value')::int > 0 OR d->>'date' = '2024-01-31';
SELECT jsonb_array_length(a->'value') AS days
FROM jan, LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'usage', 'time_range', jan.r)) AS a;
SELECT a->'value' AS weekly
FROM jan, LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'usage',
       'metric_name', 'weekly_active_users', 'time_range', jan.r)) AS a;
SELECT a->'value' AS uploads_per_user_per_week
FROM jan, LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'usage',
       'metric_name', 'avg_uploads_per_user_per_week', 'time_range', jan.r)) AS a;

-- The funnel: 3 signed up, 2 uploaded, 1 of them had an extraction, none
-- of those an entity.
SELECT a->'value' AS value, a->'metadata'->'steps' AS steps
FROM jan, LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'funnel', 'time_range', jan.r)) AS a;

-- Cohorts: one weekly cohort of 3; its curve (asked by any day of its
-- week): all active in week 0, U2 in week 1.
SELECT a->'value' AS cohorts
FROM jan, LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'cohort', 'time_range', jan.r)) AS a;
SELECT a->'value' AS curve, a->'metadata'->'cohort' AS cohort, a->'metadata'->'users' AS users
FROM jan, LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'cohort',
       'cohort', '2024-01-03', 'time_range', jan.r)) AS a;

-- The answer's shape, and its determinism.
SELECT a->'metric_type' AS type, a->'time_range' AS range, a->'metadata'->'description' IS NOT NULL AS described
FROM jan, LATERAL neotoma.get_product_analytics(jsonb_build_object('metric_type', 'activation', 'time_range', jan.r)) AS a;
SELECT neotoma.get_product_analytics(jsonb_build_object('metric_type', 'retention', 'time_range', r))
     = neotoma.get_product_analytics(jsonb_build_object('metric_type', 'retention', 'time_range', r)) AS same
FROM jan;

-- Bad requests.
SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field, r->'error'->>'message' AS message
FROM (VALUES
  ('{}'::jsonb),
  ('{"metric_type": "vibes"}'),
  ('{"metric_type": "usage", "metric_name": "day_1_retention"}'),
  ('{"metric_type": "activation", "metric_name": "activation_first_search_rate"}'),
  ('{"metric_type": "usage", "time_range": {"start": "2024-02-01", "end": "2024-01-01"}}'),
  ('{"metric_type": "usage", "time_range": {"start": "2020-01-01", "end": "2024-01-01"}}'),
  ('{"metric_type": "activation", "cohort": "2024-01-01"}'),
  ('{"metric_type": "cohort", "cohort": "the first one"}'),
  ('{"metric_type": "usage", "filters": {"platform": "ios"}}')
) AS t(args), LATERAL try_action('get_product_analytics', args) AS r;

-- Users are not operators: the metrics cover everyone, so they get nothing.
RESET ROLE;
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '26000000-0000-0000-0000-000000000001';
SELECT error_code(try_action('get_product_analytics', '{"metric_type": "usage"}')) AS as_user;
RESET ROLE;
ROLLBACK;
