-- 0.12.0 -> 0.13.0: the tool sets of other memory servers
-- (docs/tool-sets.md). Each tool is an action with its SQL function; the
-- data they write is Neotoma's own (entities, observations, relationships).
-- New: the graphmem set's integer ids and entity type mappings, which
-- export, import and erasure carry.
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

-- What the tool sets of other graph servers keep besides Neotoma's own data
-- (docs/tool-sets.md).

-- Integer ids of the graph servers that number what they show (GraphMem):
-- one per entity, text observation and relation of a user, given the first
-- time it is shown, in order per user (the same calls give the same ids).
-- `ref` is the entity's id, or the relationship's; `detail` a relation's
-- type, or the SHA-256 of an observation's text (never the text: erasing
-- an entity leaves nothing of it here). `key` (SHA-256 of kind, ref and
-- detail) makes each thing one id.
CREATE TABLE neotoma.graph_ids (
  user_id uuid   NOT NULL,
  id      bigint NOT NULL CHECK (id > 0),
  kind    text   NOT NULL CHECK (kind IN ('entity', 'observation', 'relation')),
  ref     text   NOT NULL,
  detail  text   NOT NULL DEFAULT '',
  key     text   NOT NULL,
  PRIMARY KEY (user_id, id),
  UNIQUE (user_id, key)
);
CREATE INDEX graph_ids_ref ON neotoma.graph_ids (user_id, ref);
COMMENT ON TABLE neotoma.graph_ids IS
  'Stable integer ids of entities, observations and relations, as the graphmem tool set shows them.';

-- Entity type canonicalization (GraphMem's entity_type_mappings): a
-- variant, folded to lower case, and its canonical type. The global rows
-- (user_id = neotoma.global_user_id()) every user reads; a user's own rows
-- come first for that user. Users write their own rows; only operators the
-- global ones.
CREATE TABLE neotoma.entity_type_mappings (
  user_id   uuid NOT NULL,
  variant   text NOT NULL CHECK (variant = lower(btrim(variant)) AND variant <> ''),
  canonical text NOT NULL CHECK (btrim(canonical) <> '' AND length(canonical) <= 200),
  PRIMARY KEY (user_id, variant)
);
COMMENT ON TABLE neotoma.entity_type_mappings IS
  'Entity type variants and their canonical types (graphmem tool set): global rows, and each user''s own.';
INSERT INTO neotoma.entity_type_mappings (user_id, variant, canonical)
SELECT neotoma.global_user_id(), v, c
FROM (VALUES
  ('project', 'Project'), ('workspace', 'Project'), ('context', 'Project'), ('repo', 'Project'),
  ('repository', 'Project'), ('codebase', 'Project'),
  ('task', 'Task'), ('todo', 'Task'),
  ('issue', 'Issue'), ('bug', 'Issue'), ('problem', 'Issue'),
  ('error', 'Error'), ('exception', 'Error'),
  ('solution', 'PossibleSolution'), ('workaround', 'PossibleSolution'), ('fix', 'PossibleSolution'),
  ('possiblesolution', 'PossibleSolution'), ('possible solution', 'PossibleSolution'),
  ('service', 'Service'),
  ('component', 'Component'), ('widget', 'Component'),
  ('person', 'Person'), ('people', 'Person'), ('human', 'Person'),
  ('organization', 'Organization'), ('organisation', 'Organization'), ('org', 'Organization'),
  ('company', 'Organization'),
  ('technology', 'Technology'), ('tool', 'Technology'), ('library', 'Technology'), ('framework', 'Technology'),
  ('document', 'Document'), ('doc', 'Document'), ('file', 'Document'),
  ('decision', 'Decision'), ('concept', 'Concept'), ('idea', 'Concept')
) AS m(v, c);

ALTER TABLE neotoma.entity_type_mappings ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.entity_type_mappings FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_type_mappings_visible ON neotoma.entity_type_mappings FOR SELECT
  USING (user_id IN (neotoma.global_user_id(), (SELECT neotoma.current_user_id())));
CREATE POLICY entity_type_mappings_own ON neotoma.entity_type_mappings
  USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
CREATE POLICY entity_type_mappings_global ON neotoma.entity_type_mappings
  USING (user_id = neotoma.global_user_id() AND (SELECT neotoma.session_is_operator()))
  WITH CHECK (user_id = neotoma.global_user_id() AND (SELECT neotoma.session_is_operator()));

-- Row level security and grants, as security.sql gives them.
ALTER TABLE neotoma.graph_ids ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.graph_ids FORCE ROW LEVEL SECURITY;
CREATE POLICY graph_ids_own_rows ON neotoma.graph_ids USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.graph_ids, neotoma.entity_type_mappings FROM PUBLIC;
GRANT SELECT ON neotoma.graph_ids, neotoma.entity_type_mappings TO neotoma_user;
GRANT INSERT, UPDATE ON neotoma.graph_ids TO neotoma_user;
GRANT INSERT, UPDATE, DELETE ON neotoma.entity_type_mappings TO neotoma_user;

-- Export and import carry them.
CREATE OR REPLACE FUNCTION neotoma.export_lines() RETURNS SETOF jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT x.line FROM (
    SELECT 0 AS n, w.name AS k, jsonb_build_object('table', 'workspaces', 'row', to_jsonb(w) - 'user_id') AS line
    FROM neotoma.workspaces w WHERE w.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 1, s.id::text, jsonb_build_object('table', 'sources', 'row', to_jsonb(s) - 'user_id'
             || jsonb_build_object('file', translate(encode(f.content, 'base64'), E'\n', '')))
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
    UNION ALL
    SELECT 14, c.id::text, jsonb_build_object('table', 'observation_contests', 'row', to_jsonb(c) - 'user_id')
    FROM neotoma.observation_contests c WHERE c.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 15, lpad(g.id::text, 20, '0'), jsonb_build_object('table', 'graph_ids', 'row', to_jsonb(g) - 'user_id')
    FROM neotoma.graph_ids g WHERE g.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 16, m.variant, jsonb_build_object('table', 'entity_type_mappings', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.entity_type_mappings m WHERE m.user_id = neotoma.current_user_id()
  ) x ORDER BY x.n, x.k
$$;

CREATE OR REPLACE FUNCTION neotoma.import_lines(lines jsonb[]) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  u uuid := neotoma.current_user_id();
  -- In reference order: a batch writes each table's rows in one statement.
  tables text[] := ARRAY['workspaces', 'sources', 'interpretation_runs', 'entity_schemas', 'entities', 'entity_splits',
                         'observation_moves', 'observations', 'raw_fragments', 'relationships',
                         'relationship_observations', 'entity_merges', 'erasures', 'annotations',
                         'observation_contests', 'graph_ids', 'entity_type_mappings'];
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
     OR (l->'row' ? 'workspace' AND NOT coalesce(l->'row'->>'workspace' ~ '^[a-z0-9][a-z0-9_-]{0,62}$', false))
  LIMIT 1;
  IF bad IS NOT NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'VALIDATION_ERROR',
      'message', format('each line must be {"table": one of %s, "row": {…}}, a row''s workspace a workspace name: unknown table or bad row in %L', array_to_string(tables, ', '), left(bad::text, 100)),
      'details', jsonb_build_object('line', left(bad::text, 200))));
  END IF;
  FOREACH t IN ARRAY tables LOOP
    -- Rows exported before workspaces existed are in `default`.
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT (jsonb_populate_record(NULL::neotoma.%1$I,
                      ''{"workspace": "default"}'' || (l->''row'') - ''file'' || jsonb_build_object(''user_id'', $1))).*
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
  -- Every workspace rows were imported into is one of the user's (a file
  -- may hold them without its workspaces lines).
  INSERT INTO neotoma.workspaces (user_id, name)
  SELECT u, w FROM (SELECT e.workspace FROM neotoma.entities e WHERE e.user_id = u
                    UNION SELECT s.workspace FROM neotoma.sources s WHERE s.user_id = u) x(w)
  WHERE w <> 'default'
  ON CONFLICT DO NOTHING;
  RETURN counts;
END $$;

-- The tool sets' actions.
CREATE OR REPLACE FUNCTION neotoma.memory_create_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_create_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_create_entities(jsonb) IS
  'Create multiple new entities in the knowledge graph. (An entity whose name the graph has already is left as it is; the entities created are returned.)';
REVOKE EXECUTE ON FUNCTION neotoma.memory_create_entities(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_create_entities(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.memory_create_relations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_create_relations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_create_relations(jsonb) IS
  'Create multiple new relations between entities in the knowledge graph. Relations should be in active voice. (Both entities must exist; a relation the graph has already is left out of the answer.)';
REVOKE EXECUTE ON FUNCTION neotoma.memory_create_relations(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_create_relations(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.memory_add_observations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_add_observations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_add_observations(jsonb) IS
  'Add new observations to existing entities in the knowledge graph';
REVOKE EXECUTE ON FUNCTION neotoma.memory_add_observations(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_add_observations(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.memory_delete_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_delete_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_delete_entities(jsonb) IS
  'Delete multiple entities and their associated relations from the knowledge graph';
REVOKE EXECUTE ON FUNCTION neotoma.memory_delete_entities(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_delete_entities(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.memory_delete_observations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_delete_observations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_delete_observations(jsonb) IS
  'Delete specific observations from entities in the knowledge graph';
REVOKE EXECUTE ON FUNCTION neotoma.memory_delete_observations(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_delete_observations(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.memory_delete_relations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_delete_relations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_delete_relations(jsonb) IS
  'Delete multiple relations from the knowledge graph';
REVOKE EXECUTE ON FUNCTION neotoma.memory_delete_relations(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_delete_relations(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.memory_read_graph(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_read_graph', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_read_graph(jsonb) IS
  'Read the entire knowledge graph, a page at a time: up to `limit` entities (100 unless given, at most 1000) in the order they were created, with the relations starting at them; while more follow, pass the answer''s nextCursor as `cursor`.';
REVOKE EXECUTE ON FUNCTION neotoma.memory_read_graph(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_read_graph(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.memory_search_nodes(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_search_nodes', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_search_nodes(jsonb) IS
  'Search for nodes in the knowledge graph based on a query (matched, case folded, against entity names, types, and observation content; at most 1000 entities, with the relations touching them)';
REVOKE EXECUTE ON FUNCTION neotoma.memory_search_nodes(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_search_nodes(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.memory_open_nodes(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_open_nodes', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_open_nodes(jsonb) IS
  'Open specific nodes in the knowledge graph by their names (with the relations touching them)';
REVOKE EXECUTE ON FUNCTION neotoma.memory_open_nodes(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.memory_open_nodes(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.workspace_read_graph(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('workspace_read_graph', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.workspace_read_graph(jsonb) IS
  'Returns all entities and relations for a workspace (workspaceName), a page at a time: up to `limit` entities (at most 1000) in the order they were created, with the relations starting at them, and nextCursor (pass it as `cursor`) while more follow.';
REVOKE EXECUTE ON FUNCTION neotoma.workspace_read_graph(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.workspace_read_graph(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.workspace_upsert_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('workspace_upsert_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.workspace_upsert_entity(jsonb) IS
  'Creates or updates an entity by name within a workspace: entityType, observations (replacing the entity''s when given) and metadata (a JSON text). Returns {success, id, workspace, name}.';
REVOKE EXECUTE ON FUNCTION neotoma.workspace_upsert_entity(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.workspace_upsert_entity(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.workspace_upsert_relation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('workspace_upsert_relation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.workspace_upsert_relation(jsonb) IS
  'Creates or updates a relation between two existing entities of a workspace, named by fromEntityId/toEntityId or by the legacy from/to names, with an optional metadata JSON text. Returns {success, relationId, workspace, fromEntityId, toEntityId, relationType}.';
REVOKE EXECUTE ON FUNCTION neotoma.workspace_upsert_relation(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.workspace_upsert_relation(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.workspace_get_entity_relations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('workspace_get_entity_relations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.workspace_get_entity_relations(jsonb) IS
  'Lists all relations originating from a given entity of a workspace (entityId, preferred, or entityName). Returns {success, workspaceName, entityId, relations:[{id, relationType, toEntityId, metadata}]}.';
REVOKE EXECUTE ON FUNCTION neotoma.workspace_get_entity_relations(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.workspace_get_entity_relations(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.engram_send_memory(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('engram_send_memory', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.engram_send_memory(jsonb) IS
  'Write one memory: an affirmation, fact or observation (content), with where it came from (source {type, ref, citation}), the source''s reliability letter A-F (confidence_hint: the memory is rated <letter>3, uncorroborated; F3 without one) and the calling agent (agent_id). The same content again corroborates the same memory. Returns {memory_id, status}.';
REVOKE EXECUTE ON FUNCTION neotoma.engram_send_memory(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.engram_send_memory(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.engram_get_memory(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('engram_get_memory', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.engram_get_memory(jsonb) IS
  'Read the memories matching a natural language query, best first: each with its NATO confidence rating, sources, causal chain (relations up to max_depth steps) and participants, plus the contradictions among their sources. min_confidence keeps memories whose letter and number both pass (F6: all); compact leaves out sources, chains, participants and contradictions. Returns {memories, contradictions, meta}.';
REVOKE EXECUTE ON FUNCTION neotoma.engram_get_memory(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.engram_get_memory(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.engram_correct_memory(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('engram_correct_memory', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.engram_correct_memory(jsonb) IS
  'Correct a memory (target_id) by one action with its payload: contest {reason} (lowers its rating a step), annotate {note}, merge_entities {source_id} (that memory joins this one), split_entity {observation_ids | source_ids, to_entity_id?} or reclassify {new_type, reason?}. History is kept and the correction audited. Returns {target_id, action, status (applied, not_found), details}.';
REVOKE EXECUTE ON FUNCTION neotoma.engram_correct_memory(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.engram_correct_memory(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_version(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_version', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_version(jsonb) IS
  'Returns the current version of the GraphMem server (here: the Neotoma extension''s). Returns {version, server}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_get_version(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_get_version(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_current_time(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_current_time', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_current_time(jsonb) IS
  'Returns the current server time as an ISO 8601 string: {current_time}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_get_current_time(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_get_current_time(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_create_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_create_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_create_entity(jsonb) IS
  'Creates a new entity (name, entity_type auto-canonicalized e.g. workspace becomes Project, pipe-separated aliases, description, initial observations). Performs auto-deduplication: if an entity of the same name, or a semantically similar one (cosine distance < 0.25), exists, returns status duplicate_warning with the existing entity instead of creating a duplicate. Returns {status, entity | warning, existing_entity, cosine_distance}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_create_entity(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_create_entity(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_entity(jsonb) IS
  'Retrieves an entity by ID (an integer), including observations and relations.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_get_entity(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_get_entity(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_update_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_update_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_update_entity(jsonb) IS
  'Updates entity name (must be unique), type (auto-canonicalized), aliases and/or description (an empty string clears). Returns the entity with observations and relations.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_update_entity(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_update_entity(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_delete_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_delete_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_delete_entity(jsonb) IS
  'Deletes an entity and all associated observations and relations (its history is kept). Returns {status, id}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_delete_entity(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_delete_entity(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_create_observation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_create_observation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_create_observation(jsonb) IS
  'Adds an observation (text_content) to an existing entity; it is searchable by meaning at once. Returns {observation_id, entity_id, text_content}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_create_observation(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_create_observation(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_delete_observation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_delete_observation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_delete_observation(jsonb) IS
  'Deletes an observation by ID. Returns {status, id}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_delete_observation(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_delete_observation(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_create_relation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_create_relation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_create_relation(jsonb) IS
  'Creates a typed relationship between two entities (relation_type e.g. part_of, depends_on). Returns {relation_id, from_entity_id, to_entity_id, relation_type}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_create_relation(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_create_relation(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_delete_relation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_delete_relation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_delete_relation(jsonb) IS
  'Deletes a relation by ID. Returns {status, id}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_delete_relation(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_delete_relation(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_find_relations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_find_relations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_find_relations(jsonb) IS
  'Finds relations by optional filters (from_entity_id, to_entity_id, relation_type). Returns {relations}, at most 1000.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_find_relations(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_find_relations(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_search_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_search_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_search_entities(jsonb) IS
  'Hybrid search combining text tokenization with vector semantic similarity, merged by Reciprocal Rank Fusion. Returns {results:[{entity_id, name, entity_type, description, aliases, memory_observations_count, relevance_score, matched_fields}]}, at most 50.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_search_entities(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_search_entities(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_list_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_list_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_list_entities(jsonb) IS
  'Paginated listing of all entities (page, default 1; per_page, default 20, max 100), in the order they were created. Returns {entities, page, per_page, total_count, total_pages}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_list_entities(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_list_entities(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_search_subgraph(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_search_subgraph', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_search_subgraph(jsonb) IS
  'Searches across entity names, types, aliases and observations (each can be turned off) and returns a paginated subgraph: the matching entities with their observations and the relations among them. Returns {entities, relations, page, per_page, total_count}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_search_subgraph(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_search_subgraph(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_subgraph_by_ids(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_subgraph_by_ids', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_subgraph_by_ids(jsonb) IS
  'Retrieves a set of entities by their IDs (at most 100) with observations and the relations among them. Returns {entities, relations}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_get_subgraph_by_ids(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_get_subgraph_by_ids(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_set_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_set_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_set_context(jsonb) IS
  'Sets the active project context (project_id: the ID of the project entity) for subsequent operations; it is kept in the memory, so it holds across connections. Returns {status, project_id, project_name, project_type}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_set_context(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_set_context(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_context(jsonb) IS
  'Returns the currently active project context {status: active, project_id, project_name, project_type, description}, or {status: no_context}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_get_context(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_get_context(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_clear_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_clear_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_clear_context(jsonb) IS
  'Clears the active project context. Returns {status: context_cleared}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_clear_context(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_clear_context(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_bulk_update(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_bulk_update', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_bulk_update(jsonb) IS
  'Performs multiple operations in a single atomic transaction, at most 50: entities to create ({name, entity_type, aliases?, description?, observations?}), observations to add ({entity_id, text_content}), relations to create ({from_entity_id, to_entity_id, relation_type}). Rolls back entirely on any error. Returns {status, operations, entities, observations, relations}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_bulk_update(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_bulk_update(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.graphmem_suggest_merges(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_suggest_merges', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_suggest_merges(jsonb) IS
  'Finds potential duplicate entities by vector cosine similarity: pairs within threshold (maximum cosine distance, default 0.3), at most limit (default 20), optionally of one entity_type. Returns {suggestions:[{entity_a, entity_b, cosine_distance, recommendation}]}.';
REVOKE EXECUTE ON FUNCTION neotoma.graphmem_suggest_merges(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graphmem_suggest_merges(jsonb) TO neotoma_user;

