-- timeline_total: how many events a listing of a long range has (no
-- source or entity asked for), from the counts of its whole days
-- (neotoma.timeline_counts) less the events of deleted entities on those
-- days, and its first and last part days counted event by event. $1 user,
-- $2 event type or NULL, $3 from (microseconds, inclusive) or NULL, $4
-- before (microseconds, exclusive) or NULL, $5 the workspaces (text[]).
-- Days are UTC's. Planned once (a generic plan): the listing itself is
-- planned for each call's values.
WITH r AS MATERIALIZED (
  SELECT CASE WHEN $3::bigint IS NULL THEN '-infinity'::timestamptz ELSE neotoma._from_micros($3) END AS lo,
         CASE WHEN $4::bigint IS NULL THEN 'infinity'::timestamptz ELSE neotoma._from_micros($4) END AS hi,
         -- The first whole day (from rounded up) and the day the range ends in.
         CASE WHEN $3::bigint IS NULL THEN '-infinity'::date
              ELSE (neotoma._from_micros($3 + 86399999999) AT TIME ZONE 'UTC')::date END AS first_day,
         CASE WHEN $4::bigint IS NULL THEN 'infinity'::date
              ELSE (neotoma._from_micros($4) AT TIME ZONE 'UTC')::date END AS end_day),
d AS MATERIALIZED (
  SELECT r.*, r.first_day::timestamp AT TIME ZONE 'UTC' AS whole_from,
         greatest(r.first_day, r.end_day)::timestamp AT TIME ZONE 'UTC' AS whole_to FROM r),
deleted AS MATERIALIZED (
  SELECT e.id FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.deleted_at IS NOT NULL)
SELECT to_jsonb(
  (SELECT coalesce(sum(c.events), 0) FROM neotoma.timeline_counts c, d
   WHERE c.user_id = $1::uuid AND c.workspace = ANY($5::text[])
     AND c.day >= d.first_day AND c.day < d.end_day AND ($2::text IS NULL OR c.event_type = $2))
  - (SELECT count(*) FROM neotoma.timeline_events x, d
     WHERE x.user_id = $1::uuid AND x.workspace = ANY($5::text[]) AND x.entity_id IN (SELECT id FROM deleted)
       AND x.event_timestamp >= d.whole_from AND x.event_timestamp < d.whole_to
       AND ($2::text IS NULL OR x.event_type = $2))
  -- The part days: before the first whole day, and from the end of the
  -- last (the whole range when it holds no whole day).
  + (SELECT count(*) FROM neotoma.timeline_events t, d
     WHERE t.user_id = $1::uuid AND t.workspace = ANY($5::text[])
       AND t.event_timestamp >= d.lo AND t.event_timestamp < least(d.whole_from, d.hi)
       AND ($2::text IS NULL OR t.event_type = $2) AND t.entity_id NOT IN (SELECT id FROM deleted))
  + (SELECT count(*) FROM neotoma.timeline_events t, d
     WHERE t.user_id = $1::uuid AND t.workspace = ANY($5::text[])
       AND t.event_timestamp >= greatest(d.whole_to, d.lo) AND t.event_timestamp < d.hi
       AND ($2::text IS NULL OR t.event_type = $2) AND t.entity_id NOT IN (SELECT id FROM deleted)))
