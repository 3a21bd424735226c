-- A partition's entry for its router (0.23.0, docs/scale-out.md):
-- neotoma.routed runs an action for the user the router names, as an
-- operator or not, with the settings it forwards. Only a member of
-- neotoma_router may call it: the gateway's kind of role (neotoma_service)
-- is refused, even when granted EXECUTE; an action that answers an error
-- leaves nothing written; the error comes back as the envelope, not raised.
-- As ordinary roles; verify() clean.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_regress_router') THEN
    CREATE ROLE neotoma_regress_router NOSUPERUSER NOBYPASSRLS IN ROLE neotoma_router;
  END IF;
END $$;

-- The router's role: the action runs for the user named, with row level
-- security for that user.
SET ROLE neotoma_regress_router;
SELECT r ? 'ok' AS stored, jsonb_array_length(r->'ok'->'entities') AS entities
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', false, '{}',
                         'store', '{"entities": [{"entity_type": "note", "title": "routed note"}]}') AS jsonb) r;
SELECT count(*) AS seen_after FROM neotoma.entities;  -- no user set here: none visible
SELECT r->'ok'->'total' AS a_total
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', false, '{}', 'retrieve_entities', '{}') AS jsonb) r;
SELECT r->'ok'->'total' AS b_total
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000b', false, '{}', 'retrieve_entities', '{}') AS jsonb) r;
-- The settings last the call only.
SELECT current_setting('neotoma.user_id', true) AS user_after, current_setting('neotoma.operator', true) AS operator_after;

-- An error is the answer; what the action wrote before it is undone: a
-- bulk whose second operation fails stores nothing.
SELECT r->'error'->>'code' AS code
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', false, '{}', 'bulk',
  '{"operations": [{"action": "store", "args": {"entities": [{"entity_type": "note", "title": "undone"}]}},
                   {"action": "correct", "args": {"entity_id": "ent_00000000000000000000000000000000", "entity_type": "note",
                                                  "field": "title", "value": "x"}}]}') AS jsonb) r;
SELECT r->'ok'->'total' AS a_total_after_error
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', false, '{}', 'retrieve_entities', '{}') AS jsonb) r;
-- Unparseable input, an unknown action: envelopes too.
SELECT r->'error'->>'code' AS code
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', false, '{}', 'store', '{"entities": [') AS jsonb) r;
SELECT r->'error'->>'code' AS code
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', false, '{}', 'no_such_action', '{}') AS jsonb) r;

-- As an operator or not, as the router says: a global schema needs one.
SELECT r->'error'->>'code' AS not_operator
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', false, '{}', 'register_schema',
  '{"entity_type": "regress_routed", "schema_definition": {"fields": {"n": {"type": "string"}}},
    "reducer_config": {"merge_policies": {}}}') AS jsonb) r;
SELECT r->'ok'->>'scope' AS operator_scope
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', true, '{}', 'register_schema',
  '{"entity_type": "regress_routed", "schema_definition": {"fields": {"n": {"type": "string"}}},
    "reducer_config": {"merge_policies": {}}}') AS jsonb) r;

-- A forwarded setting applies (which token the call came with); others
-- are ignored.
SELECT r ? 'ok' AS with_settings
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000a', false,
  '{"neotoma.token_id": "59000000-0000-0000-0000-0000000000ff", "neotoma.max_file_bytes": "1"}',
  'get_context', '{}') AS jsonb) r;
RESET ROLE;

-- Not a router's role: refused, before and after it is granted EXECUTE.
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '59000000-0000-0000-0000-00000000000a';
SELECT neotoma.routed('59000000-0000-0000-0000-00000000000b', false, '{}', 'retrieve_entities', '{}');
ROLLBACK;
BEGIN;
\set SHOW_CONTEXT never
GRANT EXECUTE ON FUNCTION neotoma.routed(uuid, boolean, jsonb, text, text) TO neotoma_regress_agent;
SET ROLE neotoma_regress_agent;
SELECT r->'error'->>'code' AS code, r->'error'->>'message' AS message
FROM CAST(neotoma.routed('59000000-0000-0000-0000-00000000000b', false, '{}', 'retrieve_entities', '{}') AS jsonb) r;
RESET ROLE;
ROLLBACK;

SELECT (neotoma.verify())->>'ok' AS verified;
