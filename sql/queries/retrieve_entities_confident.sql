-- retrieve_entities with min_confidence: a page of the entities that have
-- a field whose value's rating passes $8, most recently observed first,
-- each snapshot showing only such fields. $1 user, $2 entity type (NULL:
-- any), $3 include merged ('true'/'false'), $4 include snapshots, $5
-- limit, $6 offset, $7 include deleted, $9 the workspaces (text[]). Every snapshot of the user (of the
-- type) is looked at: the total is exact, and costs what a scan costs. The
-- passing rows keep only their keys (wide rows would spill); the page's
-- rows are then read whole.
WITH passing AS (
  SELECT s.entity_id AS id, s.last_observation_at
  FROM neotoma.entity_snapshots s
  JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id
  WHERE s.user_id = $1::uuid AND ($2::text IS NULL OR s.entity_type = $2)
    AND ($3 = 'true' OR e.merged_into IS NULL)
    AND ($7 = 'true' OR e.deleted_at IS NULL)
    AND s.workspace = ANY($9::text[])
    AND EXISTS (SELECT FROM jsonb_each(s.field_provenance) f
                WHERE neotoma._confidence_passes(f.value ->> 'confidence', $8))),
page AS (
  SELECT * FROM passing ORDER BY last_observation_at DESC NULLS LAST, id LIMIT $5 OFFSET $6)
SELECT json_build_object(
  'entities', coalesce((
    SELECT json_agg(json_build_object(
             'id', page.id, 'entity_type', e.entity_type, 'canonical_name', e.canonical_name,
             'observation_count', s.observation_count,
             'last_observation_at', neotoma._iso(page.last_observation_at),
             'snapshot', CASE WHEN $4 = 'true' THEN neotoma._confident_fields(s.snapshot, s.field_provenance, $8) END,
             'merged_into', e.merged_into,
             'deleted_at', neotoma._iso(e.deleted_at), 'deleted_reason', e.deleted_reason
             , 'workspace', e.workspace
             )
           ORDER BY page.last_observation_at DESC NULLS LAST, page.id)
    FROM page
    JOIN neotoma.entities e ON e.user_id = $1::uuid AND e.id = page.id
    JOIN neotoma.entity_snapshots s ON s.user_id = $1::uuid AND s.entity_id = page.id), '[]'),
  'total', (SELECT count(*) FROM passing),
  'excluded_merged', $3 <> 'true', 'limit', $5, 'offset', $6)::text
