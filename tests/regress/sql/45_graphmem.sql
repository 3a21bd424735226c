-- The graphmem tool set (GraphMem, seed 002; docs/tool-sets.md) through its
-- SQL functions: integer ids given in order the first time something is
-- shown and stable after; entity types canonicalized (the document's
-- examples, a user's own mapping first, global rows for operators only);
-- duplicate warnings by name and by meaning; observations and relations
-- by id; pages; subgraphs; context; an atomic bulk update; merge
-- suggestions; bad input; another user sees none of it; verify() clean.
-- As a non-superuser.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '45000000-0000-0000-0000-00000000000a';

SELECT neotoma.graphmem_get_version() ? 'version' AS has_version,
       neotoma.graphmem_get_current_time() ->> 'current_time' LIKE '20%' AS has_time;
-- "workspace" becomes Project; ids 1, 2… in order of showing.
SELECT neotoma.graphmem_create_entity('{"name": "Neotoma", "entity_type": "workspace", "aliases": "neo|ntm",
  "description": "A memory for agents in Postgres", "observations": ["written in Rust", "uses pgrx"]}') AS created;
SELECT neotoma.graphmem_create_entity('{"name": "Login fails on Safari", "entity_type": "bug"}') #- '{entity,relations}' AS bug;
SELECT neotoma.graphmem_create_entity('{"name": "Clear the cookie", "entity_type": "workaround"}') -> 'entity' -> 'entity_type' AS fix_type;
-- The same name again: a warning with the existing entity, nothing created.
SELECT neotoma.graphmem_create_entity('{"name": "Neotoma", "entity_type": "project"}') - 'warning' AS duplicate;
SELECT count(*) AS entities FROM neotoma.entities;
-- Relations and observations by id.
SELECT neotoma.graphmem_create_relation('{"from_entity_id": 5, "to_entity_id": 4, "relation_type": "fixes"}') AS fixes;
SELECT neotoma.graphmem_create_relation('{"from_entity_id": 4, "to_entity_id": 1, "relation_type": "part_of"}') AS part_of;
SELECT neotoma.graphmem_create_observation('{"entity_id": 1, "text_content": "has tool sets"}') AS observed,
       neotoma.graphmem_create_observation('{"entity_id": 1, "text_content": "has tool sets"}') AS observed_again;
SELECT neotoma.graphmem_get_entity('{"entity_id": 1}') AS neotoma_entity;
SELECT neotoma.graphmem_find_relations('{"relation_type": "fixes"}') AS found,
       jsonb_array_length(neotoma.graphmem_find_relations('{}')->'relations') AS all_relations,
       neotoma.graphmem_find_relations('{"to_entity_id": 1}') -> 'relations' -> 0 -> 'relation_type' AS into_neotoma;
SELECT neotoma.graphmem_delete_observation('{"observation_id": 3}') AS deleted_observation,
       neotoma.graphmem_get_entity('{"entity_id": 1}') -> 'observations' AS left;
SELECT neotoma.graphmem_delete_relation('{"relation_id": 7}') AS deleted_relation,
       neotoma.graphmem_find_relations('{}') -> 'relations' AS remaining;
-- Update: the name (unique), the type (the entity moves to the new type,
-- keeping its id here), aliases cleared.
SELECT neotoma.graphmem_update_entity('{"entity_id": 5, "name": "Clear the session cookie", "entity_type": "task", "aliases": ""}')
         #- '{relations}' #- '{observations}' AS updated;
SELECT entity_type, merged_into IS NOT NULL AS moved FROM neotoma.entities WHERE canonical_name LIKE 'Clear%' ORDER BY 1;
-- Listing and searching.
SELECT neotoma.graphmem_list_entities('{"per_page": 2}') - 'entities' AS page_one,
       jsonb_path_query_array(neotoma.graphmem_list_entities('{"page": 2, "per_page": 2}'), '$.entities[*].entity_id') AS page_two;
SELECT r->'entity_id' AS id, r->'matched_fields' AS matched
FROM jsonb_array_elements(neotoma.graphmem_search_entities('{"query": "ntm Rust"}')->'results') r ORDER BY 1;
SELECT jsonb_path_query_array(g, '$.entities[*].entity_id') AS entities, g->'total_count' AS total, g->'relations' AS relations
FROM neotoma.graphmem_search_subgraph('{"query": "safari", "search_in_name": true}') g;
SELECT neotoma.graphmem_search_subgraph('{"query": "safari", "search_in_name": false}') -> 'total_count' AS not_by_name;
SELECT jsonb_path_query_array(neotoma.graphmem_get_subgraph_by_ids('{"entity_ids": [1, 4]}'), '$.relations[*].relation_type') AS among;
-- Context: a project by id.
SELECT neotoma.graphmem_get_context() AS before,
       neotoma.graphmem_set_context('{"project_id": 1}') AS set,
       neotoma.graphmem_get_context() - 'description' AS active,
       neotoma.graphmem_clear_context() AS cleared,
       neotoma.graphmem_get_context() AS after;
-- Bulk: all or nothing.
SELECT neotoma.graphmem_bulk_update('{"entities": [{"name": "Rails", "entity_type": "library"}],
  "observations": [{"entity_id": 1, "text_content": "bulk fact"}],
  "relations": [{"from_entity_id": 1, "to_entity_id": 4, "relation_type": "tracks"}]}') - 'entities' - 'observations' AS bulk;
SELECT count(*) AS entities_before FROM neotoma.entities \gset
SELECT error_code(try_action('graphmem_bulk_update', '{"entities": [{"name": "Django", "entity_type": "library"}],
  "relations": [{"from_entity_id": 1, "to_entity_id": 999, "relation_type": "x"}]}')) AS bulk_with_bad_id;
SELECT count(*) - :entities_before AS entities_from_failed_bulk FROM neotoma.entities;
-- Type mappings: a user's own first; global rows only for operators.
INSERT INTO neotoma.entity_type_mappings (user_id, variant, canonical) VALUES (neotoma.current_user_id(), 'library', 'Dependency');
SELECT neotoma.graphmem_create_entity('{"name": "Serde", "entity_type": "Library"}') -> 'entity' -> 'entity_type' AS mine_first;
SAVEPOINT global_mapping;
INSERT INTO neotoma.entity_type_mappings VALUES (neotoma.global_user_id(), 'db', 'Database');
ROLLBACK TO SAVEPOINT global_mapping;
SELECT count(*) AS global_rows FROM neotoma.entity_type_mappings WHERE user_id = neotoma.global_user_id() AND variant IN ('project', 'bug', 'fix');
-- Merge suggestions: the closest pairs by meaning.
SELECT neotoma.graphmem_create_entity('{"name": "Login fails on Safari browser", "entity_type": "problem", "description": "dup"}') ->> 'status' AS near_duplicate;
SELECT s->'entity_a'->'name' AS a, s->'entity_b'->'name' AS b, (s->>'cosine_distance')::float < 0.3 AS close
FROM jsonb_array_elements(neotoma.graphmem_suggest_merges('{"threshold": 0.3}')->'suggestions') s LIMIT 3;
-- The ids are the user's, stable: the same things, the same numbers.
SELECT kind, count(*) AS ids, min(id) AS first FROM neotoma.graph_ids GROUP BY kind ORDER BY kind;
SELECT neotoma.graphmem_get_entity('{"entity_id": 1}') -> 'entity_id' AS still_one;

-- Bad input.
SELECT error_code(try_action('graphmem_get_entity', '{"entity_id": 999}')) AS missing,
       try_action('graphmem_get_entity', '{"entity_id": 999}')->'error'->>'message' AS message,
       error_code(try_action('graphmem_get_entity', '{"entity_id": "1"}')) AS string_id,
       error_code(try_action('graphmem_create_entity', '{"name": "", "entity_type": "x"}')) AS empty_name,
       error_code(try_action('graphmem_update_entity', '{"entity_id": 1, "name": "Login fails on Safari"}')) AS taken_name,
       error_code(try_action('graphmem_list_entities', '{"per_page": 500}')) AS big_page,
       error_code(try_action('graphmem_create_relation', '{"from_entity_id": 1, "to_entity_id": 1, "relation_type": "x"}')) AS to_itself,
       error_code(try_action('graphmem_suggest_merges', '{"threshold": 2}')) AS bad_threshold,
       error_code(try_action('graphmem_delete_observation', '{"observation_id": 1}')) AS an_entity_id;

-- Another user: none of it, not even the numbers.
SET neotoma.user_id = '45000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('graphmem_get_entity', '{"entity_id": 1}')) AS their_one,
       neotoma.graphmem_list_entities() -> 'total_count' AS their_count,
       (SELECT count(*) FROM neotoma.graph_ids) AS their_ids,
       (SELECT count(*) FROM neotoma.entity_type_mappings WHERE user_id <> neotoma.global_user_id()) AS their_mappings;
SET neotoma.user_id = '45000000-0000-0000-0000-00000000000a';
-- The listing's total is the kept count of live entities (entity_counts):
-- the same as counting them, merged and deleted ones left out.
SELECT neotoma.graphmem_list_entities() -> 'total_count'
       = to_jsonb((SELECT count(*) FROM neotoma.entities
                   WHERE workspace = 'default' AND merged_into IS NULL AND deleted_at IS NULL)) AS total_is_live,
       (SELECT count(*) FROM neotoma.entities WHERE merged_into IS NOT NULL OR deleted_at IS NOT NULL) > 0 AS some_left_out;

SELECT (neotoma.verify())->'ok' AS verified;
ROLLBACK;
