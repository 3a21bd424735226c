-- 0.18.0 -> 0.19.0: every GIN index of search keeps a pending list of 64 kB
-- (docs/decisions.md, "GIN pending lists"), as entity_identifiers_grams
-- already did; the timeline's time index carries the columns a listing
-- filters on, so that counting a range's events reads the index only (the
-- update rebuilds that index); searching observations uses their index
-- under row level security; relationship observations are indexed by
-- source; the graph tools' pages of live entities by creation are indexed.
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

ALTER INDEX neotoma.entity_snapshots_search SET (gin_pending_list_limit = 64);
ALTER INDEX neotoma.entity_snapshots_search_grams SET (gin_pending_list_limit = 64);
ALTER INDEX neotoma.observations_search SET (gin_pending_list_limit = 64);
ALTER INDEX neotoma.files_search SET (gin_pending_list_limit = 64);

DROP INDEX neotoma.timeline_events_time;
CREATE INDEX timeline_events_time ON neotoma.timeline_events (user_id, workspace, event_timestamp DESC, id)
  INCLUDE (entity_id, event_type, source_id);

-- Observations' words: an index condition under row level security (see
-- search.sql). (Connected backends re-read observations_search's expression
-- because the index's options changed above; ALTER FUNCTION alone would not
-- make them.)
ALTER FUNCTION neotoma._observation_vector(jsonb) LEAKPROOF SET search_path = pg_catalog, pg_temp;

-- The relationships a source observed (a source's neighborhood, erasing a
-- source) without reading all of the user's.
CREATE INDEX relationship_observations_source ON neotoma.relationship_observations (user_id, source_id);

-- The graph tools' pages (read_graph) in index order (see graph_servers.sql).
CREATE INDEX entities_live_created ON neotoma.entities (user_id, workspace, created_at, id)
  WHERE merged_into IS NULL AND deleted_at IS NULL;

-- Supabase-style platform roles get what neotoma_user has, as at install.
SELECT neotoma_private.grant_platform_roles();
