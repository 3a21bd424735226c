-- list_resources: the neotoma:// resources of a user's data. $1 user, $2
-- the workspaces (text[]), $3 the URIs' prefix (neotoma://, or pinned to a
-- workspace).
WITH types AS (
  SELECT entity_type, count(*) AS n FROM neotoma.entities
  WHERE user_id = $1::uuid AND merged_into IS NULL
    AND deleted_at IS NULL
    AND workspace = ANY($2::text[])
  GROUP BY entity_type),
months AS (
  SELECT to_char(event_timestamp AT TIME ZONE 'UTC', 'YYYY') AS y,
         to_char(event_timestamp AT TIME ZONE 'UTC', 'YYYY-MM') AS ym, count(*) AS n
  FROM neotoma.timeline_events WHERE user_id = $1::uuid
    AND workspace = ANY($2::text[])
  GROUP BY 1, 2)
SELECT jsonb_build_object('resources',
  jsonb_build_array(jsonb_build_object('uri', $3 || 'sources', 'name', 'Sources',
    'description', (SELECT count(*) FROM neotoma.sources WHERE user_id = $1::uuid
                      AND workspace = ANY($2::text[])
                   ) || ' source materials',
    'mime_type', 'application/json'))
  || coalesce((SELECT jsonb_agg(jsonb_build_object('uri', $3 || 'entities/' || entity_type,
        'name', entity_type || ' entities', 'description', n || ' entities of type ' || entity_type,
        'mime_type', 'application/json') ORDER BY entity_type) FROM types), '[]')
  || coalesce((SELECT jsonb_agg(jsonb_build_object('uri', $3 || 'timeline/' || y,
        'name', 'Timeline ' || y, 'description', n || ' timeline events in ' || y,
        'mime_type', 'application/json') ORDER BY y DESC)
      FROM (SELECT y, sum(n) AS n FROM months GROUP BY y) years), '[]')
  || coalesce((SELECT jsonb_agg(jsonb_build_object('uri', $3 || 'timeline/' || ym,
        'name', 'Timeline ' || ym, 'description', n || ' timeline events in ' || ym,
        'mime_type', 'application/json') ORDER BY ym DESC) FROM months), '[]'))
