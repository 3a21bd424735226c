-- The tool sets of other memory servers (docs/tool-sets.md) through their
-- SQL functions: the memory server's graph (names unique, observations a
-- list one can delete from, several relation types between two entities,
-- pages with a cursor), the workspace graph server's upserts in the
-- workspace its workspaceName folds to, EngraMCP's memories with ratings
-- and corrections; what one set writes the others and Neotoma read; bad
-- input; another user sees none of it; verify() clean. As a non-superuser.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '44000000-0000-0000-0000-00000000000a';

-- memory: the README's example entities; a name already there is left as it is.
SELECT neotoma.memory_create_entities('{"entities": [
  {"name": "John_Smith", "entityType": "person", "observations": ["Speaks fluent Spanish"]},
  {"name": "Anthropic", "entityType": "organization", "observations": []},
  {"name": "Graduated in 2019", "entityType": "Life Event", "observations": ["BA in Design"]}]}') AS created;
SELECT neotoma.memory_create_entities('{"entities": [{"name": "John_Smith", "entityType": "robot", "observations": ["x"]}]}') AS created_again;
SELECT neotoma.memory_create_relations('{"relations": [
  {"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
  {"from": "John_Smith", "to": "Anthropic", "relationType": "Invested In"},
  {"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}]}') AS related;
SELECT neotoma.memory_create_relations('{"relations": [{"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}]}') AS related_again;
SELECT neotoma.memory_add_observations('{"observations": [{"entityName": "John_Smith",
  "contents": ["Graduated in 2019", "Speaks fluent Spanish", "Prefers morning meetings"]}]}') AS added;
SELECT neotoma.memory_delete_observations('{"deletions": [{"entityName": "John_Smith", "observations": ["Graduated in 2019"]},
  {"entityName": "Nobody", "observations": ["x"]}]}') AS deleted_observations;
SELECT neotoma.memory_delete_relations('{"relations": [{"from": "John_Smith", "to": "Anthropic", "relationType": "Invested In"}]}') AS deleted_relation;
-- A relation from an entity to itself, as the reference server accepts it
-- (a REFERS_TO relationship from the entity to itself), with the others of
-- its batch; deleted like any.
SELECT neotoma.memory_create_relations('{"relations": [{"from": "John_Smith", "to": "John_Smith", "relationType": "mentors"},
  {"from": "John_Smith", "to": "Anthropic", "relationType": "advises"}]}') AS with_a_self_relation;
SELECT jsonb_path_query_array(neotoma.memory_read_graph(), '$.relations[*] ? (@.from == @.to)') AS self_relations;
SELECT neotoma.memory_delete_relations('{"relations": [{"from": "John_Smith", "to": "John_Smith", "relationType": "mentors"}]}') ->> 'success' AS deleted_self,
       jsonb_path_query_array(neotoma.memory_read_graph(), '$.relations[*] ? (@.from == @.to)') AS self_relations_after;
-- Only REFERS_TO may point back at its own entity.
SELECT error_code(try_action('create_relationship', jsonb_build_object('relationship_type', 'PART_OF',
         'source_entity_id', e.id, 'target_entity_id', e.id))) AS part_of_itself
FROM neotoma.entities e ORDER BY e.id LIMIT 1;
SELECT neotoma.memory_open_nodes('{"names": ["John_Smith", "Nobody"]}') AS opened;
SELECT neotoma.memory_search_nodes('{"query": "SPANISH"}') -> 'entities' AS found_by_observation,
       neotoma.memory_search_nodes('{"query": "life ev"}') -> 'entities' AS found_by_type,
       neotoma.memory_search_nodes('{"query": "50%_"}') -> 'entities' AS like_characters_are_literal;
-- Pages: two entities, then the rest; each relation with the page of its start.
SELECT neotoma.memory_read_graph('{"limit": 2}') - 'nextCursor' AS first_page,
       neotoma.memory_read_graph('{"limit": 2}') ? 'nextCursor' AS more;
SELECT neotoma.memory_read_graph(jsonb_build_object('limit', 2, 'cursor',
         neotoma.memory_read_graph('{"limit": 2}')->>'nextCursor')) AS second_page;
-- A deleted entity created again comes back, with what the call says; a
-- name the type's identity rules fold to an existing one (person names
-- fold case) creates nothing.
SELECT neotoma.memory_delete_entities('{"entityNames": ["Anthropic"]}') ->> 'success' AS deleted;
SELECT neotoma.memory_open_nodes('{"names": ["Anthropic"]}') -> 'entities' AS anthropic_gone;
SELECT neotoma.memory_create_entities('{"entities": [{"name": "Anthropic", "entityType": "organization", "observations": ["back again"]}]}') AS recreated;
SELECT neotoma.memory_open_nodes('{"names": ["Anthropic"]}') -> 'entities' AS anthropic_back;
SELECT neotoma.memory_create_entities('{"entities": [{"name": "john_smith", "entityType": "person", "observations": []}]}') AS folded_name,
       neotoma.memory_open_nodes('{"names": ["John_Smith"]}') -> 'entities' -> 0 -> 'observations' AS john_unchanged;
-- In Neotoma's terms: typed entities whose types were registered for this
-- user, observations with provenance, one REFERS_TO relationship.
SELECT entity_type, snapshot FROM neotoma.entity_snapshots ORDER BY entity_type;
SELECT entity_type, user_id = neotoma.global_user_id() AS global, definition->'identity' AS identity
FROM neotoma.entity_schemas WHERE active AND entity_type IN ('person', 'organization', 'life_event') ORDER BY 1, 2;
SELECT relationship_type, deleted_at IS NULL AS live FROM neotoma.relationships;

-- workspace: upserts by name in the workspace "Demo Space" means.
SELECT neotoma.workspace_upsert_entity('{"workspaceName": "Demo Space", "name": "Alice", "entityType": "Person",
  "observations": ["Software engineer"], "metadata": "{\"dept\":\"Engineering\"}"}') - 'id' AS upserted;
SELECT neotoma.workspace_upsert_entity('{"workspaceName": "Demo Space", "name": "ProjectX", "entityType": "Project"}') - 'id' AS upserted;
SELECT neotoma.workspace_upsert_relation('{"workspaceName": "demo space", "from": "Alice", "to": "ProjectX",
  "relationType": "works_on", "metadata": "{\"since\":\"2025\"}"}') ->> 'relationType' AS upserted_relation;
SELECT neotoma.workspace_upsert_entity('{"workspaceName": "Demo Space", "name": "Alice", "entityType": "Person",
  "observations": ["Staff engineer"]}') ->> 'success' AS updated;
SELECT jsonb_path_query_array(g, '$.entities[*] ? (@.name == "Alice")') AS alice,
       jsonb_path_query_array(g, '$.relations[*].relationType') AS relation_types
FROM neotoma.workspace_read_graph('{"workspaceName": "Demo Space"}') g;
SELECT name FROM neotoma.workspaces ORDER BY name;
SELECT (neotoma.workspace_get_entity_relations('{"workspaceName": "Demo Space", "entityName": "Alice"}')->'relations'->0) - 'id' - 'toEntityId' AS alice_relation;
-- The memory tools read the context's workspace: default, then demo-space.
SELECT jsonb_path_query_array(neotoma.memory_read_graph(), '$.entities[*].name') AS default_names;
SELECT neotoma.set_context('{"workspace": "demo-space"}') -> 'effective' AS context;
SELECT jsonb_path_query_array(neotoma.memory_read_graph(), '$.entities[*].name') AS demo_names;
SELECT neotoma.clear_context() -> 'effective' AS context;

-- engram: a memory rated by its writer's reliability, corroborated by a better
-- one; ids are mem_<hex16> (the entity's graph number), answers have the
-- original's fields (status, error_code, message: null unless refused).
SELECT r->>'status' AS sent, r->>'memory_id' ~ '^mem_[0-9a-f]{16}$' AS mem_id, r->'error_code' AS error_code
FROM neotoma.engram_send_memory('{"content": "The deploy failed because the disk was full",
  "source": {"type": "log", "ref": "ci#42", "citation": "No space left on device"}, "confidence_hint": "C", "agent_id": "claude"}') r;
SELECT neotoma.engram_send_memory('{"content": "The deploy failed because the disk was full", "confidence_hint": "b"}') ->> 'status' AS sent_again;
SELECT r->>'status' AS status, m->'type' AS type, m ? 'dynamic_type' AS has_dynamic_type, m->'confidence' AS confidence,
       m->'content' AS content, jsonb_path_query_array(m, '$.sources[*]') #- '{0,source_id}' #- '{0,observed_at}' AS sources,
       r->'meta'->'truncated' AS truncated
FROM neotoma.engram_get_memory('{"query": "deploy disk full"}') r, jsonb_array_elements(r->'memories') m;
SELECT r->'meta'->'total_found' AS passing_a2 FROM neotoma.engram_get_memory('{"query": "deploy disk full", "min_confidence": "A2"}') r;
SELECT m->>'id' AS memory_id FROM jsonb_array_elements(neotoma.engram_get_memory('{"query": "deploy disk full"}')->'memories') m \gset
SELECT (neotoma.engram_correct_memory(jsonb_build_object('target_id', :'memory_id', 'action', 'contest',
          'payload', '{"reason": "the disk had space; the quota was the cause"}'::jsonb)) - 'details' - 'target_id') AS contested;
SELECT neotoma.engram_correct_memory(jsonb_build_object('target_id', :'memory_id', 'action', 'annotate',
          'payload', '{"note": "see the post-mortem"}'::jsonb)) ->> 'status' AS annotated,
       neotoma.engram_correct_memory('{"target_id": "mem_00000000000000ff", "action": "annotate", "payload": {"note": "x"}}') - 'target_id' AS not_found;
-- The marks show in properties, as the original shows them.
SELECT m->'confidence' AS after_contest, m->'properties'->'status' AS status, m->'properties'->'contest_reason' AS reason,
       jsonb_typeof(m->'properties'->'contested_at') AS contested_at, m->'properties'->'annotations'->0->'note' AS note
FROM jsonb_array_elements(neotoma.engram_get_memory('{"query": "deploy disk full"}')->'memories') m;
-- Merge: another memory is merged into this one, which keeps its id.
SELECT r->>'memory_id' AS other_id FROM neotoma.engram_send_memory('{"content": "The runner ran out of disk during the deploy"}') r \gset
SELECT r->>'status' AS merged, r->'details'->>'merged_into' = :'memory_id' AS kept_its_id,
       r->'details'->>'merged_from' = :'other_id' AS merged_from
FROM neotoma.engram_correct_memory(jsonb_build_object('target_id', :'memory_id', 'action', 'merge_entities',
       'payload', jsonb_build_object('merge_with', :'other_id'))) r;
SELECT r->>'status' AS merged_with_itself, r->>'error_code' AS error_code
FROM neotoma.engram_correct_memory(jsonb_build_object('target_id', :'memory_id', 'action', 'merge_entities',
       'payload', jsonb_build_object('merge_with', :'memory_id'))) r;
-- Reclassify: the memory keeps its id in its new type.
SELECT r->>'status' AS reclassified, r->'details'->>'old_type' AS old_type, r->'details'->>'new_type' AS new_type
FROM neotoma.engram_correct_memory(jsonb_build_object('target_id', :'memory_id', 'action', 'reclassify',
       'payload', '{"new_type": "Event", "reason": "it happened"}'::jsonb)) r;
SELECT m->'type' AS type, m->>'id' = :'memory_id' AS same_id
FROM jsonb_array_elements(neotoma.engram_get_memory('{"query": "deploy disk full"}')->'memories') m ORDER BY 1;
-- Split: each part becomes a memory with the target's source and letter, the target goes.
SELECT r->>'status' AS split, jsonb_array_length(r->'details'->'created_memory_ids') AS created
FROM neotoma.engram_correct_memory(jsonb_build_object('target_id', :'memory_id', 'action', 'split_entity',
       'payload', '{"split_into": ["The disk was full", "The deploy failed"]}'::jsonb)) r;
SELECT m->'content' AS content, m->'confidence' AS confidence, m->'sources'->0->'type' AS source_type
FROM jsonb_array_elements(neotoma.engram_get_memory('{"query": "disk deploy full failed"}')->'memories') m
WHERE m->>'content' IN ('The disk was full', 'The deploy failed') ORDER BY 1;
SELECT m->>'id' AS part_id FROM jsonb_array_elements(neotoma.engram_get_memory('{"query": "disk full"}')->'memories') m
WHERE m->>'content' = 'The disk was full' \gset
SELECT neotoma.engram_correct_memory(jsonb_build_object('target_id', :'memory_id', 'action', 'annotate',
          'payload', '{"note": "x"}'::jsonb)) ->> 'status' AS split_target;
-- Compact: the memory only.
SELECT jsonb_path_query_array(neotoma.engram_get_memory('{"query": "deploy", "compact": true}'), '$.memories[*].sources') AS compact_sources;
-- The memory tools see the memories too.
SELECT neotoma.memory_open_nodes('{"names": ["The disk was full"]}') -> 'entities' -> 0 -> 'entityType' AS memory_type;

-- Bad input: each set's validation, nothing written.
SELECT count(*) AS observations_before FROM neotoma.observations \gset
SELECT error_code(try_action('memory_add_observations', '{"observations": [{"entityName": "Nobody", "contents": ["x"]}]}')) AS missing_entity,
       try_action('memory_add_observations', '{"observations": [{"entityName": "Nobody", "contents": ["x"]}]}')->'error'->>'message' AS message,
       error_code(try_action('memory_create_relations', '{"relations": [{"from": "John_Smith", "to": "Nobody", "relationType": "knows"}]}')) AS missing_end,
       error_code(try_action('memory_create_entities', '{"entities": [{"name": "x"}]}')) AS no_type,
       error_code(try_action('memory_create_entities', '{"entities": [{"name": " ", "entityType": "t", "observations": []}]}')) AS blank_name,
       error_code(try_action('memory_read_graph', '{"limit": 0}')) AS bad_limit,
       error_code(try_action('memory_read_graph', '{"cursor": "nonsense"}')) AS bad_cursor,
       -- A time no timestamp can hold: refused, not a database error.
       error_code(try_action('memory_read_graph', '{"cursor": "9223372036854775807:ent_00000000000000000000000000000000"}')) AS cursor_out_of_time,
       error_code(try_action('memory_read_graph', '{"user_id": "44000000-0000-0000-0000-00000000000b"}')) AS other_user;
SELECT try_action('workspace_upsert_entity', '{"workspaceName": "demo", "name": "", "entityType": "Person"}')->'error'->>'message' AS empty_name,
       try_action('workspace_upsert_relation', '{"workspaceName": "demo space", "from": "Alice", "to": "Bob", "relationType": "knows"}')->'error'->>'message' AS missing_target,
       try_action('workspace_upsert_relation', '{"workspaceName": "demo space", "relationType": "knows"}')->'error'->>'message' AS no_ends,
       try_action('workspace_get_entity_relations', '{"workspaceName": "demo space", "entityName": "Bob"}')->'error'->>'message' AS no_bob,
       error_code(try_action('workspace_read_graph', '{"workspaceName": "---"}')) AS no_workspace_name,
       error_code(try_action('workspace_upsert_entity', '{"workspaceName": "demo", "name": "A", "entityType": "P", "metadata": "{not json"}')) AS bad_metadata;
-- engram refuses as the original does: a normal answer saying why.
SELECT neotoma.engram_send_memory('{"content": "x", "confidence_hint": "Z"}') - 'message' AS bad_hint,
       neotoma.engram_send_memory('{"content": "  "}') ->> 'error_code' AS empty_memory,
       neotoma.engram_get_memory('{"query": "x", "min_confidence": "G9"}') - 'meta' - 'message' AS bad_rating,
       neotoma.engram_get_memory('{"query": "x", "max_depth": 11}') ->> 'status' AS too_deep,
       neotoma.engram_correct_memory('{"target_id": "x", "action": "delete"}') - 'message' AS bad_action,
       neotoma.engram_correct_memory(jsonb_build_object('target_id', :'part_id', 'action', 'contest')) ->> 'error_code' AS no_reason,
       error_code(try_action('engram_send_memory', '{"source": {}}')) AS unreadable;
SELECT count(*) - :observations_before AS observations_from_bad_input FROM neotoma.observations;

-- Another user sees none of it, by any set.
SET neotoma.user_id = '44000000-0000-0000-0000-00000000000b';
SELECT neotoma.memory_read_graph() AS their_graph,
       neotoma.memory_open_nodes('{"names": ["John_Smith"]}') AS their_john,
       neotoma.workspace_read_graph('{"workspaceName": "Demo Space"}') -> 'entities' AS their_demo,
       neotoma.engram_get_memory('{"query": "deploy disk full"}') -> 'memories' AS their_memories,
       neotoma.engram_correct_memory(jsonb_build_object('target_id', :'memory_id', 'action', 'annotate', 'payload', '{"note": "mine"}'::jsonb)) ->> 'status' AS correcting_hers;
SET neotoma.user_id = '44000000-0000-0000-0000-00000000000a';

SELECT (neotoma.verify())->'ok' AS verified;
ROLLBACK;
