-- 0.12.0 -> 0.13.0: the tool sets of other memory servers
-- (docs/tool-sets.md). Each tool is an action with its SQL function; the
-- data they write is Neotoma's own (entities, observations, relationships),
-- so no table changes.

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

