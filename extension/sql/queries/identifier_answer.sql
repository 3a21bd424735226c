-- retrieve_entity_by_identifier, after identifier_hits_exact.sql or
-- identifier_hits_partial.sql (which define `hits`): the entities found, by
-- type and name, at most 100, as JSON text.
m AS (SELECT entity_id, array_agg(DISTINCT field ORDER BY field) AS fields FROM hits GROUP BY entity_id),
r AS (
  SELECT e.id, e.entity_type, e.canonical_name, s.snapshot, m.fields
  FROM m JOIN neotoma.entities e ON e.user_id = $1::uuid AND e.id = m.entity_id
  LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
  WHERE e.merged_into IS NULL AND ($2::text IS NULL OR e.entity_type = $2)
  ORDER BY e.entity_type, e.canonical_name, e.id
  LIMIT 100)
SELECT jsonb_build_object(
  'entities', coalesce((SELECT jsonb_agg(jsonb_build_object(
        'id', r.id, 'entity_type', r.entity_type, 'canonical_name', r.canonical_name,
        'snapshot', r.snapshot, 'matched_fields', to_jsonb(r.fields))
      ORDER BY r.entity_type, r.canonical_name, r.id) FROM r), '[]'),
  'total', (SELECT count(*) FROM r),
  'match_type', CASE WHEN NOT EXISTS (SELECT 1 FROM r) THEN 'none' ELSE $7 END)::text
