-- retrieve_entity_by_identifier: entities whose identifiers match. $1 user,
-- $2 entity type or NULL, $3 exact candidates (text[]), $4 NULL for exact
-- matching, else field -> LIKE pattern (jsonb), $5 the identifier as given
-- (an entity id), $6 LIKE pattern for text fields.
WITH hits AS (
  -- An identifier of a merged entity finds the entity it was merged into.
  SELECT coalesce(e.merged_into, e.id) AS entity_id, i.field
  FROM neotoma.entity_identifiers i
  JOIN neotoma.entities e ON e.user_id = i.user_id AND e.id = i.entity_id
  WHERE i.user_id = $1::uuid
    AND (CASE WHEN $4::jsonb IS NULL THEN i.value = ANY($3)
              ELSE i.value LIKE (CASE WHEN $4 ? i.field THEN $4 ->> i.field ELSE $6 END) END)
  UNION ALL
  SELECT coalesce(e.merged_into, e.id), 'id' FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.id = $5),
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
  'match_type', CASE WHEN NOT EXISTS (SELECT 1 FROM r) THEN 'none'
                     WHEN $4::jsonb IS NULL THEN 'exact' ELSE 'partial' END)
