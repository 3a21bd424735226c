-- 0.9.0 -> 0.10.0: the words of stored files are searched
-- (retrieve_entities {search, include_observations}: the entities observed
-- from a matching file).

CREATE FUNCTION neotoma."_file_text"("content" bytea) RETURNS TEXT
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'file_text_wrapper';
REVOKE EXECUTE ON FUNCTION neotoma._file_text(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._file_text(bytea) TO neotoma_user;

-- The words of a stored file (neotoma._file_text: the start of a UTF-8 text
-- file; nothing of a binary one), indexed: retrieve_entities {search,
-- include_observations} also finds the entities observed from it.
ALTER TABLE neotoma.files ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  to_tsvector('pg_catalog.simple', neotoma._file_text(content))
  || to_tsvector('pg_catalog.english', neotoma._file_text(content))) STORED;
CREATE INDEX files_search ON neotoma.files USING gin (search_vector);

-- retrieve_entities' description: include_observations matches stored files' words too.
COMMENT ON FUNCTION neotoma.retrieve_entities(jsonb) IS
  'List entities, optionally of one `entity_type`, most recently observed first, with their snapshots (include_snapshots, default true). Merged entities are left out unless include_merged. Paginated with limit (max 1000) and offset; returns {entities:[{id, entity_type, canonical_name, snapshot, observation_count, last_observation_at}], total, excluded_merged}. With `search` (free text) it finds entities by their names (typos forgiven), every snapshot value and the names of entities merged into them, best first (then by id), each with relevance_score and matched_fields; search_mode: lexical (words, stems, names with typos), semantic (by meaning: embeddings), hybrid (both, fused by rank) or auto (hybrid when embeddings exist, else lexical); search_method says which mode answered; include_observations also matches values since corrected or outranked and the words of the stored text files an entity was observed from.';
