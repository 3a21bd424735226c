-- 0.8.0 -> 0.9.0: semantic search. Each entity's embedding, by the
-- server's embedding model, kept with its snapshot (sql/embeddings.sql);
-- retrieve_entities searches by meaning (semantic) and by both (hybrid);
-- list_entity_types falls back to meaning.

CREATE FUNCTION neotoma."_cosine"("a" real[], "b" real[]) RETURNS double precision
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'cosine_wrapper';
CREATE FUNCTION neotoma."_embedding_model"() RETURNS TEXT
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'embedding_model_wrapper';
CREATE FUNCTION neotoma."_entity_embedding"("entity_type" TEXT, "snapshot" jsonb) RETURNS real[]
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'entity_embedding_wrapper';
REVOKE EXECUTE ON FUNCTION neotoma._cosine(real[], real[]), neotoma._embedding_model(),
  neotoma._entity_embedding(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._cosine(real[], real[]), neotoma._embedding_model(),
  neotoma._entity_embedding(text, jsonb) TO neotoma_user;

-- Semantic search: each entity's embedding (its type, name and fields, by the
-- server's embedding model: neotoma.embedding_model, the built-in
-- potion-base-8M by default), kept with its snapshot by the triggers below,
-- so an entity is found by meaning in the transaction that stored it. An
-- entity has no row while no model is installed or when the model knows no
-- word of it; neotoma.verify() checks the rows against the snapshots and
-- verify(true) writes the missing (e.g. after the model was installed).
-- Real arrays: Debian's Postgres 15 has no pgvector; queries compare them
-- with neotoma._cosine.
CREATE TABLE neotoma.entity_embeddings (
  user_id     uuid NOT NULL,
  entity_id   text NOT NULL,
  entity_type text NOT NULL,
  model       text NOT NULL,
  embedding   real[] NOT NULL,
  PRIMARY KEY (user_id, entity_id)
);

-- A snapshot written or changed: its embedding recomputed (or dropped when
-- none can be); a snapshot deleted: its embedding too.
CREATE FUNCTION neotoma._embedding_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  v real[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM neotoma.entity_embeddings e WHERE e.user_id = OLD.user_id AND e.entity_id = OLD.entity_id;
    RETURN NULL;
  END IF;
  v := neotoma._entity_embedding(NEW.entity_type, NEW.snapshot);
  IF v IS NULL THEN
    DELETE FROM neotoma.entity_embeddings e WHERE e.user_id = NEW.user_id AND e.entity_id = NEW.entity_id;
  ELSE
    INSERT INTO neotoma.entity_embeddings (user_id, entity_id, entity_type, model, embedding)
    VALUES (NEW.user_id, NEW.entity_id, NEW.entity_type, neotoma._embedding_model(), v)
    ON CONFLICT (user_id, entity_id) DO UPDATE
      SET entity_type = EXCLUDED.entity_type, model = EXCLUDED.model, embedding = EXCLUDED.embedding;
  END IF;
  RETURN NULL;
END $$;
CREATE FUNCTION neotoma._embeddings_truncated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  TRUNCATE neotoma.entity_embeddings;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_snapshots_embedding AFTER INSERT OR DELETE ON neotoma.entity_snapshots
  FOR EACH ROW EXECUTE FUNCTION neotoma._embedding_changed();
CREATE TRIGGER entity_snapshots_embedding_changed AFTER UPDATE ON neotoma.entity_snapshots
  FOR EACH ROW WHEN (OLD.snapshot IS DISTINCT FROM NEW.snapshot OR OLD.entity_type IS DISTINCT FROM NEW.entity_type)
  EXECUTE FUNCTION neotoma._embedding_changed();
CREATE TRIGGER entity_snapshots_embeddings_truncated AFTER TRUNCATE ON neotoma.entity_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._embeddings_truncated();

-- The embeddings of every snapshot, as the triggers would have kept them
-- (none when the model is not installed yet: neotoma.verify(true) writes
-- them once it is); row level security and grants as security.sql gives
-- them.
INSERT INTO neotoma.entity_embeddings (user_id, entity_id, entity_type, model, embedding)
SELECT e.user_id, e.entity_id, e.entity_type, neotoma._embedding_model(), e.embedding
FROM (SELECT s.user_id, s.entity_id, s.entity_type, neotoma._entity_embedding(s.entity_type, s.snapshot) AS embedding
      FROM neotoma.entity_snapshots s) e
WHERE e.embedding IS NOT NULL;
ALTER TABLE neotoma.entity_embeddings ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.entity_embeddings FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_embeddings_own_rows ON neotoma.entity_embeddings
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.entity_embeddings FROM PUBLIC;
GRANT SELECT ON neotoma.entity_embeddings TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._embedding_changed(), neotoma._embeddings_truncated() FROM PUBLIC;

-- The descriptions of the actions whose search changed.
COMMENT ON FUNCTION neotoma.retrieve_entities(jsonb) IS
  'List entities, optionally of one `entity_type`, most recently observed first, with their snapshots (include_snapshots, default true). Merged entities are left out unless include_merged. Paginated with limit (max 1000) and offset; returns {entities:[{id, entity_type, canonical_name, snapshot, observation_count, last_observation_at}], total, excluded_merged}. With `search` (free text) it finds entities by their names (typos forgiven), every snapshot value and the names of entities merged into them, best first (then by id), each with relevance_score and matched_fields; search_mode: lexical (words, stems, names with typos), semantic (by meaning: embeddings), hybrid (both, fused by rank) or auto (hybrid when embeddings exist, else lexical); search_method says which mode answered.';
COMMENT ON FUNCTION neotoma.list_entity_types(jsonb) IS
  'List the entity types you can store, with their fields (type, required), identity fields and schema version. Call it before `store` to choose the entity_type. With `keyword`, types are ranked by matches in their names and field names; when nothing matches well, by meaning (embeddings of their names, descriptions and fields: ''payment'' finds transaction and invoice; match_type vector), else by fuzzy similarity (typos).';
