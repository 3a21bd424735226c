-- Packed lists (sql/embeddings.sql, neotoma._nearest_codes): a build packs
-- each list's codes into one row; a semantic search scores those rows and,
-- one by one, the embeddings written since (not `packed`). Whatever was
-- written, changed or deleted since the packing, a search that reads every
-- list answers exactly what the exact scan answers; the upkeep packs again
-- a list that gained many; rows are private to their user (as a
-- non-superuser); erasing a user erases them.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '64000000-0000-0000-0000-00000000000a';

-- 48 notes on six subjects, and lists built.
\ir include/notes_on_six_subjects.sql
SELECT count(*) AS packed_before_lists FROM neotoma.embedding_list_codes;
SELECT n_tup_upd AS updates_before FROM pg_stat_xact_user_tables WHERE relid = 'neotoma.entity_embeddings'::regclass \gset
SELECT (neotoma.index_embeddings(10) -> 0) - 'model' AS built;
-- A first build writes each embedding once: moved to its list, packed.
SELECT n_tup_upd - :updates_before AS embeddings_written_by_the_build
FROM pg_stat_xact_user_tables WHERE relid = 'neotoma.entity_embeddings'::regclass;
-- Every list with embeddings has its row, holding each of its embeddings'
-- codes once; every embedding is packed.
SELECT count(*) AS list_rows,
       count(*) = (SELECT count(DISTINCT list_no) FROM neotoma.entity_embeddings) AS one_per_list,
       sum(cardinality(c.entity_ids)) AS codes,
       bool_and(length(c.codes) = cardinality(c.entity_ids) * 132) AS codes_of_132_bytes,
       bool_and(cardinality(c.entity_types) = cardinality(c.entity_ids)) AS a_type_each
FROM neotoma.embedding_list_codes c;
SELECT count(*) FILTER (WHERE packed) AS packed, count(*) AS embeddings FROM neotoma.entity_embeddings;
SELECT bool_and(substring(c.codes FROM (i - 1) * 132 + 1 FOR 132) = v.code AND v.list_no = c.list_no) AS each_code_its_own
FROM neotoma.embedding_list_codes c
CROSS JOIN LATERAL generate_subscripts(c.entity_ids, 1) i
JOIN neotoma.entity_embeddings v ON v.entity_id = c.entity_ids[i];

-- The packed rows rank as the codes one by one do (the same similarities,
-- ties by id), of a type when asked, nothing for NULLs.
SELECT array_agg(ARRAY[n.entity_id, round(n.similarity::numeric, 9)::text] ORDER BY n.similarity DESC, n.entity_id)::text AS by_rows
FROM neotoma._nearest_codes('64000000-0000-0000-0000-00000000000a', neotoma._embedding_model(),
       (SELECT array_agg(list_no) FROM neotoma.embedding_lists), neotoma._entity_embedding('note', '{"title": "violin concert"}'),
       NULL, 10) n \gset
SELECT :'by_rows' = (SELECT array_agg(ARRAY[entity_id, round(s::numeric, 9)::text] ORDER BY s DESC, entity_id)::text FROM (
         SELECT v.entity_id, neotoma._code_similarity(v.code, neotoma._entity_embedding('note', '{"title": "violin concert"}')) AS s
         FROM neotoma.entity_embeddings v ORDER BY 2 DESC, 1 LIMIT 10) o) AS as_one_by_one,
       cardinality(:'by_rows'::text[]) / 2 AS ranked;
SELECT count(*) AS tasks FROM neotoma._nearest_codes('64000000-0000-0000-0000-00000000000a', neotoma._embedding_model(),
       (SELECT array_agg(list_no) FROM neotoma.embedding_lists), neotoma._entity_embedding('note', '{"title": "violin"}'), 'task', 10);
SELECT count(*) AS notes FROM neotoma._nearest_codes('64000000-0000-0000-0000-00000000000a', neotoma._embedding_model(),
       (SELECT array_agg(list_no) FROM neotoma.embedding_lists), neotoma._entity_embedding('note', '{"title": "violin"}'), 'note', 10);
SELECT count(*) AS for_nulls FROM neotoma._nearest_codes(NULL, NULL, NULL, NULL, NULL, NULL);

-- After writes, changes and deletions since the packing, a search reading
-- every list answers as the exact scan does (probes 0).
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "note", "title": "Opera night", "content": "soprano aria opera house orchestra"}]}')->'entities');
SELECT neotoma.correct(jsonb_build_object('entity_id', e.id, 'entity_type', 'note', 'field', 'content', 'value', 'violin orchestra symphony conductor'))->'error' AS corrected
FROM neotoma.entities e JOIN neotoma.entity_snapshots s ON s.entity_id = e.id WHERE s.snapshot->>'title' = 'Garden 3';
SELECT neotoma.delete_entity(jsonb_build_object('entity_id', e.id))->'error' AS deleted
FROM neotoma.entities e JOIN neotoma.entity_snapshots s ON s.entity_id = e.id WHERE s.snapshot->>'title' = 'Music 2';
SELECT count(*) FILTER (WHERE NOT packed) AS unpacked FROM neotoma.entity_embeddings;
CREATE TEMP TABLE questions (q text);
INSERT INTO questions VALUES ('violin orchestra symphony'), ('soprano aria opera'), ('tomatoes basil soil'), ('piano concert');
SET neotoma.semantic_probes = 0;
CREATE TEMP TABLE exact AS SELECT q, neotoma.retrieve_entities(jsonb_build_object('search', q, 'search_mode', 'semantic', 'limit', 10)) AS a FROM questions;
SET neotoma.semantic_probes = 1000;
SELECT bool_and(neotoma.retrieve_entities(jsonb_build_object('search', x.q, 'search_mode', 'semantic', 'limit', 10)) = x.a) AS as_exact,
       string_agg(jsonb_array_length(x.a->'entities')::text, ',' ORDER BY x.q) AS found
FROM exact x;
SELECT e->'snapshot'->>'title' AS first
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "soprano aria opera house", "search_mode": "semantic", "limit": 1}')->'entities') e;
SELECT count(*) FILTER (WHERE e->'snapshot'->>'title' = 'Music 2') AS deleted_found,
       count(*) FILTER (WHERE e->'snapshot'->>'title' = 'Garden 3') AS corrected_found,
       count(*) - count(DISTINCT e->>'id') AS twice
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "violin orchestra symphony", "search_mode": "semantic", "limit": 10}')->'entities') e;
RESET neotoma.semantic_probes;
SELECT neotoma.verify() -> 'ok' AS verified;

-- Another user sees none of the rows, and ranks nothing with them.
SET neotoma.user_id = '64000000-0000-0000-0000-00000000000b';
SELECT count(*) AS others_rows FROM neotoma.embedding_list_codes;
SELECT count(*) AS others_ranked FROM neotoma._nearest_codes('64000000-0000-0000-0000-00000000000a', neotoma._embedding_model(),
       ARRAY[0, 1, 2, 3, 4, 5, 6, 7], neotoma._entity_embedding('note', '{"title": "violin"}'), NULL, 10);
RESET ROLE;
SELECT has_function_privilege('neotoma_user', 'neotoma._nearest_codes(uuid, text, integer[], real[], text, bigint)', 'EXECUTE') AS users_rank,
       has_function_privilege('neotoma_user', 'neotoma_private._pack_list_codes(uuid, text, integer[])', 'EXECUTE') AS users_pack,
       has_table_privilege('neotoma_user', 'neotoma.embedding_list_codes', 'INSERT') AS users_write;

-- The upkeep packs again a list that gained 32 embeddings or more since
-- it was packed, and no other.
UPDATE neotoma.entity_embeddings v SET packed = false
WHERE v.user_id = '64000000-0000-0000-0000-00000000000a' AND v.list_no = (
  SELECT list_no FROM neotoma.entity_embeddings WHERE user_id = '64000000-0000-0000-0000-00000000000a'
  GROUP BY list_no ORDER BY count(*) DESC, list_no LIMIT 1);
SELECT count(*) FILTER (WHERE NOT packed) >= 1 AS some_unpacked FROM neotoma.entity_embeddings
WHERE user_id = '64000000-0000-0000-0000-00000000000a';
SELECT neotoma.maintain_embedding_lists(0, 10) AS built_none;
SELECT count(*) FILTER (WHERE NOT packed) AS unpacked_below_32 FROM neotoma.entity_embeddings
WHERE user_id = '64000000-0000-0000-0000-00000000000a';
SELECT neotoma_private._pack_list_codes('64000000-0000-0000-0000-00000000000a', neotoma._embedding_model(), NULL) AS packed_again;
SELECT count(*) FILTER (WHERE NOT packed) AS unpacked_after FROM neotoma.entity_embeddings
WHERE user_id = '64000000-0000-0000-0000-00000000000a';
-- 40 more notes of one subject land in few lists: the upkeep packs again
-- those that gained 32 or more, and only those.
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '64000000-0000-0000-0000-00000000000a';
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store(jsonb_build_object('entities', (
  SELECT jsonb_agg(jsonb_build_object('entity_type', 'note', 'title', 'Sailing more ' || i, 'content', 'boat wind harbour sails anchor ' || i))
  FROM generate_series(1, 40) i)))->'entities');
RESET ROLE;
SELECT coalesce(array_agg(f.list_no), '{}')::text AS full_lists, coalesce(sum(f.n), 0) AS in_full_lists FROM (
  SELECT list_no, count(*) AS n FROM neotoma.entity_embeddings
  WHERE user_id = '64000000-0000-0000-0000-00000000000a' AND NOT packed GROUP BY 1 HAVING count(*) >= 32) f \gset
SELECT :'full_lists'::int[] <> '{}' AS some_list_gained_32,
       (SELECT count(*) FROM neotoma.entity_embeddings WHERE user_id = '64000000-0000-0000-0000-00000000000a' AND NOT packed) AS unpacked_before_upkeep;
SELECT neotoma.maintain_embedding_lists(0, 10) AS built_none;
SELECT count(*) FILTER (WHERE NOT packed AND list_no = ANY (:'full_lists'::int[])) AS left_in_those,
       count(*) FILTER (WHERE NOT packed) = 40 - :in_full_lists AS others_as_they_were
FROM neotoma.entity_embeddings WHERE user_id = '64000000-0000-0000-0000-00000000000a';

-- Erasing a user erases their rows.
SELECT neotoma.erase_user('64000000-0000-0000-0000-00000000000a', true) IS NOT NULL AS erased;
SELECT count(*) AS rows_left FROM neotoma.embedding_list_codes WHERE user_id = '64000000-0000-0000-0000-00000000000a';
ROLLBACK;
