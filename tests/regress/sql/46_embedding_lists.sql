-- Semantic search at scale: a user's embeddings fall into lists around
-- centroids (neotoma.index_embeddings, sql/embeddings.sql), and a semantic
-- search reads only the lists nearest its query (neotoma.semantic_probes).
-- Built deterministically, kept with every embedding written, exact with
-- probes 0 or enough of them, none below the threshold, private to each
-- user (as a non-superuser), maintained by the service role only.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '46000000-0000-0000-0000-00000000000a';

\ir include/notes_on_six_subjects.sql
-- No lists yet: every embedding is in none.
SELECT count(*) AS embeddings, count(list_no) AS listed FROM neotoma.entity_embeddings;

-- Too few for the threshold: still none.
SELECT (neotoma.index_embeddings(1000) -> 0) - 'model' AS built;
SELECT count(*) AS lists FROM neotoma.embedding_lists;
-- Built: about √48 lists, every embedding in one of them.
SELECT (neotoma.index_embeddings(10) -> 0) - 'model' AS built;
SELECT count(*) AS lists, min(list_no) AS first, max(list_no) AS last, count(DISTINCT build) AS builds
FROM neotoma.embedding_lists;
SELECT count(*) AS embeddings, count(list_no) AS listed, count(DISTINCT list_no) > 1 AS spread
FROM neotoma.entity_embeddings;
-- Each embedding is in its nearest list.
SELECT bool_and(v.list_no = neotoma._embedding_list(v.user_id, v.model, v.embedding)) AS nearest
FROM neotoma.entity_embeddings v;
-- Deterministic: built again, the same centroids and lists.
SELECT md5(string_agg(centroid::text, ';' ORDER BY list_no)) AS centroids FROM neotoma.embedding_lists \gset
SELECT md5(string_agg(entity_id || list_no, ';' ORDER BY entity_id)) AS members FROM neotoma.entity_embeddings \gset
SELECT neotoma.index_embeddings(10) -> 0 ->> 'lists' AS lists;
SELECT md5(string_agg(centroid::text, ';' ORDER BY list_no)) = :'centroids' AS same_centroids FROM neotoma.embedding_lists;
SELECT md5(string_agg(entity_id || list_no, ';' ORDER BY entity_id)) = :'members' AS same_lists FROM neotoma.entity_embeddings;

-- Searching: enough probes read every list, so the answer is the exact one.
SELECT neotoma.retrieve_entities('{"search": "orchestra music", "search_mode": "semantic", "limit": 8}') AS exact_answer \gset
SET neotoma.semantic_probes = 0;
SELECT neotoma.retrieve_entities('{"search": "orchestra music", "search_mode": "semantic", "limit": 8}') = :'exact_answer'::jsonb AS probes_0_exact;
SET neotoma.semantic_probes = 16;
SELECT neotoma.retrieve_entities('{"search": "orchestra music", "search_mode": "semantic", "limit": 8}') = :'exact_answer'::jsonb AS all_lists_exact;
-- One list: the nearest still first.
SET neotoma.semantic_probes = 1;
SELECT r->'entities'->0->'id' = :'exact_answer'::jsonb->'entities'->0->'id' AS same_first,
       r->'entities'->0->'snapshot'->>'title' LIKE 'Music%' AS music_first
FROM neotoma.retrieve_entities('{"search": "orchestra music", "search_mode": "semantic", "limit": 8}') r;
RESET neotoma.semantic_probes;

-- A build also counts the user's common lexemes (of more than 1,000
-- snapshots: none of 48), which a lexical search then knows beforehand.
SELECT count(*) AS common_lexemes FROM neotoma.common_lexemes;
SELECT r->'total' AS total, r->'entities'->0->'snapshot'->>'title' AS first
FROM neotoma.retrieve_entities('{"search": "orchestra tomatoes", "search_mode": "lexical", "limit": 1}') r;
-- Counted as a search's terms count them (here down to 8 snapshots).
RESET ROLE;
SELECT neotoma_private._count_common_lexemes('46000000-0000-0000-0000-00000000000a', 7) AS counted;
SELECT count(*) AS lexemes, string_agg(k.lexeme, ', ') FILTER (WHERE k.entities > 8) AS in_every_note,
       bool_and(k.entities = (SELECT count(*) FROM neotoma.entity_snapshots s
                              WHERE s.user_id = k.user_id AND s.search_vector @@ quote_literal(k.lexeme)::tsquery)) AS counts_right
FROM neotoma.common_lexemes k WHERE k.user_id = '46000000-0000-0000-0000-00000000000a';
-- Only a lexeme of more entities than a rare term's is common: here none,
-- so the answer is the same.
SET ROLE neotoma_regress_agent;
SELECT r->'total' AS total, r->'entities'->0->'snapshot'->>'title' AS first
FROM neotoma.retrieve_entities('{"search": "orchestra tomatoes", "search_mode": "lexical", "limit": 1}') r;
-- Said to be in 5,000 entities, "orchestra" is common without a read: it
-- only weighs, and the entities having "tomatoes" answer; a typed search
-- counts within its type and reads as before.
RESET ROLE;
UPDATE neotoma.common_lexemes SET entities = 5000 WHERE lexeme = 'orchestra';
SET ROLE neotoma_regress_agent;
SELECT r->'total' AS total, r->'entities'->0->'snapshot'->>'title' AS first
FROM neotoma.retrieve_entities('{"search": "orchestra tomatoes", "search_mode": "lexical", "limit": 1}') r;
SELECT r->'total' AS typed_total
FROM neotoma.retrieve_entities('{"search": "orchestra tomatoes", "search_mode": "lexical", "entity_type": "note", "limit": 1}') r;
-- Another user neither sees nor uses them.
SET neotoma.user_id = '46000000-0000-0000-0000-00000000000b';
SELECT count(*) AS others_lexemes FROM neotoma.common_lexemes;
SET neotoma.user_id = '46000000-0000-0000-0000-00000000000a';
SELECT neotoma.index_embeddings(10) -> 0 ->> 'lists' AS lists;
SELECT count(*) AS common_lexemes_rebuilt FROM neotoma.common_lexemes;

-- A note written after falls in its nearest list at once, and is found.
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "note", "title": "Opera night", "content": "soprano aria opera house orchestra"}]}')->'entities');
SELECT v.list_no IS NOT NULL AND v.list_no = neotoma._embedding_list(v.user_id, v.model, v.embedding) AS listed_at_once
FROM neotoma.entity_embeddings v
JOIN neotoma.entity_snapshots s ON s.entity_id = v.entity_id AND s.snapshot->>'title' = 'Opera night';
SELECT e->'snapshot'->>'title' AS first
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "soprano aria opera house", "search_mode": "semantic", "limit": 1}')->'entities') e;
-- verify() is clean with lists.
SELECT neotoma.verify() -> 'ok' AS verified;

-- Another user sees none of the lists; only the service role runs the upkeep.
SET neotoma.user_id = '46000000-0000-0000-0000-00000000000b';
SELECT count(*) AS others_lists FROM neotoma.embedding_lists;
SELECT count(*) AS others_builds FROM neotoma.embedding_list_builds;
RESET ROLE;
SELECT has_function_privilege('neotoma_user', 'neotoma.maintain_embedding_lists(integer, integer)', 'EXECUTE') AS users_maintain,
       has_function_privilege('neotoma_service', 'neotoma.maintain_embedding_lists(integer, integer)', 'EXECUTE') AS service_maintains,
       has_function_privilege('neotoma_user', 'neotoma.index_embeddings(integer)', 'EXECUTE') AS users_index,
       has_function_privilege('neotoma_user', 'neotoma_private._build_embedding_lists(uuid, text, integer)', 'EXECUTE') AS users_build;

-- The upkeep: a user whose entities reached the threshold and doubled
-- since the last build gets lists; then not again until they double.
SET neotoma.user_id = '46000000-0000-0000-0000-00000000000c';
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store(jsonb_build_object('entities', (
  SELECT jsonb_agg(jsonb_build_object('entity_type', 'note', 'title', 'Note ' || i, 'content', 'about subject ' || i)) FROM generate_series(1, 30) i)))->'entities');
-- (Earlier tests' users may qualify too.)
SELECT jsonb_path_query_array(neotoma.maintain_embedding_lists(1000, 20), '$[*].user_id') AS built \gset
SELECT :'built'::jsonb @> '["46000000-0000-0000-0000-00000000000c"]' AS built_for_c,
       NOT :'built'::jsonb @> '["46000000-0000-0000-0000-00000000000a"]' AS not_again_for_a;
SELECT neotoma.maintain_embedding_lists(1000, 20) AS again;
-- Embeddings stored while a build ran (after what it read) are in no
-- list: the next upkeep places each in its nearest, building nothing.
UPDATE neotoma.entity_embeddings SET list_no = NULL
WHERE user_id = '46000000-0000-0000-0000-00000000000c' AND entity_id IN (
  SELECT entity_id FROM neotoma.entity_embeddings WHERE user_id = '46000000-0000-0000-0000-00000000000c'
  ORDER BY entity_id LIMIT 5);
SELECT count(*) AS unlisted FROM neotoma.entity_embeddings
WHERE user_id = '46000000-0000-0000-0000-00000000000c' AND list_no IS NULL;
SELECT neotoma.maintain_embedding_lists(0, 20) AS built_none;
SELECT count(*) FILTER (WHERE list_no IS NULL) AS unlisted_after,
       bool_and(list_no = neotoma._embedding_list(user_id, model, embedding)) AS each_in_its_nearest
FROM neotoma.entity_embeddings WHERE user_id = '46000000-0000-0000-0000-00000000000c';
RESET neotoma.user_id;
SELECT user_id, entities FROM neotoma.embedding_list_builds WHERE user_id::text LIKE '46%' ORDER BY user_id;

-- Erasing a user erases their lists.
SELECT neotoma.erase_user('46000000-0000-0000-0000-00000000000a', true) IS NOT NULL AS erased;
SELECT count(*) AS lists_left FROM neotoma.embedding_lists WHERE user_id = '46000000-0000-0000-0000-00000000000a';
SELECT count(*) AS builds_left FROM neotoma.embedding_list_builds WHERE user_id = '46000000-0000-0000-0000-00000000000a';
SELECT count(*) AS lexemes_left FROM neotoma.common_lexemes WHERE user_id = '46000000-0000-0000-0000-00000000000a';
ROLLBACK;
