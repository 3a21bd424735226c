-- retrieve_entity_by_identifier, in one statement: the entities whose
-- identity values equal one of the identifier's normalised forms, or, when
-- none of those is found, whose identity values contain the form of the
-- identifier their field's kind uses (the partial scan runs only then: its
-- condition is a one-time filter). The entities found, by type and name, at
-- most 100, as JSON text (built as json: it is read as text).
-- $1 user, $2 entity type or NULL, $3 exact candidates (text[]), $4 LIKE
-- pattern for phone fields, $5 for web-site fields, $6 for the others (each
-- NULL when the identifier has no such form), $7 the identifier as given (an
-- entity id), $8 the workspaces (text[]: entities elsewhere are found by
-- nothing), $9 the runs of three characters of those forms (tsquery text:
-- neotoma_core::identity::grams_query; the line marked `grams` leaves when
-- a form is too short to have one). A field's kind follows its name, as
-- neotoma_core::identity::IdentifierKind::of says (and as its values were
-- normalised when stored). Entities are read by key, one per hit
-- (`OFFSET 0` keeps each lookup a probe of the primary key): a hash join
-- would read every entity of the user.
WITH exact AS (
  SELECT i.entity_id, i.field FROM neotoma.entity_identifiers i
  WHERE i.user_id = $1::uuid AND i.value = ANY($3)
  UNION ALL
  SELECT $7, 'id'),
-- An identifier of a merged entity finds the entity it was merged into;
-- deleted entities are found by nothing (lines marked 0.6: a database
-- before 0.6.0 has no deletions, and the library leaves them out there).
exact_hits AS (
  SELECT coalesce(e.merged_into, e.id) AS entity_id, x.field
  FROM exact x
  JOIN LATERAL (SELECT e.id, e.merged_into FROM neotoma.entities e
                WHERE e.user_id = $1::uuid AND e.id = x.entity_id OFFSET 0) e ON true),
found AS (
  SELECT EXISTS (SELECT 1 FROM exact_hits x
                 JOIN LATERAL (SELECT 1 FROM neotoma.entities e
                               WHERE e.user_id = $1::uuid AND e.id = x.entity_id AND e.merged_into IS NULL
                                 AND e.deleted_at IS NULL
                                 AND e.workspace = ANY($8::text[])
                                 AND ($2::text IS NULL OR e.entity_type = $2) OFFSET 0) e ON true) AS exact),
partial_hits AS (
  SELECT coalesce(e.merged_into, e.id) AS entity_id, i.field
  FROM neotoma.entity_identifiers i
  JOIN LATERAL (SELECT e.id, e.merged_into FROM neotoma.entities e
                WHERE e.user_id = $1::uuid AND e.id = i.entity_id OFFSET 0) e ON true
  WHERE NOT (SELECT exact FROM found) AND i.user_id = $1::uuid
    -- Only the values having every run of three characters of a form, by
    -- the index entity_identifiers_grams (sql/search_grams.sql).
    AND i.value_grams OPERATOR(neotoma.@@) $9::tsquery -- grams
    AND i.value LIKE (CASE WHEN i.field = 'phone' OR i.field LIKE '%\_phone' THEN $4
                           WHEN i.field IN ('website', 'url') OR i.field LIKE '%\_url' THEN $5
                           ELSE $6 END)),
hits AS (
  SELECT entity_id, field FROM exact_hits WHERE (SELECT exact FROM found) OR field = 'id'
  UNION ALL
  SELECT entity_id, field FROM partial_hits),
m AS (SELECT entity_id, array_agg(DISTINCT field ORDER BY field) AS fields FROM hits GROUP BY entity_id),
r AS (
  SELECT e.id, e.entity_type, e.canonical_name, s.snapshot, m.fields
  FROM m
  JOIN LATERAL (SELECT e.id, e.entity_type, e.canonical_name FROM neotoma.entities e
                WHERE e.user_id = $1::uuid AND e.id = m.entity_id AND e.merged_into IS NULL
                  AND e.deleted_at IS NULL
                  AND e.workspace = ANY($8::text[])
                  AND ($2::text IS NULL OR e.entity_type = $2) OFFSET 0) e ON true
  LEFT JOIN LATERAL (SELECT s.snapshot FROM neotoma.entity_snapshots s
                     WHERE s.user_id = $1::uuid AND s.entity_id = e.id OFFSET 0) s ON true
  ORDER BY e.entity_type, e.canonical_name, e.id
  LIMIT 100)
SELECT json_build_object(
  'entities', coalesce((SELECT json_agg(json_build_object(
        'id', r.id, 'entity_type', r.entity_type, 'canonical_name', r.canonical_name,
        'snapshot', r.snapshot, 'matched_fields', to_json(r.fields))
      ORDER BY r.entity_type, r.canonical_name, r.id) FROM r), '[]'),
  'total', (SELECT count(*) FROM r),
  'match_type', CASE WHEN NOT EXISTS (SELECT 1 FROM r) THEN 'none' ELSE CASE WHEN (SELECT exact FROM found) THEN 'exact' ELSE 'partial' END END)::text
