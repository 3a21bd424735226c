-- Limited tokens and who said what (issue 43): a call that comes with a read-only token
-- (neotoma.token_id, set by the gateway's role) runs only actions that
-- write nothing, through every tool set, bulk included; a token made for
-- some tools calls only those; a token of another user is refused; nothing
-- a refused call asked for is written. token list shows the limits and the
-- last use (touch_api_token, at most once a minute); each observation
-- keeps the token it was written with, which list_observations and
-- retrieve_field_provenance name (written_with). As a non-superuser.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
-- Tokens are made by an operator (neotoma-mcp token create).
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000a', 'h62-full', 'writer')->>'read_only' AS full_read_only;
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000a', 'h62-reader', 'reader agent', 'user', NULL, true)
       - 'id' - 'expires_at' AS reader;
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000a', 'h62-memory', 'memory agent', 'user', NULL, false, 'memory')
       - 'id' - 'expires_at' AS memory_only;
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000b', 'h62-other', 'another user''s') ->> 'scope' AS other;
-- An operator's token cannot be limited.
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000a', 'h62-op', NULL, 'operator', NULL, true);
ROLLBACK;
BEGIN;
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000a', 'h62-full', 'writer') IS NOT NULL AS full;
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000a', 'h62-reader', 'reader agent', 'user', NULL, true) IS NOT NULL AS reader;
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000a', 'h62-memory', 'memory agent', 'user', NULL, false, 'memory') IS NOT NULL AS memory_only;
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000b', 'h62-other', 'another user''s') IS NOT NULL AS other;
SELECT id AS full_token FROM neotoma.api_tokens WHERE token_hash = 'h62-full' \gset
SELECT id AS reader_token FROM neotoma.api_tokens WHERE token_hash = 'h62-reader' \gset
SELECT id AS memory_token FROM neotoma.api_tokens WHERE token_hash = 'h62-memory' \gset
SELECT id AS other_token FROM neotoma.api_tokens WHERE token_hash = 'h62-other' \gset

SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '62000000-0000-0000-0000-00000000000a';
-- The full token writes.
SELECT set_config('neotoma.token_id', :'full_token', true) IS NOT NULL AS with_full_token;
SELECT jsonb_array_length(neotoma.store('{"entities": [{"entity_type": "note", "title": "kept", "content": "by the writer"}]}')->'entities') AS stored;
SELECT id AS note FROM neotoma.entities WHERE entity_type = 'note' \gset
-- Who said what: the observation keeps the token it came with, and the
-- provenance names the agent (the token's name).
SELECT count(*) FILTER (WHERE token_id = :'full_token') AS written_with_the_token, count(*) AS observations
FROM neotoma.observations;
SELECT o->'written_with'->>'name' AS agent, o->'written_with'->>'token_id' = :'full_token' AS same_token
FROM jsonb_array_elements(neotoma.list_observations(jsonb_build_object('entity_id', :'note'))->'observations') o;
SELECT neotoma.retrieve_field_provenance(jsonb_build_object('entity_id', :'note', 'field', 'title'))
         ->'source_observation'->'written_with'->>'name' AS provenance_agent;
-- Another user's token names nothing.
SELECT neotoma_private._written_with(:'other_token') ->> 'name' IS NULL AS other_users_token_unnamed;

-- The read-only token reads, and every write is refused with its limit named.
SELECT set_config('neotoma.token_id', :'reader_token', true) IS NOT NULL AS with_reader_token;
SELECT neotoma.retrieve_entities('{"search": "kept"}')->'total' AS reader_finds;
SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'note'))->'snapshot'->>'title' AS reader_reads;
SELECT a AS action, error_code(try_action(a, x::jsonb)) AS code,
       try_action(a, x::jsonb)->'error'->'details'->>'limit' AS "limit"
FROM (VALUES
  ('store', '{"entities": [{"entity_type": "note", "title": "no"}]}'),
  ('correct', jsonb_build_object('entity_id', :'note', 'field', 'title', 'value', 'changed')::text),
  ('delete_entity', jsonb_build_object('entity_id', :'note')::text),
  ('bulk', '{"operations": [{"action": "store", "args": {"entities": [{"entity_type": "note", "title": "no"}]}}]}'),
  ('memory_create_entities', '{"entities": [{"name": "No", "entityType": "person", "observations": ["x"]}]}'),
  ('graphmem_create_entity', '{"name": "No", "entity_type": "person"}'),
  ('engram_send_memory', '{"content": "no"}'),
  ('set_context', '{"workspace": "elsewhere"}'),
  ('erase', jsonb_build_object('entity_id', :'note')::text)) v(a, x);
-- Reads of the other tool sets answer.
SELECT jsonb_array_length(neotoma.memory_read_graph('{}')->'entities') AS memory_graph_reads;
SELECT error_code(try_action('get_version', '{}')) IS NULL AS version_reads;

-- The memory token calls the memory server's tools, nothing else.
SELECT set_config('neotoma.token_id', :'memory_token', true) IS NOT NULL AS with_memory_token;
SELECT jsonb_array_length(neotoma.memory_create_entities('{"entities": [{"name": "Mem", "entityType": "person", "observations": ["via memory"]}]}')->'entities') AS memory_writes;
SELECT error_code(try_action('retrieve_entities', '{}')) AS neotoma_tool,
       try_action('retrieve_entities', '{}')->'error'->'details'->>'limit' AS "limit",
       error_code(try_action('graphmem_list_entities', '{}')) AS graphmem_tool;

-- Another user's token, or none of the user's, is refused before anything runs.
SELECT set_config('neotoma.token_id', :'other_token', true) IS NOT NULL AS with_other_users_token;
SELECT error_code(try_action('retrieve_entities', '{}')) AS other_users_token;
SELECT set_config('neotoma.token_id', '62000000-0000-0000-0000-0000000000ff', true) IS NOT NULL AS with_unknown_token;
SELECT error_code(try_action('store', '{"entities": [{"entity_type": "note", "title": "no"}]}')) AS unknown_token;

-- A token revoked since the gateway looked it up is refused
-- by the extension at its next call, whatever the gateway's cache holds.
RESET ROLE;
SELECT neotoma.create_api_token('62000000-0000-0000-0000-00000000000a', 'h62-gone', 'revoked agent') ? 'id' AS gone_made;
SELECT id AS gone_token FROM neotoma.api_tokens WHERE token_hash = 'h62-gone' \gset
SELECT neotoma.revoke_api_token(:'gone_token') AS revoked;
SET ROLE neotoma_regress_agent;
SELECT set_config('neotoma.token_id', :'gone_token', true) IS NOT NULL AS with_revoked_token;
SELECT error_code(r) AS revoked_token, r->'error'->>'message' AS message
FROM try_action('retrieve_entities', '{}') r;

-- Without a token (SQL, stdio) nothing is limited.
SELECT set_config('neotoma.token_id', '', true) IS NOT NULL AS without_token;
SELECT jsonb_array_length(neotoma.store('{"entities": [{"entity_type": "note", "title": "also kept"}]}')->'entities') AS stored_without_token;
SELECT o ? 'written_with' AS has_writer
FROM jsonb_array_elements(neotoma.list_observations(jsonb_build_object('entity_id',
       (SELECT id FROM neotoma.entities WHERE canonical_name = 'also kept')))->'observations') o;

-- Nothing the refused calls asked for was written.
SELECT entity_type, count(*) FROM neotoma.entities GROUP BY 1 ORDER BY 1;
SELECT count(*) AS corrections FROM neotoma.observations WHERE fields ? 'title' AND fields->>'title' = 'changed';
SELECT count(*) AS contexts FROM neotoma.contexts;
SELECT (neotoma.verify())->'ok' AS verify_ok;

-- A split's copies keep the token of the observations they copy, whoever splits.
SELECT set_config('neotoma.token_id', :'full_token', true) IS NOT NULL AS with_full_token_again;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ada", "email": "ada@example.com"}]}')->>'source_id' AS ada_source \gset
SELECT set_config('neotoma.token_id', '', true) IS NOT NULL AS without_token_again;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ada", "email": "ada@example.com", "phone": "555"}]}')->'entities'->0->>'entity_id' AS ada \gset
SELECT r->'observations_moved' AS moved
FROM neotoma.split_entity(jsonb_build_object('entity_id', :'ada', 'source_ids', jsonb_build_array(:'ada_source'), 'reason', 'test')) r;
SELECT o.entity_id = :'ada' AS stayed, o.token_id = :'full_token' AS with_the_writers_token
FROM neotoma.observations o WHERE o.fields->>'name' = 'Ada' AND o.kind = 'store' ORDER BY 1, 2;
SELECT (neotoma.verify())->'ok' AS verify_ok_after_split;

-- The gateway notes a refused call (its own transaction was rolled back)
-- for the user and token it set; the owner reads it in the audit trail.
SELECT set_config('neotoma.token_id', :'reader_token', true) IS NOT NULL AS with_reader_token_again;
SELECT neotoma.note_denied_call('{"action": "store", "limit": "read_only"}') ? 'id' AS noted;
SELECT try_action('note_denied_call', '{"action": "store", "limit": "nonsense"}') ->> 'sqlstate' AS unknown_limit_refused;
SELECT set_config('neotoma.token_id', '', true) IS NOT NULL AS without_token_to_read;
SELECT action, target_kind, target_id, reason, details->>'token_id' = :'reader_token' AS by_the_reader
FROM neotoma.audit_trail WHERE action = 'denied';

-- Users cannot read tokens, nor note their use or refusals; the gateway's role does.
SELECT error_code(try_action('list_workspaces', '{}')) IS NULL AS reads_still_work;
RESET ROLE;
SET ROLE neotoma_user;
SELECT has_function_privilege('neotoma.touch_api_token(text)', 'EXECUTE') AS user_may_touch,
       has_function_privilege('neotoma.note_denied_call(jsonb)', 'EXECUTE') AS user_may_note_refusals,
       has_table_privilege('neotoma.denied_calls', 'INSERT') AS user_may_write_refusals,
       has_table_privilege('neotoma.api_tokens', 'SELECT') AS user_may_read_tokens;
RESET ROLE;
SET ROLE neotoma_regress_agent;
SELECT neotoma.touch_api_token('h62-reader');
SELECT neotoma.touch_api_token('h62-reader');
RESET ROLE;
SELECT t->>'name' AS name, t->'read_only' AS read_only, t->'tools' AS tools, t->'last_used_at' <> 'null' AS used
FROM jsonb_array_elements(neotoma.list_api_tokens()) t
WHERE t->>'user_id' LIKE '62000000-%' ORDER BY 1;
ROLLBACK;
