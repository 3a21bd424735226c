-- get_product_analytics: the product metrics, computed from the truth
-- tables across users (run as the extension's owner, for operators only;
-- answers aggregates, never a user or a row). $1 metric name, $2 start and
-- $3 end of the range (microseconds since the epoch; the end exclusive),
-- $4 the cohort's week (a date) or NULL. Days and weeks are UTC; weeks start
-- on Monday.
--   signup: a user's first stored source;
--   active on a day: stored a source that day;
--   upload: a source of type file; extraction: a completed interpretation
--   run of a file (not the structured one); entity: an entity created;
--   timeline event: an event of an observation made then.
-- Answers the JSON text of {value, details}: value a number or
-- [{date, value}], details what the metadata adds (the funnel's steps,
-- the users counted).
WITH bounds AS (SELECT neotoma._from_micros($2) AS lo, neotoma._from_micros($3) AS hi),
cohort AS (SELECT date_trunc('week', $4::date)::date AS week),
firsts AS (SELECT user_id, min(created_at) AS signup FROM neotoma.sources GROUP BY user_id),
signups AS (
  SELECT f.user_id, f.signup, (f.signup AT TIME ZONE 'UTC')::date AS day
  FROM firsts f, bounds b WHERE f.signup >= b.lo AND f.signup < b.hi),
-- Each user's steps; a step is looked up only for the metric that needs it.
steps AS (
  SELECT s.user_id, s.signup, s.day,
    $1 = 'activation_first_upload_rate' AND EXISTS (SELECT 1 FROM neotoma.sources x WHERE x.user_id = s.user_id AND x.source_type = 'file'
            AND x.created_at < s.signup + interval '1 day') AS upload_1d,
    $1 = 'activation_first_extraction_rate' AND EXISTS (SELECT 1 FROM neotoma.interpretation_runs r WHERE r.user_id = s.user_id
            AND r.interpreter <> 'structured' AND r.status = 'completed'
            AND r.started_at < s.signup + interval '1 day') AS extraction_1d,
    $1 = 'activation_first_entity_rate' AND EXISTS (SELECT 1 FROM neotoma.entities e WHERE e.user_id = s.user_id
            AND e.created_at < s.signup + interval '1 day') AS entity_1d,
    $1 = 'activation_first_event_rate' AND EXISTS (SELECT 1 FROM neotoma.timeline_events t
            JOIN neotoma.observations o ON o.user_id = t.user_id AND o.id = t.observation_id
            WHERE t.user_id = s.user_id AND o.created_at < s.signup + interval '1 day') AS event_1d,
    $1 = 'signup_to_timeline' AND EXISTS (SELECT 1 FROM neotoma.sources x WHERE x.user_id = s.user_id AND x.source_type = 'file') AS upload,
    $1 = 'signup_to_timeline' AND EXISTS (SELECT 1 FROM neotoma.interpretation_runs r WHERE r.user_id = s.user_id
            AND r.interpreter <> 'structured' AND r.status = 'completed') AS extraction,
    $1 = 'signup_to_timeline' AND EXISTS (SELECT 1 FROM neotoma.entities e WHERE e.user_id = s.user_id) AS entity,
    $1 = 'signup_to_timeline' AND EXISTS (SELECT 1 FROM neotoma.timeline_events t WHERE t.user_id = s.user_id) AS event,
    $1 = 'day_1_retention' AND EXISTS (SELECT 1 FROM neotoma.sources x WHERE x.user_id = s.user_id
            AND (x.created_at AT TIME ZONE 'UTC')::date = s.day + 1) AS back_day_1,
    $1 = 'week_1_retention' AND EXISTS (SELECT 1 FROM neotoma.sources x WHERE x.user_id = s.user_id
            AND x.created_at >= s.signup + interval '7 days' AND x.created_at < s.signup + interval '14 days') AS back_week_1,
    $1 = 'month_1_retention' AND EXISTS (SELECT 1 FROM neotoma.sources x WHERE x.user_id = s.user_id
            AND x.created_at >= s.signup + interval '30 days' AND x.created_at < s.signup + interval '60 days') AS back_month_1
  FROM signups s
  WHERE $1 LIKE 'activation%' OR $1 LIKE '%retention' OR $1 = 'signup_to_timeline'),
activity AS (
  SELECT x.user_id, (x.created_at AT TIME ZONE 'UTC')::date AS day, x.source_type
  FROM neotoma.sources x, bounds b WHERE x.created_at >= b.lo AND x.created_at < b.hi),
days AS (
  SELECT d::date AS day FROM bounds b,
    generate_series((b.lo AT TIME ZONE 'UTC')::date, ((b.hi - interval '1 microsecond') AT TIME ZONE 'UTC')::date,
                    interval '1 day') d),
rate AS (SELECT CASE WHEN count(*) = 0 THEN 0 ELSE round(count(*) FILTER (WHERE ok)::numeric / count(*), 4) END AS value,
                count(*) AS users
         FROM (SELECT CASE $1 WHEN 'activation_first_upload_rate' THEN upload_1d
                              WHEN 'activation_first_extraction_rate' THEN extraction_1d
                              WHEN 'activation_first_entity_rate' THEN entity_1d
                              ELSE event_1d END AS ok FROM steps) t),
cohort_of AS (
  SELECT s.*, CASE $1 WHEN 'day_1_retention' THEN s.day
                      WHEN 'week_1_retention' THEN date_trunc('week', s.day)::date
                      ELSE date_trunc('month', s.day)::date END AS period,
         CASE $1 WHEN 'day_1_retention' THEN back_day_1 WHEN 'week_1_retention' THEN back_week_1
                 ELSE back_month_1 END AS back
  FROM steps s),
curve AS (
  SELECT w::date AS week,
         round(count(DISTINCT a.user_id)::numeric / nullif((SELECT count(*) FROM signups s
                 WHERE date_trunc('week', s.day)::date = (SELECT week FROM cohort)), 0), 4) AS value
  FROM bounds b,
       generate_series((SELECT week FROM cohort), (b.hi AT TIME ZONE 'UTC')::date - 1, interval '1 week') w
  LEFT JOIN neotoma.sources a ON (a.created_at AT TIME ZONE 'UTC')::date >= w::date
       AND (a.created_at AT TIME ZONE 'UTC')::date < w::date + 7
       AND a.user_id IN (SELECT s.user_id FROM signups s WHERE date_trunc('week', s.day)::date = (SELECT week FROM cohort))
  WHERE $4 IS NOT NULL
  GROUP BY w)
SELECT CASE
  WHEN $1 LIKE 'activation%' THEN
    (SELECT json_build_object('value', value, 'details', json_build_object('users', users)) FROM rate)
  WHEN $1 LIKE '%retention' THEN
    json_build_object('value', coalesce((SELECT json_agg(json_build_object('date', period, 'value', v) ORDER BY period)
      FROM (SELECT period, round(avg(back::int), 4) AS v FROM cohort_of GROUP BY period) p), '[]'::json),
      'details', json_build_object('users', (SELECT count(*) FROM signups)))
  WHEN $1 = 'daily_active_users' THEN
    json_build_object('value', (SELECT json_agg(json_build_object('date', d.day,
        'value', (SELECT count(DISTINCT a.user_id) FROM activity a WHERE a.day = d.day)) ORDER BY d.day) FROM days d),
      'details', json_build_object('users', (SELECT count(DISTINCT user_id) FROM activity)))
  WHEN $1 = 'weekly_active_users' THEN
    json_build_object('value', coalesce((SELECT json_agg(json_build_object('date', w, 'value', n) ORDER BY w)
      FROM (SELECT w.w, (SELECT count(DISTINCT a.user_id) FROM activity a
                         WHERE date_trunc('week', a.day)::date = w.w) AS n
            FROM (SELECT DISTINCT date_trunc('week', d.day)::date AS w FROM days d) w) x), '[]'::json),
      'details', json_build_object('users', (SELECT count(DISTINCT user_id) FROM activity)))
  WHEN $1 = 'avg_uploads_per_user_per_week' THEN
    json_build_object('value', coalesce(round(
        (SELECT count(*) FROM activity WHERE source_type = 'file')::numeric
        / nullif((SELECT count(DISTINCT user_id) FROM activity), 0)
        / ((SELECT count(*) FROM days) / 7.0), 4), 0),
      'details', json_build_object('users', (SELECT count(DISTINCT user_id) FROM activity)))
  WHEN $1 = 'signup_to_timeline' THEN
    (SELECT json_build_object(
       'value', CASE WHEN count(*) = 0 THEN 0
                     ELSE round(count(*) FILTER (WHERE upload AND extraction AND entity AND event)::numeric / count(*), 4) END,
       'details', json_build_object('steps', json_build_array(
         json_build_object('step', 'signup', 'users', count(*)),
         json_build_object('step', 'upload', 'users', count(*) FILTER (WHERE upload)),
         json_build_object('step', 'extraction', 'users', count(*) FILTER (WHERE upload AND extraction)),
         json_build_object('step', 'entity', 'users', count(*) FILTER (WHERE upload AND extraction AND entity)),
         json_build_object('step', 'timeline', 'users', count(*) FILTER (WHERE upload AND extraction AND entity AND event)))))
     FROM steps)
  WHEN $4 IS NULL THEN
    json_build_object('value', coalesce((SELECT json_agg(json_build_object('date', w, 'value', n) ORDER BY w)
      FROM (SELECT date_trunc('week', day)::date AS w, count(*) AS n FROM signups GROUP BY 1) c), '[]'::json),
      'details', json_build_object('users', (SELECT count(*) FROM signups)))
  ELSE
    json_build_object('value', coalesce((SELECT json_agg(json_build_object('date', week, 'value', coalesce(value, 0)) ORDER BY week)
      FROM curve), '[]'::json),
      'details', json_build_object('users', (SELECT count(*) FROM signups WHERE date_trunc('week', day)::date = (SELECT week FROM cohort))))
END::text
