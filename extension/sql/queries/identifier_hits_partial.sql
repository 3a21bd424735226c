-- retrieve_entity_by_identifier, partial: identity values containing the
-- form of the identifier their field's kind uses. Followed by
-- identifier_answer.sql; the parameters are those of
-- identifier_hits_exact.sql.
WITH hits AS (
  -- An identifier of a merged entity finds the entity it was merged into.
  SELECT coalesce(e.merged_into, e.id) AS entity_id, i.field
  FROM neotoma.entity_identifiers i
  JOIN neotoma.entities e ON e.user_id = i.user_id AND e.id = i.entity_id
  WHERE i.user_id = $1::uuid
    AND i.value LIKE (CASE WHEN $4 ? i.field THEN $4 ->> i.field ELSE $6 END)
  UNION ALL
  SELECT coalesce(e.merged_into, e.id), 'id' FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.id = $5),
