-- The schema registry as list_entity_types shows it.
\ir include/setup.sql

SELECT r->'total' AS total, r->'search_method' AS method,
       jsonb_path_query_array(r, '$.entity_types[*].entity_type') AS types
FROM neotoma.list_entity_types('{}') AS r;

-- By default a compact catalogue: a line per type (name, what it is for,
-- identity), within 4 KB for the seeded types; in full on request.
SELECT length(neotoma.list_entity_types('{}')::text) <= 4096 AS compact_within_4kb,
       (SELECT bool_and(NOT t ? 'field_summary') FROM jsonb_array_elements(neotoma.list_entity_types('{}')->'entity_types') t) AS no_fields,
       neotoma.list_entity_types('{}')->'entity_types'->0->'description' AS first_line;
SELECT t->>'entity_type' AS type, t->>'schema_version' AS version, t->>'scope' AS scope,
       t->'identity_fields' AS identity, t->'field_summary'->'invoice_number' AS invoice_number
FROM jsonb_array_elements(neotoma.list_entity_types('{"detail": true}')->'entity_types') t
WHERE t->>'entity_type' IN ('invoice', 'person');
-- One type in full.
SELECT jsonb_array_length(r->'entity_types') AS types, r->'entity_types'->0->'field_summary'->'email' AS email
FROM neotoma.list_entity_types('{"entity_type": "person"}') r;
SELECT error_code(try_action('list_entity_types', '{"entity_type": "nothing_like_it"}')) AS unknown_type;

-- Keyword over names, fields and descriptions; similarity when nothing matches.
SELECT k AS keyword, r->>'search_method' AS method,
       (SELECT jsonb_agg(t->'entity_type') FROM jsonb_array_elements(r->'entity_types') WITH ORDINALITY x(t, n) WHERE n <= 3) AS top3,
       r->'entity_types'->0->'similarity_score' AS best_score, r->'entity_types'->0->'match_type' AS match
FROM unnest(ARRAY['invoice', 'bill', 'email', 'payment', 'invoce', 'zzzqqq']) AS k,
     LATERAL neotoma.list_entity_types(jsonb_build_object('keyword', k)) AS r;
