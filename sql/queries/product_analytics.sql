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
-- Answers the JSON text of the metric's counters, each a sum over users
-- (so the counters of several servers, whose users are apart, add up:
-- docs/scale-out.md); analytics_finish.sql makes the value of them.
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
rate AS (SELECT count(*) FILTER (WHERE ok) AS ok, count(*) AS users
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
  SELECT w::date AS week, count(DISTINCT a.user_id) AS active
  FROM bounds b,
       generate_series((SELECT week FROM cohort), ((b.hi - interval '1 microsecond') AT TIME ZONE 'UTC')::date,
                       interval '1 week') w
  LEFT JOIN neotoma.sources a ON (a.created_at AT TIME ZONE 'UTC')::date >= w::date
       AND (a.created_at AT TIME ZONE 'UTC')::date < w::date + 7
       AND a.user_id IN (SELECT s.user_id FROM signups s WHERE date_trunc('week', s.day)::date = (SELECT week FROM cohort))
  WHERE $4 IS NOT NULL
  GROUP BY w)
SELECT CASE
  WHEN $1 LIKE 'activation%' THEN (SELECT json_build_object('ok', ok, 'users', users) FROM rate)
  WHEN $1 LIKE '%retention' THEN
    json_build_object('users', (SELECT count(*) FROM signups),
      'periods', coalesce((SELECT json_object_agg(period, json_build_object('back', back, 'users', users))
        FROM (SELECT period, count(*) FILTER (WHERE back) AS back, count(*) AS users FROM cohort_of GROUP BY period) p), '{}'))
  WHEN $1 = 'daily_active_users' THEN
    json_build_object('users', (SELECT count(DISTINCT user_id) FROM activity),
      'dates', coalesce((SELECT json_object_agg(d.day, (SELECT count(DISTINCT a.user_id) FROM activity a WHERE a.day = d.day))
        FROM days d), '{}'))
  WHEN $1 = 'weekly_active_users' THEN
    json_build_object('users', (SELECT count(DISTINCT user_id) FROM activity),
      'dates', coalesce((SELECT json_object_agg(w.w, (SELECT count(DISTINCT a.user_id) FROM activity a
                                                      WHERE date_trunc('week', a.day)::date = w.w))
        FROM (SELECT DISTINCT date_trunc('week', d.day)::date AS w FROM days d) w), '{}'))
  WHEN $1 = 'avg_uploads_per_user_per_week' THEN
    json_build_object('uploads', (SELECT count(*) FROM activity WHERE source_type = 'file'),
      'users', (SELECT count(DISTINCT user_id) FROM activity))
  WHEN $1 = 'signup_to_timeline' THEN
    (SELECT json_build_object('signup', count(*), 'upload', count(*) FILTER (WHERE upload),
       'extraction', count(*) FILTER (WHERE upload AND extraction),
       'entity', count(*) FILTER (WHERE upload AND extraction AND entity),
       'timeline', count(*) FILTER (WHERE upload AND extraction AND entity AND event))
     FROM steps)
  WHEN $4 IS NULL THEN
    json_build_object('users', (SELECT count(*) FROM signups),
      'dates', coalesce((SELECT json_object_agg(w, n)
        FROM (SELECT date_trunc('week', day)::date AS w, count(*) AS n FROM signups GROUP BY 1) c), '{}'))
  ELSE
    json_build_object('users', (SELECT count(*) FROM signups WHERE date_trunc('week', day)::date = (SELECT week FROM cohort)),
      'dates', coalesce((SELECT json_object_agg(week, active) FROM curve), '{}'))
END::text
