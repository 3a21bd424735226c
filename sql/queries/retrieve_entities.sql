-- retrieve_entities of any type: a page of entities, most recently observed
-- first. $1 user, $2 unused (the type: retrieve_entities_of_type.sql), $3
-- include merged ('true'/'false'), $4 include snapshots, $5 limit, $6
-- offset, $7 include deleted, $8 the workspaces (text[]). The page is read in the order of the index
-- entity_snapshots_recent_any; only its rows are then read whole. Every entity has a snapshot row (the fold
-- writes it with the entity's first observation; verify() reports one
-- missing).
-- Each selected workspace's first rows from the index, in its order, then
-- the page of them all: one workspace reads its first page only, several
-- a page each (not a sort of every row).
WITH page AS (
  SELECT p.* FROM unnest($8::text[]) AS w(name)
  CROSS JOIN LATERAL (
    SELECT s.entity_id AS id, s.last_observation_at, e.entity_type, e.canonical_name, e.merged_into
      , e.deleted_at, e.deleted_reason
      , s.workspace
    FROM neotoma.entity_snapshots s
    JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id
    WHERE s.user_id = $1::uuid
      AND s.workspace = w.name
      AND ($3 = 'true' OR e.merged_into IS NULL)
      AND ($7 = 'true' OR e.deleted_at IS NULL)
    ORDER BY s.last_observation_at DESC NULLS LAST, s.entity_id
    -- limit + offset, which must not overflow at any offset.
    LIMIT $5 + least($6, 9223372036854775807 - $5)) p
  ORDER BY p.last_observation_at DESC NULLS LAST, p.id
  LIMIT $5 OFFSET $6)
-- Built as json text (the answer is read as text): an entity without a
-- snapshot asked for, or not merged, has them as null, which the answer
-- leaves out.
SELECT json_build_object(
  'entities', coalesce((
    SELECT json_agg(json_build_object(
             'id', page.id, 'entity_type', page.entity_type, 'canonical_name', page.canonical_name,
             'observation_count', s.observation_count,
             'last_observation_at', neotoma._iso(page.last_observation_at),
             'snapshot', CASE WHEN $4 = 'true' THEN s.snapshot END,
             'merged_into', page.merged_into
             , 'workspace', page.workspace
             , 'deleted_at', neotoma._iso(page.deleted_at), 'deleted_reason', page.deleted_reason
             )
           ORDER BY page.last_observation_at DESC NULLS LAST, page.id)
    FROM page
    -- Each row's snapshot by key (OFFSET 0 keeps it a probe: a hash join
    -- would read every snapshot of the user).
    JOIN LATERAL (SELECT s.observation_count, s.snapshot FROM neotoma.entity_snapshots s
                  WHERE s.user_id = $1::uuid AND s.entity_id = page.id OFFSET 0) s ON true), '[]'),
  -- Exact, in constant time: the sum of the (user, type) count rows.
  'total', (SELECT coalesce(sum(CASE WHEN $3 = 'true' THEN c.total ELSE c.current END), 0)::bigint
            FROM neotoma.entity_counts c WHERE c.user_id = $1::uuid
              AND c.workspace = ANY($8::text[])
            ),
  'excluded_merged', $3 <> 'true', 'limit', $5, 'offset', $6)::text
