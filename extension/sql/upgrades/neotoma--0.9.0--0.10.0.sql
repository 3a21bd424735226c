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

-- The index of name trigrams says how many trigrams each name has (in the
-- index too), so a search computes names' similarity from the index alone
-- instead of reading each candidate's snapshot.
ALTER TABLE neotoma.entity_name_trigrams ADD COLUMN name_trigram_count smallint;
UPDATE neotoma.entity_name_trigrams t SET name_trigram_count = length(s.name_trigrams)
FROM neotoma.entity_snapshots s WHERE s.user_id = t.user_id AND s.entity_id = t.entity_id;
-- Rows of no snapshot (none, unless edited by hand) go: verify() would
-- report them, verify(true) would rewrite them anyway.
DELETE FROM neotoma.entity_name_trigrams WHERE name_trigram_count IS NULL;
ALTER TABLE neotoma.entity_name_trigrams ALTER COLUMN name_trigram_count SET NOT NULL,
  DROP CONSTRAINT entity_name_trigrams_pkey,
  ADD PRIMARY KEY (user_id, trigram, entity_id) INCLUDE (name_trigram_count);
CREATE OR REPLACE FUNCTION neotoma._name_trigrams_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM neotoma.entity_name_trigrams t
    WHERE t.user_id = OLD.user_id AND t.trigram = ANY (tsvector_to_array(OLD.name_trigrams))
      AND t.entity_id = OLD.entity_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO neotoma.entity_name_trigrams (user_id, trigram, entity_id, name_trigram_count)
    SELECT NEW.user_id, g, NEW.entity_id, length(NEW.name_trigrams) FROM unnest(tsvector_to_array(NEW.name_trigrams)) g
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

-- A gateway's remote embeddings provider finds what one transaction made
-- pending without reading every snapshot; operators drop the rows of a
-- remote model no gateway uses any more.
CREATE FUNCTION neotoma.pending_embeddings_of(model text, user_id uuid, xid xid8, max_rows integer DEFAULT 64,
                                              skip text[] DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', s.user_id, 'entity_id', s.entity_id,
                                               'text', neotoma._embedding_text(s.entity_type, s.snapshot))
                            ORDER BY s.entity_id), '[]')
  FROM (SELECT DISTINCT c.entity_id FROM neotoma.changes c
        WHERE c.user_id = $2 AND c.xid = $3 AND c.kind = 'entity'
          AND NOT EXISTS (SELECT FROM neotoma.entity_embeddings v
                          WHERE v.user_id = $2 AND v.entity_id = c.entity_id AND v.model = $1)
          AND NOT ($2::text || ' ' || c.entity_id) = ANY (coalesce($5, '{}'))
        ORDER BY c.entity_id
        LIMIT greatest(1, least(coalesce($4, 64), 1000))) c
  JOIN neotoma.entity_snapshots s ON s.user_id = $2 AND s.entity_id = c.entity_id
$$;
CREATE FUNCTION neotoma.drop_embeddings(model text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  dropped bigint;
BEGIN
  IF model IS NULL OR model = neotoma._embedding_model() THEN
    RAISE EXCEPTION 'drop_embeddings: the server''s own model''s embeddings are kept with the snapshots: name another';
  END IF;
  DELETE FROM neotoma.entity_embeddings v WHERE v.model = drop_embeddings.model;
  GET DIAGNOSTICS dropped = ROW_COUNT;
  RETURN dropped;
END $$;
REVOKE EXECUTE ON FUNCTION neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[]),
  neotoma.drop_embeddings(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[]) TO neotoma_service;
GRANT EXECUTE ON FUNCTION neotoma.drop_embeddings(text) TO neotoma_operator;

-- bulk and create_relationships (as actions.sql declares them).
CREATE OR REPLACE FUNCTION neotoma.bulk(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('bulk', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.bulk(jsonb) IS
  'Run several writes in one transaction, all or nothing: operations [{action, args, ref?}] (1–500), each action one of store, correct, create_relationship, delete_entity, restore_entity, delete_relationship, restore_relationship, merge_entities, with that action''s own args. An operation with ref: "alice" names the entity it yields (a store''s first entity; the entity corrected, deleted or restored; a merge''s target), and later operations write "$alice" wherever an entity id goes (entity_id, source_entity_id, target_entity_id, from_entity_id, to_entity_id): two entities and the relationship between them in one call. If one fails nothing is kept and the error names it (details.operation, from 1; operation_index, from 0). Returns {results:[{index, action, ref, entity_id, result}], operations}.';

CREATE OR REPLACE FUNCTION neotoma.create_relationships(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('create_relationships', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.create_relationships(jsonb) IS
  'Create several relationships at once (1–500), each as create_relationship takes it ({relationship_type, source_entity_id, target_entity_id, metadata?}), in one transaction: all or none (the error names the failing one: details.relationship, from 1). Returns {relationships:[…as created], count}.';

REVOKE EXECUTE ON FUNCTION neotoma.bulk(jsonb), neotoma.create_relationships(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.bulk(jsonb), neotoma.create_relationships(jsonb) TO neotoma_user;

-- retrieve_entity_snapshot's description (include_contradictions), and its
-- earlier name's; list_contradictions (as actions.sql declares it).
COMMENT ON FUNCTION neotoma.retrieve_entity_snapshot(jsonb) IS
  'Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was at that time. A merged entity redirects to the entity it was merged into (`redirected_from`). include_contradictions also answers the fields whose observations disagree, as list_contradictions does.';
COMMENT ON FUNCTION neotoma.get_entity_snapshot(jsonb) IS
  'Legacy name of neotoma.retrieve_entity_snapshot: Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was at that time. A merged entity redirects to the entity it was merged into (`redirected_from`). include_contradictions also answers the fields whose observations disagree, as list_contradictions does.';
CREATE OR REPLACE FUNCTION neotoma.list_contradictions(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_contradictions', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_contradictions(jsonb) IS
  'The fields where observations of one entity disagree: two or more distinct values from two or more sources (merge_array fields are joined, not contradicted). For one entity_id, the entities of an entity_type, or all, a page of entities (limit 1–100, default 20; offset) in id order. Each contradiction: {entity_id, entity_type, field, values:[{value, observations:[{observation_id, source_id, observed_at, source_priority, specificity_score, correction}]}], chosen_value, chosen_observation_id, strategy, tie_breaker, reason, resolved}: the value the reducer chose (the snapshot''s) and why; resolved when a correction decided it (include_resolved: false leaves those out). Returns {contradictions, entities_checked, limit, offset, has_more}.';
REVOKE EXECUTE ON FUNCTION neotoma.list_contradictions(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.list_contradictions(jsonb) TO neotoma_user;

-- Contradictions for analysts: neotoma._contradictions() and the view
-- neotoma.contradictions (sql/contradictions.sql).
CREATE FUNCTION neotoma."_contradictions"() RETURNS TABLE (
	"user_id" uuid,
	"entity_id" TEXT,
	"entity_type" TEXT,
	"field" TEXT,
	"chosen_value" jsonb,
	"chosen_observation_id" TEXT,
	"strategy" TEXT,
	"tie_breaker" TEXT,
	"reason" TEXT,
	"resolved" bool,
	"competing_values" jsonb
)
STRICT STABLE
LANGUAGE c
AS 'MODULE_PATHNAME', 'contradictions_view_wrapper';
CREATE VIEW neotoma.contradictions WITH (security_invoker = true) AS
SELECT * FROM neotoma._contradictions();
COMMENT ON VIEW neotoma.contradictions IS
  'Fields where observations of one entity disagree: competing_values [{value, observations}], the chosen value (the snapshot''s), its strategy and tie_breaker, the reason in words, and whether a correction resolved it.';
REVOKE EXECUTE ON FUNCTION neotoma._contradictions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._contradictions() TO neotoma_user;
REVOKE ALL ON neotoma.contradictions FROM PUBLIC;
GRANT SELECT ON neotoma.contradictions TO neotoma_user;
