-- 0.7.0 -> 0.8.0: resource subscriptions. A transaction that adds to a
-- user's change feed notifies the channel neotoma_changes at commit.

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
