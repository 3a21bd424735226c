-- Tokens limited to some workspaces (issue 43): a call that comes with such a
-- token (neotoma.token_id, set by the gateway's role) finds, lists, counts
-- and changes only what lies in its workspaces: not by id, search,
-- relationships, traversal, timeline, resource URI, context,
-- another tool set's tools; asking for another workspace is FORBIDDEN
-- (details.limit: workspaces), and what lies there is not found without
-- saying where. Actions that act across every workspace (schemas,
-- analytics) are refused. As a non-superuser.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
-- At least one workspace; an operator's token cannot be limited.
SELECT neotoma.create_api_token('63000000-0000-0000-0000-00000000000a', 'h63-none', NULL, 'user', NULL, false, NULL, '{}');
ROLLBACK;
BEGIN;
\set SHOW_CONTEXT never
SELECT neotoma.create_api_token('63000000-0000-0000-0000-00000000000a', 'h63-op', NULL, 'operator', NULL, false, NULL, '{team}');
ROLLBACK;
BEGIN;
\set SHOW_CONTEXT never
SELECT neotoma.create_api_token('63000000-0000-0000-0000-00000000000a', 'h63-team', 'team agent', 'user', NULL, false, NULL,
                                '{team,team}') - 'id' - 'expires_at' AS team_token;
SELECT id AS team_token FROM neotoma.api_tokens WHERE token_hash = 'h63-team' \gset

SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '63000000-0000-0000-0000-00000000000a';
-- Without a token: the user's memory in three workspaces, relationships
-- in two, and the user's context in `secret`.
SELECT neotoma.store('{"workspace": "team", "entities": [{"entity_type": "person", "name": "Tessa Team", "email": "tessa@example.com", "born": "1990-04-01"}]}')
         ->'entities'->0->>'entity_id' AS tessa \gset
SELECT neotoma.store('{"workspace": "secret", "entities": [{"entity_type": "person", "name": "Sam Secret", "email": "sam@example.com", "born": "1991-04-02"}]}')
         ->'entities'->0->>'entity_id' AS sam \gset
SELECT r->'entities'->0->>'entity_id' AS secret_payment, r->>'source_id' AS secret_source
FROM neotoma.store('{"workspace": "secret", "entities": [{"entity_type": "transaction", "transaction_id": "t-secret", "amount": 12, "date": "2026-03-02", "merchant_name": "Hidden"}]}') r \gset
SELECT neotoma.store('{"workspace": "team", "entities": [{"entity_type": "transaction", "transaction_id": "t-team", "amount": 7, "date": "2026-03-01", "merchant_name": "Open"}]}')
         ->'entities'->0->>'entity_id' AS team_payment \gset
SELECT neotoma.store('{"entities": [{"entity_type": "note", "title": "default note"}]}') IS NOT NULL AS stored_in_default;
SELECT neotoma.store('{"workspace": "team", "entities": [{"entity_type": "note", "title": "Team plan"}]}')
         ->'entities'->0->>'entity_id' AS team_note \gset
SELECT neotoma.store('{"workspace": "secret", "entities": [{"entity_type": "note", "title": "Sam note"}]}')
         ->'entities'->0->>'entity_id' AS secret_note \gset
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'tessa',
                                                      'target_entity_id', :'team_note', 'workspace', 'team'))
         ->>'id' IS NOT NULL AS related_in_team;
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'sam',
                                                      'target_entity_id', :'secret_note', 'workspace', 'secret'))
         ->>'id' IS NOT NULL AS related_in_secret;
SELECT neotoma.store('{"workspace": "secret", "entities": [{"entity_type": "person", "name": "Dora Deleted", "email": "dora@example.com"}]}')
         ->'entities'->0->>'entity_id' AS dora \gset
SELECT neotoma.delete_entity(jsonb_build_object('entity_id', :'dora', 'workspace', 'secret')) ? 'deleted_at' AS dora_deleted;
SELECT neotoma.store('{"workspace": "secret", "entities": [{"entity_type": "note", "title": "merged away"}]}')
         ->'entities'->0->>'entity_id' AS merged_away \gset
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'merged_away', 'to_entity_id', :'secret_note',
                                                 'workspace', 'secret')) ? 'observations_moved' AS merged;
SELECT o.id AS sams_observation FROM neotoma.observations o WHERE o.entity_id = :'sam' LIMIT 1 \gset
SELECT neotoma.set_context('{"workspace": "secret", "level": "user"}')->'effective'->>'workspace' AS user_context;
-- Graph numbers for what lies in `secret` (GraphMem numbers what it lists).
SELECT jsonb_array_length(neotoma.graphmem_list_entities('{}')->'entities') > 0 AS secret_numbered;

-- With the token: its own workspace only, whatever the user's context.
SELECT set_config('neotoma.token_id', :'team_token', true) IS NOT NULL AS with_team_token;
SELECT r->'total' AS total, r->'workspace_context' AS scope
FROM neotoma.retrieve_entities('{}') r;
SELECT r->'total' AS all_total, r->'workspace_context' AS all_scope
FROM neotoma.retrieve_entities('{"workspace": "*"}') r;
SELECT w AS asked, error_code(try_action('retrieve_entities', jsonb_build_object('workspace', w))) AS code,
       (try_action('retrieve_entities', jsonb_build_object('workspace', w))->'error'->'details') - 'field' AS details
FROM unnest(ARRAY['"secret"', '"default"', '"nosuch"', '["team", "secret"]']::jsonb[]) w;
-- Found by id elsewhere: not found, and not told where.
SELECT a AS action, error_code(r) AS code, r->'error'->>'message' LIKE '%secret%' AS says_where
FROM (VALUES
  ('retrieve_entity_snapshot', jsonb_build_object('entity_id', :'sam')),
  ('list_observations', jsonb_build_object('entity_id', :'sam')),
  ('retrieve_field_provenance', jsonb_build_object('entity_id', :'sam', 'field', 'name')),
  ('list_relationships', jsonb_build_object('entity_id', :'sam')),
  ('retrieve_related_entities', jsonb_build_object('entity_id', :'sam')),
  ('read_resource', jsonb_build_object('uri', 'neotoma://entity/' || :'sam')),
  ('correct', jsonb_build_object('entity_id', :'sam', 'entity_type', 'person', 'field', 'name', 'value', 'X')),
  ('delete_entity', jsonb_build_object('entity_id', :'sam')),
  ('annotate', jsonb_build_object('entity_id', :'sam', 'note', 'seen')),
  ('erase', jsonb_build_object('entity_id', :'sam', 'confirm', true)),
  ('get_relationship_snapshot', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'sam',
                                                   'target_entity_id', :'secret_note')),
  ('delete_relationship', jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'sam',
                                             'target_entity_id', :'secret_note')),
  ('set_context', jsonb_build_object('project_entity_id', :'sam'))) v(a, x),
  LATERAL (SELECT try_action(a, x) AS r) t;
-- Nothing of `secret` through search, relationships, traversal, subgraphs,
-- timeline, another tool set (the change feed, which shows only what
-- committed, is tested through MCP: tests/e2e/test_gateway.py).
SELECT neotoma.retrieve_entities('{"search": "Sam Secret"}')->'total' AS search_total,
       neotoma.retrieve_entities('{"search": "Sam Secret", "search_mode": "hybrid"}')->'total' AS hybrid_total;
-- Search ranks by the statistics of the token's workspaces alone: how
-- many entities have a word elsewhere moves no score here.
SAVEPOINT statistics;
SELECT neotoma.store('{"entities": [{"entity_type": "note", "title": "Budget review"}]}')->'entities'->0->>'entity_id' IS NOT NULL AS budget_stored;
SELECT r->'entities'->0->>'canonical_name' AS first, r->'entities'->0->'relevance_score' AS plan_score
FROM neotoma.retrieve_entities('{"search": "plan budget", "search_mode": "lexical"}') r \gset
SELECT set_config('neotoma.token_id', '', true) IS NOT NULL AS without_token;
SELECT jsonb_array_length(neotoma.store(jsonb_build_object('workspace', 'secret', 'entities', (
  SELECT jsonb_agg(jsonb_build_object('entity_type', 'note', 'title', 'Secret plan ' || i)) FROM generate_series(1, 30) i)))->'entities')
  AS plans_elsewhere;
SELECT set_config('neotoma.token_id', :'team_token', true) IS NOT NULL AS with_team_token;
SELECT :'first' AS first, r->'entities'->0->'relevance_score' = :'plan_score'::jsonb AS same_score, r->'total' AS total
FROM neotoma.retrieve_entities('{"search": "plan budget", "search_mode": "lexical"}') r;
ROLLBACK TO SAVEPOINT statistics;
SELECT jsonb_array_length(neotoma.list_relationships(jsonb_build_object('entity_id', :'tessa'))->'relationships') AS tessas_relationships;
SELECT count(*) AS related, count(*) FILTER (WHERE e::text LIKE '%' || :'team_note' || '%') AS to_team_note
FROM jsonb_array_elements(neotoma.retrieve_related_entities(jsonb_build_object('entity_id', :'tessa', 'max_hops', 2))->'entities') e;
SELECT jsonb_array_length(neotoma.get_subgraph_by_ids(jsonb_build_object('entity_ids', jsonb_build_array(:'tessa', :'sam')))->'entities') AS subgraph_entities;
SELECT count(*) AS events, count(*) FILTER (WHERE e::text LIKE '%' || :'team_payment' || '%') AS team_payments
FROM jsonb_array_elements(neotoma.list_timeline_events('{"workspace": "*"}')->'events') e;
SELECT jsonb_array_length(neotoma.memory_read_graph('{}')->'entities') AS memory_graph_nodes;
SELECT error_code(try_action('workspace_read_graph', '{"workspaceName": "secret"}')) AS workspace_server_secret,
       try_action('workspace_read_graph', '{"workspaceName": "secret"}')->'error'->'details'->>'limit' AS "limit";
-- Its workspaces and contexts: only its own are told of.
SELECT jsonb_path_query_array(neotoma.list_workspaces('{}'), '$.workspaces[*].name') AS workspaces;
SELECT r->'effective' AS effective, r->'user' AS user_context FROM neotoma.get_context('{}') r;
SELECT error_code(try_action('set_context', '{"workspace": "secret"}')) AS set_secret,
       error_code(try_action('set_context', '{"workspace": "team", "level": "user"}')) AS set_users;
-- Nothing is said of what lies elsewhere before it is hidden (deleted,
-- merged, an observation's entity): worded as what does not exist.
SELECT a AS action, coalesce(error_code(r), r->>'status') AS code,
       replace(coalesce(r->'error'->>'message', r->>'message'), x->>'id', '<id>') AS message,
       (r->'error'->'details') - 'field' - 'entity_id' - 'observation_id' - 'file_path' AS details,
       r::text LIKE '%secret%' OR r::text LIKE '%' || :'secret_note' || '%' AS tells
FROM (VALUES
  ('retrieve_entity_snapshot', jsonb_build_object('entity_id', :'dora', 'id', :'dora')),
  ('retrieve_entity_snapshot', jsonb_build_object('entity_id', 'ent_00000000000000000000000000000000',
                                                  'id', 'ent_00000000000000000000000000000000')),
  ('merge_entities', jsonb_build_object('from_entity_id', :'dora', 'to_entity_id', :'tessa', 'id', :'dora')),
  ('delete_entity', jsonb_build_object('entity_id', :'merged_away', 'id', :'merged_away')),
  ('restore_entity', jsonb_build_object('entity_id', :'dora', 'id', :'dora')),
  ('split_entity', jsonb_build_object('entity_id', :'merged_away', 'observation_ids', jsonb_build_array(:'sams_observation'),
                                      'id', :'merged_away')),
  ('contest', jsonb_build_object('observation_id', :'sams_observation', 'reason', 'wrong', 'id', :'sams_observation')),
  ('contest', jsonb_build_object('observation_id', '00000000-0000-0000-0000-000000000000', 'reason', 'wrong',
                                 'id', '00000000-0000-0000-0000-000000000000')),
  ('annotate', jsonb_build_object('observation_id', :'sams_observation', 'entity_id', :'tessa', 'note', 'x',
                                  'id', :'sams_observation')),
  ('retrieve_file_url', jsonb_build_object('file_path', 'sources/' || :'secret_source', 'id', :'secret_source')),
  ('engram_correct_memory', jsonb_build_object('target_id', :'tessa', 'action', 'merge_entities',
                                               'payload', jsonb_build_object('merge_with', 'mem_0000000000000001'),
                                               'id', 'mem_0000000000000001')),
  ('engram_correct_memory', jsonb_build_object('target_id', :'tessa', 'action', 'merge_entities',
                                               'payload', jsonb_build_object('merge_with', 'mem_0000000000009999'),
                                               'id', 'mem_0000000000009999'))) v(a, x),
  LATERAL (SELECT try_action(a, x - 'id') AS r) t;
-- Connectors are the user's, whichever workspace they sync to.
SELECT error_code(r) AS connect_provider, r->'error'->'details'->>'limit' AS "limit"
FROM try_action('connect_provider', '{"provider": "gmail"}') r;

-- Actions across every workspace are refused.
SELECT a AS action, error_code(try_action(a, x::jsonb)) AS code,
       try_action(a, x::jsonb)->'error'->'details'->>'limit' AS "limit"
FROM (VALUES
  ('register_schema', '{"entity_type": "gadget", "schema_definition": {"fields": {"name": {"type": "string"}}}}'),
  ('analyze_schema_candidates', '{}'),
  ('get_product_analytics', '{}')) v(a, x);
-- It writes in its workspace, and only there.
SELECT r->'workspace_context'->'workspaces' AS wrote_in
FROM neotoma.store('{"entities": [{"entity_type": "note", "title": "agent note"}]}') r;
SELECT error_code(try_action('store', '{"workspace": "secret", "entities": [{"entity_type": "note", "title": "no"}]}')) AS store_in_secret,
       error_code(try_action('memory_create_entities', '{"entities": [{"name": "Mem", "entityType": "person", "observations": ["x"]}]}')) AS memory_write;
SELECT neotoma.set_context('{"workspace": "team"}')->'effective'->>'workspace' AS own_context;

-- Nothing of the others was changed; the user's context stays.
SELECT set_config('neotoma.token_id', '', true) IS NOT NULL AS without_token;
SELECT workspace, count(*) FROM neotoma.entities GROUP BY 1 ORDER BY 1;
SELECT count(*) AS annotations FROM neotoma.annotations;
SELECT neotoma.get_context('{}')->'effective'->>'workspace' AS user_context_still;
SELECT (neotoma.verify())->'ok' AS verify_ok;
RESET ROLE;
SELECT t->'workspaces' AS workspaces FROM jsonb_array_elements(neotoma.list_api_tokens()) t
WHERE t->>'user_id' LIKE '63000000-%';
ROLLBACK;

-- A call that comes with a token establishes its user: one naming its
-- user only by argument would escape the token's limits.
BEGIN;
SELECT neotoma.create_api_token('63000000-0000-0000-0000-00000000000a', 'h63-arg', NULL, 'user', NULL, false, NULL,
                                '{team}') ? 'id' AS made;
SELECT id AS arg_token FROM neotoma.api_tokens WHERE token_hash = 'h63-arg' \gset
SET ROLE neotoma_regress_agent;
RESET neotoma.user_id;
SELECT set_config('neotoma.token_id', :'arg_token', true) IS NOT NULL AS with_token;
SELECT error_code(r) AS by_argument, r->'error'->'details'->>'field' AS field
FROM try_action('retrieve_entities', '{"user_id": "63000000-0000-0000-0000-00000000000a", "workspace": "secret"}') r;
ROLLBACK;
