-- Semantic search over lists scans each embedding's code (4 bits a
-- component, entity_embeddings.code, generated from the embedding) from
-- the lists' index and ranks the likest exactly: reading every list gives
-- the exact answer, and a model too wide for codes (more than 3,072
-- components) is read exactly by list (here one list of it). As an
-- ordinary role.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '61000000-0000-0000-0000-00000000000a';

\ir include/notes_on_six_subjects.sql

-- Every embedding has its code: a scale and half a byte per component, the one
-- its embedding gives; the code ranks within its rounding of the cosine.
SELECT count(*) AS embeddings, count(code) AS coded, min(length(code)) AS bytes,
       bool_and(code = neotoma._embedding_code(embedding)) AS generated
FROM neotoma.entity_embeddings;
SELECT max(abs(neotoma._code_similarity(a.code, b.embedding) - neotoma._cosine(a.embedding, b.embedding))) < 0.06
       AS within_rounding
FROM neotoma.entity_embeddings a, neotoma.entity_embeddings b;
-- No code for what cannot have one, and no similarity for a mismatch.
SELECT neotoma._embedding_code('{0,0,0}') IS NULL AS zero, neotoma._embedding_code(array_fill(0.5::real, ARRAY[3073])) IS NULL AS wide,
       length(neotoma._embedding_code(array_fill(0.5::real, ARRAY[3072]))) AS widest_bytes,
       neotoma._code_similarity(neotoma._embedding_code('{1,2}'), '{1,2,3}') AS other_size,
       neotoma._code_similarity('\x00'::bytea, '{1}') AS malformed;

-- With lists, reading every list gives the exact answer, one list the same first.
SELECT (neotoma.index_embeddings(10) -> 0) ->> 'lists' AS lists;
SET neotoma.semantic_probes = 0;
SELECT neotoma.retrieve_entities('{"search": "garden soil", "search_mode": "semantic", "limit": 8}') AS exact_answer \gset
SET neotoma.semantic_probes = 4096;
SELECT neotoma.retrieve_entities('{"search": "garden soil", "search_mode": "semantic", "limit": 8}') = :'exact_answer'::jsonb
       AS every_list_exact;
SET neotoma.semantic_probes = 1;
SELECT r->'entities'->0->'id' = :'exact_answer'::jsonb->'entities'->0->'id' AS same_first
FROM neotoma.retrieve_entities('{"search": "garden soil", "search_mode": "semantic", "limit": 8}') r;

-- A model of 3,073 components (a provider's, written as the gateway's
-- worker writes them): no codes, its lists read exactly.
RESET ROLE;
SELECT neotoma.put_embeddings('remote:wide', (
  SELECT jsonb_agg(jsonb_build_object('user_id', s.user_id, 'entity_id', s.entity_id,
           'text', neotoma._embedding_text(s.entity_type, s.snapshot),
           'embedding', to_jsonb(array_fill(0.01::real, ARRAY[3072])
                                 || (CASE WHEN s.snapshot->>'title' LIKE 'Garden%' THEN 1 ELSE -1 END)::real)))
  FROM neotoma.entity_snapshots s WHERE s.user_id = '61000000-0000-0000-0000-00000000000a')) AS wide_written;
SET ROLE neotoma_regress_agent;
SELECT (neotoma.index_embeddings(10) -> 1) ->> 'model' AS wide_lists_of;
SELECT count(*) AS wide, count(code) AS wide_coded, count(list_no) AS wide_listed
FROM neotoma.entity_embeddings WHERE model = 'remote:wide';
SET neotoma.query_embedding_model = 'remote:wide';
SELECT set_config('neotoma.query_embedding', to_jsonb(array_fill(0.01::real, ARRAY[3072]) || 1::real)::text, true) IS NOT NULL AS query_set;
SELECT r->>'embedding_model' AS model, jsonb_array_length(r->'entities') AS found,
       bool_and(e->'snapshot'->>'title' LIKE 'Garden%') AS gardens_first
FROM neotoma.retrieve_entities('{"search": "anything", "search_mode": "semantic", "limit": 8}') r,
     jsonb_array_elements(r->'entities') e
GROUP BY 1, 2;
ROLLBACK;
