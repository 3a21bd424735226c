-- 0.9.0 -> 0.10.0: the words of stored files are searched
-- (retrieve_entities {search, include_observations}: the entities observed
-- from a matching file).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

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
ALTER TABLE neotoma.entity_name_trigrams ADD COLUMN name_trigram_count integer;
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
  'Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was at that time. A merged entity redirects to the entity it was merged into (`redirected_from`). include_contradictions also answers the fields whose observations disagree, as list_contradictions does; include_annotations the notes attached to it (annotate).';
COMMENT ON FUNCTION neotoma.get_entity_snapshot(jsonb) IS
  'Legacy name of neotoma.retrieve_entity_snapshot: Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was at that time. A merged entity redirects to the entity it was merged into (`redirected_from`). include_contradictions also answers the fields whose observations disagree, as list_contradictions does; include_annotations the notes attached to it (annotate).';
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

-- annotate: notes beside the truth model (sql/annotations.sql), listed in
-- the audit trail.
CREATE TABLE neotoma.annotations (
  user_id        uuid        NOT NULL,
  id             uuid        NOT NULL,
  entity_id      text        NOT NULL,
  observation_id uuid,
  note           text        NOT NULL CHECK (length(note) BETWEEN 1 AND 10000),
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, entity_id) REFERENCES neotoma.entities (user_id, id) ON DELETE CASCADE,
  FOREIGN KEY (user_id, observation_id) REFERENCES neotoma.observations (user_id, id) ON DELETE CASCADE
);
CREATE INDEX annotations_entity ON neotoma.annotations (user_id, entity_id, created_at, id);
CREATE INDEX annotations_observation ON neotoma.annotations (user_id, observation_id) WHERE observation_id IS NOT NULL;
COMMENT ON TABLE neotoma.annotations IS
  'Notes attached to an entity or one of its observations (annotate); they change no snapshot or provenance.';
ALTER TABLE neotoma.annotations ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.annotations FORCE ROW LEVEL SECURITY;
CREATE POLICY annotations_own_rows ON neotoma.annotations
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.annotations FROM PUBLIC;
GRANT SELECT, INSERT ON neotoma.annotations TO neotoma_user;
CREATE OR REPLACE VIEW neotoma.audit_trail WITH (security_invoker = true) AS
SELECT o.user_id, o.observed_at AS at,
       CASE o.kind WHEN 'deletion' THEN 'delete_entity' WHEN 'restoration' THEN 'restore_entity'
                   ELSE 'correct' END AS action,
       'entity'::text AS target_kind, o.entity_id AS target_id, o.entity_type AS target_type,
       CASE WHEN o.kind IN ('deletion', 'restoration') THEN o.fields->>'reason' END AS reason,
       CASE WHEN o.kind = 'correction'
            THEN jsonb_build_object('observation_id', o.id, 'fields',
                   (SELECT coalesce(jsonb_agg(k ORDER BY k), '[]') FROM jsonb_object_keys(o.fields) k))
            ELSE jsonb_build_object('observation_id', o.id) END AS details
FROM neotoma.observations o
WHERE o.kind IN ('deletion', 'restoration', 'correction')
UNION ALL
SELECT ro.user_id, ro.observed_at,
       CASE ro.kind WHEN 'deletion' THEN 'delete_relationship' ELSE 'restore_relationship' END,
       'relationship', ro.relationship_id::text, r.relationship_type, ro.metadata->>'reason',
       jsonb_build_object('observation_id', ro.id, 'source_entity_id', r.source_entity_id,
                          'target_entity_id', r.target_entity_id)
FROM neotoma.relationship_observations ro
JOIN neotoma.relationships r ON r.user_id = ro.user_id AND r.id = ro.relationship_id
WHERE ro.kind IN ('deletion', 'restoration')
UNION ALL
SELECT m.user_id, m.merged_at, 'merge_entities', 'entity', m.from_entity_id, e.entity_type, m.merge_reason,
       jsonb_build_object('merge_id', m.id, 'to_entity_id', m.to_entity_id,
                          'observations_moved', m.observations_moved, 'relationships_moved', m.relationships_moved)
FROM neotoma.entity_merges m
JOIN neotoma.entities e ON e.user_id = m.user_id AND e.id = m.from_entity_id
UNION ALL
SELECT sp.user_id, sp.split_at, 'split_entity', 'entity', sp.from_entity_id, e.entity_type, sp.reason,
       jsonb_build_object('split_id', sp.id, 'to_entity_id', sp.to_entity_id,
                          'created_entity', sp.created_entity, 'observations_moved', sp.observations_moved)
FROM neotoma.entity_splits sp
JOIN neotoma.entities e ON e.user_id = sp.user_id AND e.id = sp.from_entity_id
UNION ALL
SELECT x.user_id, x.erased_at, 'erase', x.target_kind, NULL, NULL, x.reason,
       jsonb_build_object('erasure_id', x.id, 'counts', x.counts)
FROM neotoma.erasures x
UNION ALL
SELECT a.user_id, a.created_at, 'annotate', CASE WHEN a.observation_id IS NULL THEN 'entity' ELSE 'observation' END,
       coalesce(a.observation_id::text, a.entity_id), e.entity_type, NULL,
       jsonb_build_object('annotation_id', a.id, 'entity_id', a.entity_id, 'note', a.note)
FROM neotoma.annotations a
JOIN neotoma.entities e ON e.user_id = a.user_id AND e.id = a.entity_id;
COMMENT ON VIEW neotoma.audit_trail IS
  'Every deletion, restoration, correction, merge, split, erasure and annotation of the user''s memory: when (at), what (action, target_kind, target_id, target_type), why (reason) and details (ids, corrected field names, erased counts, notes; never erased content).';

-- annotate (as actions.sql declares it).
CREATE OR REPLACE FUNCTION neotoma.annotate(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('annotate', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.annotate(jsonb) IS
  'Attach a note to an entity (entity_id) or to one of its observations (observation_id), beside the truth model: no snapshot, value or provenance changes. The same note on the same target is one annotation (annotating again changes nothing). Logged in neotoma.audit_trail; retrieve_entity_snapshot {include_annotations} answers them. Returns {annotation_id, entity_id, observation_id, note, created_at}.';
REVOKE EXECUTE ON FUNCTION neotoma.annotate(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.annotate(jsonb) TO neotoma_user;

-- Export and import carry annotations (after everything they refer to).
CREATE OR REPLACE FUNCTION neotoma.export_lines() RETURNS SETOF jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT x.line FROM (
    SELECT 1 AS n, s.id::text AS k, jsonb_build_object('table', 'sources', 'row', to_jsonb(s) - 'user_id'
             || jsonb_build_object('file', translate(encode(f.content, 'base64'), E'\n', ''))) AS line
    FROM neotoma.sources s LEFT JOIN neotoma.files f ON f.user_id = s.user_id AND f.source_id = s.id
    WHERE s.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 2, r.id::text, jsonb_build_object('table', 'interpretation_runs', 'row', to_jsonb(r) - 'user_id')
    FROM neotoma.interpretation_runs r WHERE r.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 3, c.id::text, jsonb_build_object('table', 'entity_schemas', 'row', to_jsonb(c) - 'user_id')
    FROM neotoma.entity_schemas c WHERE c.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 4, e.id, jsonb_build_object('table', 'entities', 'row', to_jsonb(e) - 'user_id')
    FROM neotoma.entities e WHERE e.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 5, sp.id::text, jsonb_build_object('table', 'entity_splits', 'row', to_jsonb(sp) - 'user_id')
    FROM neotoma.entity_splits sp WHERE sp.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 6, m.observation_id::text, jsonb_build_object('table', 'observation_moves', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.observation_moves m WHERE m.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 7, o.id::text, jsonb_build_object('table', 'observations', 'row', to_jsonb(o) - 'user_id')
    FROM neotoma.observations o WHERE o.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 8, f.id::text, jsonb_build_object('table', 'raw_fragments', 'row', to_jsonb(f) - 'user_id')
    FROM neotoma.raw_fragments f WHERE f.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 9, r.id::text, jsonb_build_object('table', 'relationships', 'row', to_jsonb(r) - 'user_id')
    FROM neotoma.relationships r WHERE r.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 10, o.id::text, jsonb_build_object('table', 'relationship_observations', 'row', to_jsonb(o) - 'user_id')
    FROM neotoma.relationship_observations o WHERE o.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 11, m.id::text, jsonb_build_object('table', 'entity_merges', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.entity_merges m WHERE m.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 12, x.id::text, jsonb_build_object('table', 'erasures', 'row', to_jsonb(x) - 'user_id')
    FROM neotoma.erasures x WHERE x.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 13, a.id::text, jsonb_build_object('table', 'annotations', 'row', to_jsonb(a) - 'user_id')
    FROM neotoma.annotations a WHERE a.user_id = neotoma.current_user_id()
  ) x ORDER BY x.n, x.k
$$;
CREATE OR REPLACE FUNCTION neotoma.import_lines(lines jsonb[]) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  u uuid := neotoma.current_user_id();
  -- In reference order: a batch writes each table's rows in one statement.
  tables text[] := ARRAY['sources', 'interpretation_runs', 'entity_schemas', 'entities', 'entity_splits',
                         'observation_moves', 'observations', 'raw_fragments', 'relationships',
                         'relationship_observations', 'entity_merges', 'erasures', 'annotations'];
  t text;
  n bigint;
  bad jsonb;
  counts jsonb := '{}';
BEGIN
  IF u IS NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'USER_ID_REQUIRED',
      'message', 'import acts for the session''s user: set neotoma.user_id', 'details', '{}'::jsonb));
  END IF;
  SELECT l INTO bad FROM unnest(lines) l
  WHERE jsonb_typeof(l->'row') IS DISTINCT FROM 'object' OR (l->>'table') IS NULL OR NOT (l->>'table' = ANY (tables))
  LIMIT 1;
  IF bad IS NOT NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'VALIDATION_ERROR',
      'message', format('each line must be {"table": one of %s, "row": {…}}; unknown table %L', array_to_string(tables, ', '), bad->>'table'),
      'details', jsonb_build_object('line', left(bad::text, 200))));
  END IF;
  FOREACH t IN ARRAY tables LOOP
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT (jsonb_populate_record(NULL::neotoma.%1$I,
                      (l->''row'') - ''file'' || jsonb_build_object(''user_id'', $1))).*
                    FROM unnest($2) l WHERE l->>''table'' = %2$L ON CONFLICT DO NOTHING', t, t)
      USING u, lines;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF t = 'sources' THEN
      INSERT INTO neotoma.files (user_id, source_id, content)
      SELECT u, (l->'row'->>'id')::uuid, decode(l->'row'->>'file', 'base64') FROM unnest(lines) l
      WHERE l->>'table' = 'sources' AND l->'row'->>'file' IS NOT NULL
      ON CONFLICT DO NOTHING;
    END IF;
    IF n > 0 THEN
      counts := counts || jsonb_build_object(t, n);
    END IF;
  END LOOP;
  RETURN counts;
END $$;
