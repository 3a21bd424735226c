-- get_product_analytics, second half: the metric's value from its counters
-- (product_analytics.sql's, of one server or summed over a router's
-- partitions). $1 metric name, $2 the counters (jsonb), $3 start and $4 end
-- of the range (microseconds; the end exclusive), $5 the cohort's week or
-- NULL. Answers the JSON text of {value, details}: value a number or
-- [{date, value}] (dates in order), details what the metadata adds (the
-- funnel's steps, the users counted). Shares are rounded to 4 places.
WITH c AS (SELECT $2::jsonb AS c),
bounds AS (SELECT neotoma._from_micros($3) AS lo, neotoma._from_micros($4) AS hi),
days AS (
  SELECT count(*) AS n FROM bounds b,
    generate_series((b.lo AT TIME ZONE 'UTC')::date, ((b.hi - interval '1 microsecond') AT TIME ZONE 'UTC')::date,
                    interval '1 day') d),
-- The counters by date, in date order.
dated AS (
  SELECT d.key::date AS day, d.value AS v FROM c, jsonb_each(c.c->'dates') d),
users AS (SELECT coalesce((c.c->>'users')::bigint, 0) AS n FROM c)
SELECT CASE
  WHEN $1 LIKE 'activation%' THEN
    (SELECT json_build_object('value', CASE WHEN u.n = 0 THEN 0 ELSE round((c.c->>'ok')::numeric / u.n, 4) END,
                              'details', json_build_object('users', u.n)) FROM c, users u)
  WHEN $1 LIKE '%retention' THEN
    json_build_object('value', coalesce((
        SELECT json_agg(json_build_object('date', p.key::date,
                                          'value', round((p.value->>'back')::numeric / (p.value->>'users')::bigint, 4))
                        ORDER BY p.key::date)
        FROM c, jsonb_each(c.c->'periods') p), '[]'::json),
      'details', json_build_object('users', (SELECT n FROM users)))
  WHEN $1 IN ('daily_active_users', 'weekly_active_users') THEN
    json_build_object('value', coalesce((
        SELECT json_agg(json_build_object('date', d.day, 'value', d.v::text::bigint) ORDER BY d.day) FROM dated d), '[]'::json),
      'details', json_build_object('users', (SELECT n FROM users)))
  WHEN $1 = 'avg_uploads_per_user_per_week' THEN
    (SELECT json_build_object('value', coalesce(round((c.c->>'uploads')::numeric / nullif(u.n, 0) / (d.n / 7.0), 4), 0),
                              'details', json_build_object('users', u.n))
     FROM c, users u, days d)
  WHEN $1 = 'signup_to_timeline' THEN
    (SELECT json_build_object(
       'value', CASE WHEN (c.c->>'signup')::bigint = 0 THEN 0
                     ELSE round((c.c->>'timeline')::numeric / (c.c->>'signup')::bigint, 4) END,
       'details', json_build_object('steps', (
         SELECT json_agg(json_build_object('step', s.step, 'users', coalesce((c.c->>s.step)::bigint, 0)) ORDER BY s.n)
         FROM unnest(ARRAY['signup', 'upload', 'extraction', 'entity', 'timeline']) WITH ORDINALITY AS s(step, n))))
     FROM c)
  WHEN $5 IS NULL THEN
    json_build_object('value', coalesce((
        SELECT json_agg(json_build_object('date', d.day, 'value', d.v::text::bigint) ORDER BY d.day) FROM dated d), '[]'::json),
      'details', json_build_object('users', (SELECT n FROM users)))
  ELSE
    json_build_object('value', coalesce((
        SELECT json_agg(json_build_object('date', d.day,
                                          'value', coalesce(round(d.v::text::numeric / nullif(u.n, 0), 4), 0)) ORDER BY d.day)
        FROM dated d, users u), '[]'::json),
      'details', json_build_object('users', (SELECT n FROM users)))
END::text
