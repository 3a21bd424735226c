-- list_timeline_events: a page of events, newest first. $1 user, $2 event
-- type or NULL, $3 from (microseconds, inclusive) or NULL, $4 before
-- (microseconds, exclusive) or NULL, $5 source id or NULL, $6 entity id or
-- NULL, $7 limit, $8 offset, $9 the workspaces (text[]), $10 how many events
-- to count at most for the total (NULL: all; past it, the library reads a
-- long range's total from the counts of its days: timeline_total.sql).
-- Answers JSON text.
WITH t AS NOT MATERIALIZED (
  SELECT * FROM neotoma.timeline_events t
  WHERE t.user_id = $1::uuid
    AND ($2::text IS NULL OR t.event_type = $2)
    -- A range the index timeline_events_time serves, even in a kept plan;
    -- not materialized, so the page reads only its rows in index order.
    -- (CASE, not coalesce: row level security lets an index use only
    -- expressions it knows leak nothing, and coalesce is not one of them.)
    AND t.event_timestamp >= CASE WHEN $3 IS NULL THEN '-infinity'::timestamptz ELSE neotoma._from_micros($3) END
    AND t.event_timestamp < CASE WHEN $4 IS NULL THEN 'infinity'::timestamptz ELSE neotoma._from_micros($4) END
    AND ($5::text IS NULL OR t.source_id = $5::uuid)
    AND ($6::text IS NULL OR t.entity_id = $6)
    AND t.workspace = ($9::text[])[1] -- ws:one
    AND t.workspace = ANY($9::text[]) -- ws:many
    -- Not of deleted entities: a hashed set of their ids, read once from the
    -- index entities_deleted, which holds only those.
    AND t.entity_id NOT IN (SELECT d.id FROM neotoma.entities d
                            WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
    )
-- (json, not jsonb: the answer leaves as text, so it is never converted.)
SELECT json_build_object(
  'events', coalesce((SELECT json_agg(json_build_object('id', p.id, 'event_type', p.event_type,
      'event_timestamp', neotoma._iso(p.event_timestamp), 'source_id', p.source_id,
      'entity_ids', p.entity_ids, 'properties', p.properties)
    ORDER BY p.event_timestamp DESC, p.id)
    FROM (SELECT * FROM t ORDER BY event_timestamp DESC, id LIMIT $7 OFFSET $8) p), '[]'),
  'total', (SELECT count(*) FROM (SELECT 1 FROM t LIMIT $10) c), 'limit', $7, 'offset', $8)::text
