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
