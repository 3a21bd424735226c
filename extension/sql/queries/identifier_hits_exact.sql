-- retrieve_entity_by_identifier, exact: the identity values equal to one of
-- the identifier's normalised forms (the index entity_identifiers_value
-- serves them in any plan). Followed by identifier_answer.sql; the
-- parameters of both: $1 user, $2 entity type or NULL, $3 exact candidates
-- (text[]), $4 field -> LIKE pattern (jsonb, partial only), $5 the
-- identifier as given (an entity id), $6 LIKE pattern for text fields
-- (partial only), $7 'exact' or 'partial'.
WITH hits AS (
  -- An identifier of a merged entity finds the entity it was merged into.
  SELECT coalesce(e.merged_into, e.id) AS entity_id, i.field
  FROM neotoma.entity_identifiers i
  JOIN neotoma.entities e ON e.user_id = i.user_id AND e.id = i.entity_id
  WHERE i.user_id = $1::uuid AND i.value = ANY($3)
  UNION ALL
  SELECT coalesce(e.merged_into, e.id), 'id' FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.id = $5),
