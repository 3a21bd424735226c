-- retrieve_related_entities in one statement: a breadth-first walk from
-- entity $2 over current relationships (never to a deleted entity, nor over
-- a deleted relationship: lines marked 0.6 and 0.7, left out before those) of the types $3 (all when null) in
-- direction $4 ('outbound', 'inbound' or 'both'), up to $5 hops; at most $6
-- entities, nearest first; with their snapshots when $7. Entities outside the
-- workspaces $8 (text[]) are not walked to. Only relationships holding at
-- valid time $9 (microseconds) are walked.
--
-- walk holds (entity, hop) pairs; an entity's hop is the least it was
-- reached at. The walk re-expands entities it meets again at later hops
-- (a recursive query sees one level at a time), which the row cap bounds.
-- The relationships walked are those touching an entity expanded (reached
-- before the last hop), each at the hop it was first walked.
WITH RECURSIVE walk(id, hop) AS (
  SELECT $2::text, 0
  UNION
  SELECT x.other, w.hop + 1
  FROM walk w
  CROSS JOIN LATERAL (
    SELECT r.target_entity_id AS other FROM neotoma.relationships r
    WHERE $4 <> 'inbound' AND r.user_id = $1::uuid AND r.source_entity_id = w.id
      AND r.merged_into IS NULL AND ($3::text[] IS NULL OR r.relationship_type = ANY($3))
      AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
      AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($8::text[])) -- ws:some
      AND r.deleted_at IS NULL
      AND r.valid_during @> neotoma._from_micros($9) -- new
    UNION ALL
    SELECT r.source_entity_id FROM neotoma.relationships r
    WHERE $4 <> 'outbound' AND r.user_id = $1::uuid AND r.target_entity_id = w.id
      AND r.merged_into IS NULL AND ($3::text[] IS NULL OR r.relationship_type = ANY($3))
      AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
      AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($8::text[])) -- ws:some
      AND r.deleted_at IS NULL
      AND r.valid_during @> neotoma._from_micros($9) -- new
      ) x
  WHERE w.hop < $5
),
capped AS (SELECT id, hop FROM walk LIMIT 20 * $6),
reached AS (SELECT id, min(hop) AS hop FROM capped GROUP BY id),
ranked AS (
  SELECT id, hop, row_number() OVER (ORDER BY hop, id) AS n FROM reached WHERE hop > 0
),
-- The walk stops at the hop where the cap is passed (as a level-by-level
-- walk would): that hop's entities beyond the cap are left out.
cut AS (
  SELECT coalesce((SELECT hop FROM ranked WHERE n = $6 + 1),
                  CASE WHEN (SELECT count(*) FROM capped) >= 20 * $6 THEN (SELECT max(hop) FROM reached) END) AS hop
),
kept AS (SELECT id, hop FROM ranked WHERE n <= $6),
last_hop AS (
  SELECT coalesce((SELECT hop FROM cut), least($5, coalesce((SELECT max(hop) FROM kept), 0) + 1)) AS hop
),
walked AS (
  SELECT id, relationship_type, source_entity_id, target_entity_id, min(hop) AS hop FROM (
    SELECT r.id, r.relationship_type, r.source_entity_id, r.target_entity_id, f.hop + 1 AS hop
    FROM reached f JOIN neotoma.relationships r
      ON $4 <> 'inbound' AND r.user_id = $1::uuid AND r.source_entity_id = f.id
     AND r.merged_into IS NULL AND ($3::text[] IS NULL OR r.relationship_type = ANY($3))
     AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
     AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($8::text[])) -- ws:some
     AND r.deleted_at IS NULL
     AND r.valid_during @> neotoma._from_micros($9) -- new
    WHERE f.hop < (SELECT hop FROM last_hop)
    UNION ALL
    SELECT r.id, r.relationship_type, r.source_entity_id, r.target_entity_id, f.hop + 1
    FROM reached f JOIN neotoma.relationships r
      ON $4 <> 'outbound' AND r.user_id = $1::uuid AND r.target_entity_id = f.id
     AND r.merged_into IS NULL AND ($3::text[] IS NULL OR r.relationship_type = ANY($3))
     AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
     AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($8::text[])) -- ws:some
     AND r.deleted_at IS NULL
     AND r.valid_during @> neotoma._from_micros($9) -- new
    WHERE f.hop < (SELECT hop FROM last_hop)) e
  GROUP BY id, relationship_type, source_entity_id, target_entity_id
)
SELECT json_build_object(
  'entities', (SELECT coalesce(json_agg(CASE WHEN $7 THEN json_build_object(
                   'id', e.id, 'entity_type', e.entity_type, 'canonical_name', e.canonical_name,
                   'snapshot', coalesce(s.snapshot, '{}'), 'hop', k.hop)
                 ELSE json_build_object('id', e.id, 'entity_type', e.entity_type,
                   'canonical_name', e.canonical_name, 'hop', k.hop) END ORDER BY k.hop, k.id), '[]')
               FROM kept k
               JOIN neotoma.entities e ON e.user_id = $1::uuid AND e.id = k.id
               LEFT JOIN neotoma.entity_snapshots s ON $7 AND s.user_id = $1::uuid AND s.entity_id = k.id),
  'relationships', (SELECT coalesce(json_agg(json_build_object('id', w.id,
                        'relationship_type', w.relationship_type, 'source_entity_id', w.source_entity_id,
                        'target_entity_id', w.target_entity_id) ORDER BY w.hop, w.id), '[]')
                    FROM walked w),
  'total_entities', (SELECT count(*) FROM kept k JOIN neotoma.entities e ON e.user_id = $1::uuid AND e.id = k.id),
  'total_relationships', (SELECT count(*) FROM walked),
  'hops_traversed', (SELECT hop FROM last_hop),
  'truncated', (SELECT hop IS NOT NULL FROM cut))::text
