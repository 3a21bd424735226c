-- bulk: several writes in one transaction, all or nothing, later
-- operations referring to earlier ones' entities ("$ref"); the failing
-- operation named; create_relationships in a batch; isolation (as a
-- non-superuser); bad input; verify() clean after all of it.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '37000000-0000-0000-0000-00000000000a';

-- Two entities and the relationship between them, then a correction of
-- one of them, in one call.
SELECT r->'operations' AS operations,
       jsonb_path_query_array(r, '$.results[*].action') AS actions,
       jsonb_path_query_array(r, '$.results[*].ref') AS refs,
       (r->'results'->2->'result'->>'source_entity_id') = (r->'results'->0->>'entity_id') AS from_ada,
       (r->'results'->2->'result'->>'target_entity_id') = (r->'results'->1->>'entity_id') AS to_engine,
       r->'results'->3->'result'->>'field' AS corrected
FROM neotoma.bulk('{"operations": [
  {"action": "store", "ref": "ada", "args": {"entities": [{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"}]}},
  {"action": "store", "ref": "engine", "args": {"entities": [{"entity_type": "note", "title": "Analytical Engine", "content": "$ada designed its programs"}]}},
  {"action": "create_relationship", "args": {"relationship_type": "REFERS_TO", "source_entity_id": "$ada", "target_entity_id": "$engine"}},
  {"action": "correct", "args": {"entity_id": "$ada", "entity_type": "person", "field": "name", "value": "Augusta Ada King"}}]}') r;
-- Where no entity id goes, "$ada" is a value like any other.
SELECT snapshot->>'content' AS content FROM neotoma.entity_snapshots WHERE snapshot->>'title' = 'Analytical Engine';
SELECT snapshot->>'name' AS name FROM neotoma.entity_snapshots WHERE snapshot->>'email' = 'ada@example.com';

-- The 37th of 40 operations fails: nothing of the 36 before it is kept
-- (through _invoke too, which answers the error instead of raising it),
-- and the error names it.
CREATE TEMP TABLE forty AS
SELECT jsonb_build_object('operations', jsonb_agg(
  CASE WHEN i = 37 THEN '{"action": "correct", "args": {"entity_id": "$nobody", "entity_type": "person", "field": "name", "value": "x"}}'::jsonb
       ELSE jsonb_build_object('action', 'store', 'ref', 'p' || i,
              'args', jsonb_build_object('entities', jsonb_build_array(jsonb_build_object(
                'entity_type', 'person', 'name', 'Bulk ' || i, 'email', 'bulk' || i || '@example.com')))) END
  ORDER BY i)) AS args
FROM generate_series(1, 40) i;
SELECT e->>'code' AS code, e->'details'->'operation' AS operation, e->'details'->'operation_index' AS operation_index,
       e->>'message' LIKE 'operation 37 of 40 (correct) failed, so none was kept: %' AS named
FROM forty, LATERAL (SELECT neotoma._invoke('bulk', args::text)->'error' AS e) x;
SELECT count(*) AS kept FROM neotoma.entity_snapshots WHERE snapshot->>'name' LIKE 'Bulk %';
SELECT error_code(try_action('bulk', args)) AS raised FROM forty;
SELECT count(*) AS kept FROM neotoma.entity_snapshots WHERE snapshot->>'name' LIKE 'Bulk %';
-- Without the bad one, all forty.
SELECT jsonb_array_length(neotoma.bulk(jsonb_build_object('operations',
  jsonb_path_query_array(args, '$.operations[*] ? (@.action == "store")')))->'results') AS ran FROM forty;
SELECT count(*) AS kept FROM neotoma.entity_snapshots WHERE snapshot->>'name' LIKE 'Bulk %';

-- A Postgres error inside the operations (here the statement timeout,
-- caught by the caller's exception block) rolls the bulk back and leaves
-- the caller's transaction working.
SET statement_timeout = '20ms';
DO $$
BEGIN
  PERFORM neotoma.bulk(jsonb_build_object('operations', (SELECT jsonb_agg(jsonb_build_object('action', 'store',
    'args', jsonb_build_object('entities', jsonb_build_array(jsonb_build_object('entity_type', 'person',
      'name', 'Timeout ' || i, 'email', 'timeout' || i || '@example.com'))))) FROM generate_series(1, 500) i)));
  RAISE NOTICE 'the bulk finished within 20 ms';
EXCEPTION WHEN query_canceled THEN
  RAISE NOTICE 'canceled';
END $$;
RESET statement_timeout;
SELECT count(*) AS kept FROM neotoma.entity_snapshots WHERE snapshot->>'name' LIKE 'Timeout %';
SELECT jsonb_array_length(neotoma.bulk('{"operations": [{"action": "store", "args": {"entities": [{"entity_type": "note", "title": "after"}]}}]}')->'results') AS works_after;

-- A batch of relationships: all or none.
SELECT r->'count' AS count, jsonb_path_query_array(r, '$.relationships[*].relationship_type') AS types
FROM neotoma.create_relationships(jsonb_build_object('relationships', jsonb_build_array(
  jsonb_build_object('relationship_type', 'REFERS_TO',
    'source_entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'name' = 'Bulk 1'),
    'target_entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'name' = 'Bulk 2')),
  jsonb_build_object('relationship_type', 'DEPENDS_ON',
    'source_entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'name' = 'Bulk 2'),
    'target_entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'name' = 'Bulk 3'))))) r;
SELECT e->>'code' AS code, e->'details'->'relationship' AS relationship
FROM (SELECT neotoma._invoke('create_relationships', jsonb_build_object('relationships', jsonb_build_array(
  jsonb_build_object('relationship_type', 'PART_OF',
    'source_entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'name' = 'Bulk 4'),
    'target_entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'name' = 'Bulk 5')),
  jsonb_build_object('relationship_type', 'PART_OF',
    'source_entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'name' = 'Bulk 5'),
    'target_entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'name' = 'Bulk 4'))))::text)->'error' AS e) x;
SELECT count(*) AS part_of FROM neotoma.relationships WHERE relationship_type = 'PART_OF';

-- Another user cannot reach these entities through a bulk operation.
SELECT entity_id AS ada FROM neotoma.entity_snapshots WHERE snapshot->>'email' = 'ada@example.com' \gset
SET neotoma.user_id = '37000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('bulk', jsonb_build_object('operations', jsonb_build_array(jsonb_build_object(
  'action', 'correct', 'args', jsonb_build_object('entity_id', :'ada',
                                                 'entity_type', 'person', 'field', 'name', 'value', 'Mallory')))))) AS stranger;
SELECT count(*) AS visible FROM neotoma.entity_snapshots;
SELECT error_code(try_action('bulk', '{"operations": [{"action": "store", "args": {"user_id": "37000000-0000-0000-0000-00000000000a",
  "entities": [{"entity_type": "person", "name": "Mallory", "email": "m@example.com"}]}}]}')) AS other_users_id;
SET neotoma.user_id = '37000000-0000-0000-0000-00000000000a';

-- Bad input: no operations, too many, an action not allowed, a duplicate
-- or malformed ref, a ref on what yields no entity, args not an object, an
-- unknown field.
SELECT error_code(try_action('bulk', args)) AS code,
       try_action('bulk', args)->'error'->'details'->>'field' AS field,
       try_action('bulk', args)->'error'->'details'->'operation' AS operation
FROM (VALUES ('{"operations": []}'::jsonb),
             (jsonb_build_object('operations', (SELECT jsonb_agg('{"action": "store", "args": {}}'::jsonb) FROM generate_series(1, 501)))),
             ('{"operations": [{"action": "erase", "args": {}}]}'),
             ('{"operations": [{"action": "bulk", "args": {"operations": []}}]}'),
             ('{"operations": [{"action": "store", "ref": "a", "args": {"entities": [{"entity_type": "note", "title": "x1"}]}},
                               {"action": "store", "ref": "a", "args": {"entities": [{"entity_type": "note", "title": "x2"}]}}]}'),
             ('{"operations": [{"action": "store", "ref": "a b", "args": {"entities": [{"entity_type": "note", "title": "x3"}]}}]}'),
             ('{"operations": [{"action": "store", "ref": "a", "args": {"entities": [{"entity_type": "note", "title": "x4"}]}},
                               {"action": "store", "ref": "b", "args": {"entities": [{"entity_type": "note", "title": "x5"}]}},
                               {"action": "create_relationship", "ref": "r", "args": {"relationship_type": "REFERS_TO", "source_entity_id": "$a", "target_entity_id": "$b"}}]}'),
             ('{"operations": [{"action": "create_relationship", "args": {"relationship_type": "REFERS_TO", "source_entity_id": "$x", "target_entity_id": "$y"}}]}'),
             ('{"operations": [{"action": "store", "args": [1, 2]}]}'),
             ('{"operations": [{"action": "store", "args": {}, "extra": 1}]}'),
             ('{"operations": [{"action": "store", "args": {"entities": "none"}}]}'),
             ('{"operations": [{"action": "store", "args": {"file_content": "aGVsbG8="}}]}')) t(args);
SELECT count(*) AS notes_kept FROM neotoma.entity_snapshots WHERE snapshot->>'title' LIKE 'x_';

-- Operations run in order, and the later write wins: a task stored open
-- then done in one bulk (one instant) is done, for every one of ten (the
-- tie once fell to the observations' ids, a hash).
CREATE TEMP TABLE ordered AS
SELECT r->'results'->1->>'entity_id' AS id
FROM generate_series(1, 10) i,
  LATERAL neotoma.bulk(jsonb_build_object('operations', jsonb_build_array(
    jsonb_build_object('action', 'store', 'args', jsonb_build_object('entities', jsonb_build_array(
      jsonb_build_object('entity_type', 'task', 'title', 'Order ' || i, 'status', 'open')))),
    jsonb_build_object('action', 'store', 'args', jsonb_build_object('entities', jsonb_build_array(
      jsonb_build_object('entity_type', 'task', 'title', 'Order ' || i, 'status', 'done'))))))) r;
SELECT count(*) FILTER (WHERE s.snapshot->>'status' = 'done') AS done, count(*) AS tasks
FROM ordered o JOIN neotoma.entity_snapshots s ON s.entity_id = o.id;

SELECT (neotoma.verify())->'ok' AS clean;
ROLLBACK;
