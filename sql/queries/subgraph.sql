-- A subgraph: the current (not merged, not deleted) entities named by $2
-- (text[], in that order), each with its snapshot and latest observations
-- (theirs and those of the entities merged into them, newest first, at most
-- $3), the current relationships whose both ends are among them, and the
-- ids that name none (or one outside the workspaces $4, text[]). $1 user;
-- $5 a valid time (microseconds): relationships not holding then are left out.
WITH ids AS (
  SELECT t.id, min(t.ord) AS ord FROM unnest($2::text[]) WITH ORDINALITY AS t(id, ord) GROUP BY t.id),
found AS (
  SELECT i.ord, e.id, e.entity_type, e.canonical_name, s.snapshot, s.observation_count
  FROM ids i
  CROSS JOIN LATERAL (SELECT e.id, e.entity_type, e.canonical_name FROM neotoma.entities e
                      WHERE e.user_id = $1::uuid AND e.id = i.id
                        AND e.merged_into IS NULL AND e.deleted_at IS NULL
                        AND e.workspace = ANY($4::text[])
                      OFFSET 0) e
  CROSS JOIN LATERAL (SELECT s.snapshot, s.observation_count FROM neotoma.entity_snapshots s
                      WHERE s.user_id = $1::uuid AND s.entity_id = e.id OFFSET 0) s)
SELECT json_build_object(
  'entities', coalesce((
    SELECT json_agg(json_build_object(
             'entity_id', f.id, 'entity_type', f.entity_type, 'canonical_name', f.canonical_name,
             'snapshot', f.snapshot, 'observation_count', f.observation_count,
             'observations', (
               SELECT coalesce(json_agg(json_build_object('id', o.id, 'kind', o.kind, 'source_id', o.source_id,
                                          'observed_at', neotoma._iso(o.observed_at), 'fields', o.fields)
                                        ORDER BY o.observed_at DESC, o.id), '[]')
               FROM (SELECT o.id, o.kind, o.source_id, o.observed_at, o.fields FROM neotoma.observations o
                     WHERE o.user_id = $1::uuid
                       -- (IN of a UNION: `= ANY (ARRAY[f.id] || ARRAY(…))` is not
                       -- leakproof, and under row level security it read
                       -- every observation of the user, 100 ms per entity
                       -- at 200,000 entities.)
                       AND o.entity_id IN (SELECT f.id UNION ALL SELECT m.id FROM neotoma.entities m
                                           WHERE m.user_id = $1::uuid AND m.merged_into = f.id)
                     ORDER BY o.observed_at DESC, o.id LIMIT $3) o))
           ORDER BY f.ord)
    FROM found f), '[]'),
  'relationships', coalesce((
    SELECT json_agg(json_build_object('id', r.id, 'relationship_type', r.relationship_type,
             'source_entity_id', r.source_entity_id, 'target_entity_id', r.target_entity_id,
             'snapshot', r.snapshot
             , 'valid_during', neotoma._valid_during(r.valid_during), 'timed', neotoma._relationship_timed(r.user_id, r.id) -- new
             ) ORDER BY r.id)
    FROM neotoma.relationships r
    WHERE r.user_id = $1::uuid AND r.source_entity_id IN (SELECT id FROM found)
      AND r.target_entity_id IN (SELECT id FROM found)
      AND r.merged_into IS NULL AND r.deleted_at IS NULL
      AND r.valid_during @> neotoma._from_micros($5) -- new
      ), '[]'),
  'missing', coalesce((SELECT json_agg(i.id ORDER BY i.ord) FROM ids i
                       WHERE i.id NOT IN (SELECT id FROM found)), '[]'))::text
