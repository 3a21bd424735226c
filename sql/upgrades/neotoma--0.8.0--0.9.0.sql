-- 0.8.0 -> 0.9.0: semantic search. Each entity's embeddings, by the
-- server's embedding model (kept with its snapshot) and by a gateway's
-- remote provider (sql/embeddings.sql); retrieve_entities searches by
-- meaning (semantic) and by both (hybrid), and observations' words
-- (include_observations); list_entity_types falls back to meaning.
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

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
CREATE FUNCTION neotoma."_embedding_text"("entity_type" TEXT, "snapshot" jsonb) RETURNS TEXT
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'embedding_text_wrapper';
REVOKE EXECUTE ON FUNCTION neotoma._cosine(real[], real[]), neotoma._embedding_model(),
  neotoma._entity_embedding(text, jsonb), neotoma._embedding_text(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._cosine(real[], real[]), neotoma._embedding_model(),
  neotoma._entity_embedding(text, jsonb), neotoma._embedding_text(text, jsonb) TO neotoma_user;

-- Semantic search: each entity's embeddings of its text (type, name and
-- fields: neotoma._embedding_text), one per model. The server's model
-- (neotoma.embedding_model, the built-in potion-base-8M by default) embeds
-- in the transaction that writes the snapshot, by the triggers below, so an
-- entity is found by meaning at once. A gateway's remote provider
-- (--embeddings-url) embeds later: neotoma.pending_embeddings lists what it
-- has not embedded, neotoma.put_embeddings writes what it has. A snapshot's
-- text changing drops every model's embedding of it. An entity has no row
-- of the server's model while none is installed or when the model knows no
-- word of it; neotoma.verify() checks those rows against the snapshots and
-- verify(true) writes the missing (e.g. after the model was installed).
-- Real arrays: Debian's Postgres 15 has no pgvector; queries compare them
-- with neotoma._cosine.
CREATE TABLE neotoma.entity_embeddings (
  user_id     uuid NOT NULL,
  entity_id   text NOT NULL,
  entity_type text NOT NULL,
  model       text NOT NULL,
  embedding   real[] NOT NULL,
  PRIMARY KEY (user_id, entity_id, model)
);

-- A snapshot written or changed: every embedding of it dropped, the server
-- model's recomputed (when it can be); a snapshot deleted: its embeddings
-- too.
CREATE FUNCTION neotoma._embedding_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  v real[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM neotoma.entity_embeddings e WHERE e.user_id = OLD.user_id AND e.entity_id = OLD.entity_id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM neotoma.entity_embeddings e WHERE e.user_id = NEW.user_id AND e.entity_id = NEW.entity_id;
  END IF;
  v := neotoma._entity_embedding(NEW.entity_type, NEW.snapshot);
  IF v IS NOT NULL THEN
    INSERT INTO neotoma.entity_embeddings (user_id, entity_id, entity_type, model, embedding)
    VALUES (NEW.user_id, NEW.entity_id, NEW.entity_type, neotoma._embedding_model(), v)
    ON CONFLICT (user_id, entity_id, model) DO UPDATE
      SET entity_type = EXCLUDED.entity_type, embedding = EXCLUDED.embedding;
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

-- For a gateway's remote embeddings provider (neotoma_service only: it
-- serves every user). The entities without an embedding by `model`, with
-- the text to embed, in key order, at most `max_rows` (1–1,000), leaving out
-- the `skip` keys ('<user id> <entity id>': texts the provider refused).
CREATE FUNCTION neotoma.pending_embeddings(model text, max_rows integer DEFAULT 64, skip text[] DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', p.user_id, 'entity_id', p.entity_id, 'text', p.text)
                            ORDER BY p.user_id, p.entity_id), '[]')
  FROM (SELECT s.user_id, s.entity_id, neotoma._embedding_text(s.entity_type, s.snapshot) AS text
        FROM neotoma.entity_snapshots s
        WHERE NOT EXISTS (SELECT FROM neotoma.entity_embeddings v
                          WHERE v.user_id = s.user_id AND v.entity_id = s.entity_id AND v.model = $1)
          AND NOT (s.user_id::text || ' ' || s.entity_id) = ANY (coalesce($3, '{}'))
        ORDER BY s.user_id, s.entity_id
        LIMIT greatest(1, least(coalesce($2, 64), 1000))) p
$$;

-- Writes the embeddings a remote provider computed by `model`: `rows` is
-- [{user_id, entity_id, text, embedding: [numbers]}], each written only if
-- the entity's text is still `text` (read with its snapshot locked, so a
-- change committing meanwhile leaves it pending rather than stale). Returns
-- how many were written.
CREATE FUNCTION neotoma.put_embeddings(model text, rows jsonb) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
#variable_conflict use_column
DECLARE
  written integer;
BEGIN
  IF model IS NULL OR model !~ '^[[:print:]]{1,200}$' OR model = neotoma._embedding_model() THEN
    RAISE EXCEPTION 'put_embeddings: a model name of 1 to 200 printable characters, not the server''s own';
  END IF;
  IF jsonb_typeof(rows) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'put_embeddings: rows must be an array';
  END IF;
  WITH r AS (
    SELECT (x->>'user_id')::uuid AS user_id, x->>'entity_id' AS entity_id, x->>'text' AS text,
           ARRAY(SELECT e::real FROM jsonb_array_elements_text(x->'embedding') e) AS embedding
    FROM jsonb_array_elements(rows) x
    WHERE jsonb_typeof(x->'embedding') = 'array'),
  current AS (
    SELECT s.user_id, s.entity_id, s.entity_type, r.embedding
    FROM r JOIN neotoma.entity_snapshots s ON s.user_id = r.user_id AND s.entity_id = r.entity_id
    WHERE neotoma._embedding_text(s.entity_type, s.snapshot) = r.text
      AND cardinality(r.embedding) BETWEEN 1 AND 4096
    FOR SHARE OF s),
  ins AS (
    INSERT INTO neotoma.entity_embeddings (user_id, entity_id, entity_type, model, embedding)
    SELECT c.user_id, c.entity_id, c.entity_type, put_embeddings.model, c.embedding FROM current c
    ON CONFLICT (user_id, entity_id, model) DO UPDATE
      SET entity_type = EXCLUDED.entity_type, embedding = EXCLUDED.embedding
    RETURNING 1)
  SELECT count(*) INTO written FROM ins;
  RETURN written;
END $$;

-- The embeddings of every snapshot by the server's model, as the triggers
-- would have kept them (none when the model is not installed yet:
-- neotoma.verify(true) writes them once it is); row level security and
-- grants as security.sql gives them.
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
REVOKE EXECUTE ON FUNCTION neotoma._embedding_changed(), neotoma._embeddings_truncated(),
  neotoma.pending_embeddings(text, integer, text[]), neotoma.put_embeddings(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.pending_embeddings(text, integer, text[]), neotoma.put_embeddings(text, jsonb)
  TO neotoma_service;

-- The words of an observation's values, indexed (sql/search.sql):
-- retrieve_entities {search, include_observations}.
CREATE FUNCTION neotoma._observation_vector(fields jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT jsonb_to_tsvector('pg_catalog.simple', fields, '["string", "numeric"]')
         || jsonb_to_tsvector('pg_catalog.english', fields, '["string"]')
$$;
REVOKE EXECUTE ON FUNCTION neotoma._observation_vector(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._observation_vector(jsonb) TO neotoma_user;
CREATE INDEX observations_search ON neotoma.observations USING gin (neotoma._observation_vector(fields));

-- The descriptions of the actions whose search changed.
COMMENT ON FUNCTION neotoma.retrieve_entities(jsonb) IS
  'List entities, optionally of one `entity_type`, most recently observed first, with their snapshots (include_snapshots, default true). Merged entities are left out unless include_merged. Paginated with limit (max 1000) and offset; returns {entities:[{id, entity_type, canonical_name, snapshot, observation_count, last_observation_at}], total, excluded_merged}. With `search` (free text) it finds entities by their names (typos forgiven), every snapshot value and the names of entities merged into them, best first (then by id), each with relevance_score and matched_fields; search_mode: lexical (words, stems, names with typos), semantic (by meaning: embeddings), hybrid (both, fused by rank) or auto (hybrid when embeddings exist, else lexical); search_method says which mode answered; include_observations also matches values since corrected or outranked.';
COMMENT ON FUNCTION neotoma.list_entity_types(jsonb) IS
  'List the entity types you can store, with their fields (type, required), identity fields and schema version. Call it before `store` to choose the entity_type. With `keyword`, types are ranked by matches in their names and field names; when nothing matches well, by meaning (embeddings of their names, descriptions and fields: ''payment'' finds transaction and invoice; match_type vector), else by fuzzy similarity (typos).';
