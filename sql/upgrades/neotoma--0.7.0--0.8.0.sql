-- 0.7.0 -> 0.8.0: resource subscriptions (a transaction that adds to a
-- user's change feed notifies the channel neotoma_changes at commit) and
-- search (what each snapshot is found by, kept with it).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

CREATE FUNCTION neotoma._changes_notify() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  PERFORM pg_notify('neotoma_changes', u.user_id::text || ' ' || pg_current_xact_id()::text)
  FROM (SELECT DISTINCT c.user_id FROM new_changes c) u;
  RETURN NULL;
END $$;
CREATE TRIGGER changes_notify AFTER INSERT ON neotoma.changes
  REFERENCING NEW TABLE AS new_changes
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._changes_notify();
REVOKE EXECUTE ON FUNCTION neotoma._changes_notify() FROM PUBLIC;

-- list_recent_changes now gives a relationship change's type and ends.
COMMENT ON FUNCTION neotoma.list_recent_changes(jsonb) IS
  'The change feed of this user''s memory: entities observed, corrected, deleted, restored or merged; relationships asserted, deleted or restored; sources created; schemas registered or updated; erasures. Oldest first, in an order that never skips a change: pass the answer''s next_cursor as `since` to read on (polling with it returns nothing until something changes). entity_type keeps entity changes of that type. Returns {changes: [{cursor, kind, operation, entity_id, entity_type, relationship_id, relationship_type, source_entity_id, target_entity_id, source_id, changed_at}], next_cursor, has_more}; MCP resource subscriptions are driven by this feed.';

-- Search: the trigrams of a name, and the generated columns and indexes of
-- entity_snapshots (sql/search.sql). Adding the columns computes them for
-- every snapshot.
CREATE FUNCTION neotoma."_name_trigrams"("name" TEXT) RETURNS TEXT[]
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'name_trigrams_wrapper';
REVOKE EXECUTE ON FUNCTION neotoma._name_trigrams(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._name_trigrams(text) TO neotoma_user;
ALTER TABLE neotoma.entity_snapshots
  ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('pg_catalog.simple', coalesce(snapshot->>'name', snapshot->>'title', '')), 'A')
    || jsonb_to_tsvector('pg_catalog.simple', snapshot, '["string", "numeric"]')
    || jsonb_to_tsvector('pg_catalog.english', snapshot, '["string"]')) STORED,
  ADD COLUMN name_trigrams tsvector GENERATED ALWAYS AS (
    array_to_tsvector(neotoma._name_trigrams(coalesce(snapshot->>'name', snapshot->>'title', '')))) STORED;
CREATE INDEX entity_snapshots_search ON neotoma.entity_snapshots USING gin (search_vector);

-- The index of name trigrams, one row each, kept by the triggers below from
-- entity_snapshots.name_trigrams: finds the entities sharing enough of a
-- query's trigrams the way pg_trgm's index does, from a narrow btree,
-- without reading snapshots.
CREATE TABLE neotoma.entity_name_trigrams (
  user_id   uuid NOT NULL,
  trigram   text NOT NULL,
  entity_id text NOT NULL,
  PRIMARY KEY (user_id, trigram, entity_id)
);
-- Row triggers, by key: a snapshot's rows are found through its own
-- trigrams (no foreign key: its check per row cost more than the rows).
CREATE FUNCTION neotoma._name_trigrams_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM neotoma.entity_name_trigrams t
    WHERE t.user_id = OLD.user_id AND t.trigram = ANY (tsvector_to_array(OLD.name_trigrams))
      AND t.entity_id = OLD.entity_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO neotoma.entity_name_trigrams (user_id, trigram, entity_id)
    SELECT NEW.user_id, g, NEW.entity_id FROM unnest(tsvector_to_array(NEW.name_trigrams)) g
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
-- Emptying the snapshots (TRUNCATE, also by CASCADE from entities) empties it.
CREATE FUNCTION neotoma._name_trigrams_truncated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  TRUNCATE neotoma.entity_name_trigrams;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_snapshots_name_trigrams AFTER INSERT OR DELETE ON neotoma.entity_snapshots
  FOR EACH ROW EXECUTE FUNCTION neotoma._name_trigrams_changed();
CREATE TRIGGER entity_snapshots_name_trigrams_changed AFTER UPDATE ON neotoma.entity_snapshots
  FOR EACH ROW WHEN (OLD.name_trigrams IS DISTINCT FROM NEW.name_trigrams)
  EXECUTE FUNCTION neotoma._name_trigrams_changed();
CREATE TRIGGER entity_snapshots_truncated AFTER TRUNCATE ON neotoma.entity_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._name_trigrams_truncated();
-- The index of names as it would have been kept; row level security and
-- grants as security.sql gives them.
INSERT INTO neotoma.entity_name_trigrams (user_id, trigram, entity_id)
SELECT s.user_id, g, s.entity_id FROM neotoma.entity_snapshots s, unnest(tsvector_to_array(s.name_trigrams)) g;
ALTER TABLE neotoma.entity_name_trigrams ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.entity_name_trigrams FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_name_trigrams_own_rows ON neotoma.entity_name_trigrams
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.entity_name_trigrams FROM PUBLIC;
GRANT SELECT ON neotoma.entity_name_trigrams TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma._name_trigrams_changed(), neotoma._name_trigrams_truncated() FROM PUBLIC;

-- retrieve_entities' description tells of search.
COMMENT ON FUNCTION neotoma.retrieve_entities(jsonb) IS
  'List entities, optionally of one `entity_type`, most recently observed first, with their snapshots (include_snapshots, default true). Merged entities are left out unless include_merged. Paginated with limit (max 1000) and offset; returns {entities:[{id, entity_type, canonical_name, snapshot, observation_count, last_observation_at}], total, excluded_merged}. With `search` (free text) it finds entities by their names (typos forgiven), every snapshot value and the names of entities merged into them, best first (then by id), each with relevance_score and matched_fields; search_method says which mode answered (search_mode: auto, lexical, semantic, hybrid).';

-- search_subgraph and get_subgraph_by_ids (as actions.sql declares them).
CREATE OR REPLACE FUNCTION neotoma.search_subgraph(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('search_subgraph', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.search_subgraph(jsonb) IS
  'Search the memory and get a subgraph: the entities that match query (names with typos forgiven, entity types, names of entities merged into them, every snapshot value; each search_in_* turns one off), best first and paginated (page, per_page up to 100), each with its snapshot, its latest observations, relevance_score and matched_fields, and the current relationships among them. Returns {entities: [{entity_id, entity_type, canonical_name, snapshot, observation_count, observations, relevance_score, matched_fields}], relationships: [{id, relationship_type, source_entity_id, target_entity_id, snapshot}], total, page, per_page, search_method}.';

CREATE OR REPLACE FUNCTION neotoma.get_subgraph_by_ids(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_subgraph_by_ids', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_subgraph_by_ids(jsonb) IS
  'The entities named by entity_ids (1–100, in that order), each with its snapshot and latest observations, and the current relationships among them; ids that name no current entity are listed in missing. Returns {entities, relationships, missing}.';

REVOKE EXECUTE ON FUNCTION neotoma.search_subgraph(jsonb), neotoma.get_subgraph_by_ids(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.search_subgraph(jsonb), neotoma.get_subgraph_by_ids(jsonb) TO neotoma_user;
