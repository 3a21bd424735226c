-- retrieve_entities of one type: a page of entities, most recently observed
-- first. $1 user, $2 entity type, $3 include merged ('true'/'false'), $4
-- include snapshots, $5 limit, $6 offset. The page is read in the order of
-- the index entity_snapshots_recent, so the first pages cost the same
-- whatever the number of entities; only its rows are then read whole. (Of
-- any type: retrieve_entities.sql. The two differ only in the type filter,
-- kept out of the other so that each has one plan.) Every entity has a
-- snapshot row (the fold writes it with the entity's first observation;
-- verify() reports one missing).
WITH page AS (
  SELECT s.entity_id AS id, s.last_observation_at
  FROM neotoma.entity_snapshots s
  JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id
  WHERE s.user_id = $1::uuid AND s.entity_type = $2
    AND ($3 = 'true' OR e.merged_into IS NULL)
  ORDER BY s.last_observation_at DESC NULLS LAST, s.entity_id
  LIMIT $5 OFFSET $6)
SELECT jsonb_build_object(
  'entities', coalesce((
    SELECT jsonb_agg(jsonb_build_object(
             'id', e.id, 'entity_type', e.entity_type, 'canonical_name', e.canonical_name,
             'observation_count', s.observation_count,
             'last_observation_at', neotoma._iso(s.last_observation_at))
           || CASE WHEN $4 = 'true' THEN jsonb_build_object('snapshot', s.snapshot) ELSE '{}' END
           || CASE WHEN e.merged_into IS NOT NULL THEN jsonb_build_object('merged_into', e.merged_into)
                   ELSE '{}' END
           ORDER BY page.last_observation_at DESC NULLS LAST, page.id)
    FROM page
    JOIN neotoma.entities e ON e.user_id = $1::uuid AND e.id = page.id
    JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id), '[]'),
  -- Exact, in constant time: the sum of the (user, type) count rows.
  'total', (SELECT coalesce(sum(CASE WHEN $3 = 'true' THEN c.total ELSE c.current END), 0)::bigint
            FROM neotoma.entity_counts c WHERE c.user_id = $1::uuid AND c.entity_type = $2),
  'excluded_merged', $3 <> 'true', 'limit', $5, 'offset', $6)::text
