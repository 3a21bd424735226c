-- 0.7.0 -> 0.8.0: resource subscriptions (a transaction that adds to a
-- user's change feed notifies the channel neotoma_changes at commit) and
-- search (what each snapshot is found by, kept with it).

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
CREATE INDEX entity_snapshots_name_trigrams ON neotoma.entity_snapshots USING gin (name_trigrams);

-- retrieve_entities' description tells of search.
COMMENT ON FUNCTION neotoma.retrieve_entities(jsonb) IS
  'List entities, optionally of one `entity_type`, most recently observed first, with their snapshots (include_snapshots, default true). Merged entities are left out unless include_merged. Paginated with limit (max 1000) and offset; returns {entities:[{id, entity_type, canonical_name, snapshot, observation_count, last_observation_at}], total, excluded_merged}. With `search` (free text) it finds entities by their names (typos forgiven), every snapshot value and the names of entities merged into them, best first (then by id), each with relevance_score and matched_fields; search_method says which mode answered (search_mode: auto, lexical, semantic, hybrid).';
