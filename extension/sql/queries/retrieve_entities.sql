-- retrieve_entities: a page of entities, most recently observed first.
-- $1 user, $2 entity type or NULL, $3 include merged ('true'/'false'),
-- $4 include snapshots, $5 limit, $6 offset.
WITH e AS (
  SELECT e.id, e.entity_type, e.canonical_name, e.merged_into, s.snapshot,
         coalesce(s.observation_count, 0) AS observation_count, s.last_observation_at
  FROM neotoma.entities e
  LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
  WHERE e.user_id = $1::uuid AND ($2::text IS NULL OR e.entity_type = $2)
    AND ($3 = 'true' OR e.merged_into IS NULL))
SELECT jsonb_build_object(
  'entities', coalesce((
    SELECT jsonb_agg(jsonb_build_object(
             'id', p.id, 'entity_type', p.entity_type, 'canonical_name', p.canonical_name,
             'observation_count', p.observation_count,
             'last_observation_at', neotoma._iso(p.last_observation_at))
           || CASE WHEN $4 = 'true' THEN jsonb_build_object('snapshot', coalesce(p.snapshot, '{}'))
                   ELSE '{}' END
           || CASE WHEN p.merged_into IS NOT NULL THEN jsonb_build_object('merged_into', p.merged_into)
                   ELSE '{}' END
           ORDER BY p.last_observation_at DESC NULLS LAST, p.id)
    FROM (SELECT * FROM e ORDER BY last_observation_at DESC NULLS LAST, id
          LIMIT $5 OFFSET $6) p), '[]'),
  'total', (SELECT count(*) FROM e),
  'excluded_merged', $3 <> 'true', 'limit', $5, 'offset', $6)
