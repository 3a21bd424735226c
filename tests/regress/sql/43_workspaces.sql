-- Workspaces (docs/design/workspaces.md): identity is resolved within a
-- workspace (the same e-mail in two workspaces is two entities), reads
-- answer only from the workspaces they select (one, several, "*"), writes
-- refuse what lies in another workspace, every answer says where it came
-- from, the user's context holds across calls, list_workspaces counts
-- agree with the rows; isolation and bad input; verify() clean. As a
-- non-superuser.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '43000000-0000-0000-0000-00000000000a';

-- The same person and invoice in default and in "work".
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ada", "email": "ada@example.com"},
  {"entity_type": "invoice", "invoice_number": "W-1", "vendor_name": "V", "invoice_date": "2024-01-10"}]}')->'workspace_context' AS stored_default;
SELECT neotoma.store('{"workspace": "work", "entities": [{"entity_type": "person", "name": "Ada at work", "email": "ada@example.com"},
  {"entity_type": "invoice", "invoice_number": "W-1", "vendor_name": "V", "invoice_date": "2024-03-10"}]}')->'workspace_context' AS stored_work;
SELECT id AS home_ada FROM neotoma.entities WHERE entity_type = 'person' AND workspace = 'default' \gset
SELECT id AS work_ada FROM neotoma.entities WHERE entity_type = 'person' AND workspace = 'work' \gset
-- Two entities; the default one has the id it always had (workspaces
-- changed no id: 10_store's formula).
SELECT count(*) AS people, count(DISTINCT id) AS ids FROM neotoma.entities WHERE entity_type = 'person';
SELECT workspace, count(*) AS entities FROM neotoma.entities GROUP BY workspace ORDER BY workspace;
SELECT workspace, count(*) AS sources FROM neotoma.sources GROUP BY workspace ORDER BY workspace;
-- Storing the same content again in each is a duplicate there only.
SELECT neotoma.store('{"workspace": "work", "entities": [{"entity_type": "person", "name": "Ada at work", "email": "ada@example.com"},
  {"entity_type": "invoice", "invoice_number": "W-1", "vendor_name": "V", "invoice_date": "2024-03-10"}]}')->'deduplicated' AS again_in_work;
SELECT neotoma.store('{"workspace": "play", "entities": [{"entity_type": "person", "name": "Ada at work", "email": "ada@example.com"},
  {"entity_type": "invoice", "invoice_number": "W-1", "vendor_name": "V", "invoice_date": "2024-03-10"}]}')->'deduplicated' AS same_content_in_play;

-- Reads: default unless asked; one, several, or all.
SELECT w AS workspace, r->'total' AS total, jsonb_path_query_array(r, '$.entities[*].canonical_name') AS names,
       r->'workspace_context' AS context
FROM (VALUES ('null'::jsonb), ('"work"'), ('["work", "play"]'), ('"*"')) v(w),
     LATERAL (SELECT neotoma.retrieve_entities(CASE WHEN w = 'null' THEN '{"entity_type": "person"}'::jsonb
                                                     ELSE jsonb_build_object('entity_type', 'person', 'workspace', w) END)) x(r)
ORDER BY 1;
SELECT jsonb_path_query_array(neotoma.retrieve_entities('{"workspace": "*"}'), '$.entities[*].workspace') AS each_says_where;
-- By id: found where it is, not elsewhere (the error says where).
SELECT error_code(try_action('retrieve_entity_snapshot', jsonb_build_object('entity_id', :'work_ada'))) AS from_default,
       try_action('retrieve_entity_snapshot', jsonb_build_object('entity_id', :'work_ada'))->'error'->'details'->>'workspace' AS it_is_in;
SELECT r->'snapshot'->>'name' AS name, r->'workspace_context'->'workspaces' AS answered_from
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'work_ada', 'workspace', 'work')) r;
SELECT error_code(try_action('list_observations', jsonb_build_object('entity_id', :'work_ada'))) AS observations,
       error_code(try_action('retrieve_field_provenance', jsonb_build_object('entity_id', :'work_ada', 'field', 'name'))) AS provenance;
-- Identifiers, search, timeline, duplicates, records: within the selection.
SELECT w AS workspace, jsonb_path_query_array(neotoma.retrieve_entity_by_identifier(jsonb_build_object('identifier', 'ada@example.com', 'workspace', w)), '$.entities[*].canonical_name') AS by_email
FROM unnest(ARRAY['default', 'work']) w;
SELECT w AS workspace, jsonb_path_query_array(neotoma.retrieve_entities(jsonb_build_object('search', 'Ada', 'search_mode', 'lexical', 'workspace', w)), '$.entities[*].canonical_name') AS found
FROM unnest(ARRAY['default', 'work']) w;
SELECT w AS workspace, jsonb_path_query_array(neotoma.list_timeline_events(jsonb_build_object('workspace', w)), '$.events[*].event_timestamp') AS events
FROM unnest(ARRAY['default', 'work', '*']) w;
SELECT neotoma.list_potential_duplicates('{"entity_type": "person", "threshold": 0.1}')->'workspace_context'->'workspaces' AS duplicates_in;
SELECT jsonb_path_query_array(neotoma.get_subgraph_by_ids(jsonb_build_object('entity_ids', jsonb_build_array(:'home_ada', :'work_ada'))), '$.missing[*]') = jsonb_build_array(:'work_ada') AS outside_is_missing;

-- Writes: in the workspace written to; what lies elsewhere is refused.
SELECT error_code(try_action('correct', jsonb_build_object('entity_id', :'work_ada', 'entity_type', 'person', 'field', 'name', 'value', 'X'))) AS correct_elsewhere;
SELECT neotoma.correct(jsonb_build_object('workspace', 'work', 'entity_id', :'work_ada', 'entity_type', 'person', 'field', 'name', 'value', 'Ada Lovelace'))->'workspace_context'->'workspaces' AS corrected_in;
SELECT error_code(try_action('create_relationship', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'home_ada', 'target_entity_id', :'work_ada'))) AS edge_across,
       error_code(try_action('merge_entities', jsonb_build_object('from_entity_id', :'work_ada', 'to_entity_id', :'home_ada'))) AS merge_across,
       error_code(try_action('delete_entity', jsonb_build_object('entity_id', :'work_ada'))) AS delete_elsewhere;
SELECT id AS work_invoice FROM neotoma.entities WHERE entity_type = 'invoice' AND workspace = 'work' \gset
SELECT neotoma.create_relationship(jsonb_build_object('workspace', 'work', 'relationship_type', 'REFERS_TO', 'source_entity_id', :'work_invoice', 'target_entity_id', :'work_ada'))->>'relationship_type' AS edge_in_work;
SELECT w AS workspace, error_code(try_action('list_relationships', jsonb_build_object('entity_id', :'work_ada', 'workspace', w))) AS error,
       neotoma.list_relationships(jsonb_build_object('entity_id', :'work_ada', 'workspace', 'work'))->'total' AS in_work
FROM unnest(ARRAY['default']) w;
-- Notes and contests of what lies elsewhere are refused, writing nothing.
SELECT id AS work_obs FROM neotoma.observations WHERE entity_id = :'work_ada' ORDER BY id LIMIT 1 \gset
SELECT error_code(try_action('annotate', jsonb_build_object('observation_id', :'work_obs', 'note', 'x'))) AS annotate_elsewhere,
       error_code(try_action('contest', jsonb_build_object('observation_id', :'work_obs', 'reason', 'x'))) AS contest_elsewhere,
       (SELECT count(*) FROM neotoma.observation_contests) + (SELECT count(*) FROM neotoma.annotations) AS written;
-- A bulk's operations write in its workspace.
SELECT jsonb_path_query_array(neotoma.bulk('{"workspace": "play", "operations": [
  {"action": "store", "ref": "bob", "args": {"entities": [{"entity_type": "person", "name": "Bob", "email": "bob@example.com"}]}},
  {"action": "store", "ref": "car", "args": {"entities": [{"entity_type": "note", "title": "Bob''s car"}]}},
  {"action": "create_relationship", "args": {"relationship_type": "REFERS_TO", "source_entity_id": "$car", "target_entity_id": "$bob"}}]}'),
  '$.results[*].result.workspace_context.workspaces[0]') AS bulk_wrote_in;
SELECT count(*) AS bob_in_play FROM neotoma.entities WHERE workspace = 'play' AND identity_key LIKE 'email=bob%';

-- Duplicates pair within one workspace: the two "Ada at work" (work, play) are no pair.
SELECT jsonb_array_length(neotoma.list_potential_duplicates('{"entity_type": "person", "threshold": 0.1, "workspace": "*"}')->'pairs') AS pairs_across,
       neotoma.list_potential_duplicates('{"entity_type": "person", "threshold": 0.1, "workspace": "*"}')->'entities_compared' AS compared;
-- An import names workspaces by their names only.
DO $$ BEGIN
  PERFORM neotoma.import_lines(ARRAY['{"table": "entities", "row": {"id": "ent_x", "workspace": "Bad Name"}}'::jsonb]);
EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'import refused: %', split_part(SQLERRM, ':', 1);
END $$;

-- The user's context: actions without workspace use it, and say so.
SELECT r->'effective' AS effective, r->'has_token' AS has_token FROM neotoma.set_context('{"workspace": "work"}') r;
SELECT neotoma.retrieve_entities('{"entity_type": "person"}')->'workspace_context' AS context_read,
       jsonb_path_query_array(neotoma.retrieve_entities('{"entity_type": "person"}'), '$.entities[*].canonical_name') AS names;
SELECT neotoma.store('{"entities": [{"entity_type": "note", "title": "stored in context"}]}')->'workspace_context'->'workspaces' AS store_in_context;
SELECT r->'effective' AS by_project FROM neotoma.set_context(jsonb_build_object('project_entity_id', :'home_ada')) r;
SELECT r->'user'->>'project_entity_id' = :'home_ada' AS project_kept, r->'effective' AS effective FROM neotoma.get_context() r;
SELECT r->'cleared' AS cleared, r->'effective' AS effective FROM neotoma.clear_context() r;
SELECT neotoma.clear_context()->'cleared' AS nothing_left;
SELECT error_code(try_action('set_context', '{"level": "token", "workspace": "work"}')) AS no_token_level;

-- list_workspaces: counts as the rows say.
SELECT w->>'name' AS name, w->'entities' AS entities, w->'entities_including_merged' AS with_merged, w->'sources' AS sources,
       w->'created_at' IS NOT NULL AS created, w->'in_context' AS in_context
FROM jsonb_array_elements(neotoma.list_workspaces()->'workspaces') w;
SELECT bool_and((w->'entities')::int = (SELECT count(*) FROM neotoma.entities e WHERE e.workspace = w->>'name' AND e.merged_into IS NULL AND e.deleted_at IS NULL)
            AND (w->'sources')::int = (SELECT count(*) FROM neotoma.sources s WHERE s.workspace = w->>'name')) AS counts_agree
FROM jsonb_array_elements(neotoma.list_workspaces()->'workspaces') w;

-- (The change feed's filter: tests/e2e/test_workspaces.py, which commits.)

-- Bad input: clear errors, nothing written.
SELECT a AS args, error_code(try_action('retrieve_entities', a::jsonb)) AS code,
       try_action('retrieve_entities', a::jsonb)->'error'->'details'->>'workspace' AS workspace
FROM unnest(ARRAY['{"workspace": "nowhere"}', '{"workspace": "Bad Name"}', '{"workspace": []}', '{"workspace": 7}',
                  '{"workspace": ["work", "nowhere"]}']) a;
SELECT error_code(try_action('store', '{"workspace": "*", "entities": [{"entity_type": "note", "title": "x"}]}')) AS store_all,
       error_code(try_action('store', '{"workspace": ["work"], "entities": [{"entity_type": "note", "title": "x"}]}')) AS store_list,
       error_code(try_action('set_context', '{}')) AS context_nothing,
       error_code(try_action('set_context', jsonb_build_object('workspace', 'work', 'project_entity_id', :'home_ada'))) AS context_both;
-- A token id the gateway's role says the call came with must be one of
-- the user's tokens: another answers FORBIDDEN (a malformed one
-- VALIDATION_ERROR), not a foreign-key error.
SET neotoma.token_id = '43000000-0000-0000-0000-0000000000ff';
SELECT error_code(try_action('set_context', '{"workspace": "work", "level": "token"}')) AS unknown_token;
SET neotoma.token_id = 'not-a-uuid';
SELECT error_code(try_action('set_context', '{"workspace": "work", "level": "token"}')) AS malformed_token;
RESET neotoma.token_id;
SELECT count(*) AS no_workspace_from_bad_input FROM neotoma.workspaces WHERE name NOT IN ('work', 'play');

-- Another user sees none of it.
SET neotoma.user_id = '43000000-0000-0000-0000-00000000000b';
SELECT (SELECT count(*) FROM neotoma.workspaces) AS workspaces, (SELECT count(*) FROM neotoma.contexts) AS contexts,
       error_code(try_action('retrieve_entities', '{"workspace": "work"}')) AS their_work;
SET neotoma.user_id = '43000000-0000-0000-0000-00000000000a';

-- verify() is clean; the copies of workspace agree.
SELECT (neotoma.verify())->'ok' AS verified;
ROLLBACK;
