-- reclassify: an entity moved to another type with its history kept. The
-- entity of the new type is the one its snapshot identifies under that
-- type's rules (made, or found: then the two are one); the old id redirects
-- there; observations, relationships and corrections all count there; later
-- stores under either type reach it; the audit trail says reclassify;
-- isolation (as a non-superuser); bad input; verify() clean.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '42000000-0000-0000-0000-00000000000a';

-- An agent stored a company as a person, with a note about it.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Acme Tools", "email": "info@acme.example", "phone": "+1 555 0100"},
                                    {"entity_type": "note", "title": "Acme called", "content": "about the order"}]}') IS NOT NULL AS stored;
SELECT id AS acme FROM neotoma.entities WHERE entity_type = 'person' \gset
SELECT id AS note FROM neotoma.entities WHERE entity_type = 'note' \gset
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'note', 'target_entity_id', :'acme')) IS NOT NULL AS linked;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Acme Tools", "email": "info@acme.example", "phone": "+1 555 0111"}]}') IS NOT NULL AS another_source;
SELECT neotoma.correct(jsonb_build_object('entity_id', :'acme', 'entity_type', 'person', 'field', 'phone', 'value', '+1 555 0199'))->>'message' AS corrected;

SELECT r->>'entity_type' AS entity_type, r->>'previous_entity_id' = :'acme' AS previous, r->>'previous_entity_type' AS was,
       r->'joined_existing' AS joined, r->'observations_moved' AS observations, r->'relationships_moved' AS relationships, r->>'reason' AS reason
FROM neotoma.reclassify(jsonb_build_object('entity_id', :'acme', 'new_entity_type', 'company', 'reason', '  It is a business. ')) r;
SELECT id AS company FROM neotoma.entities WHERE entity_type = 'company' \gset
-- The company holds the history: the corrected phone, the name, both observations.
SELECT r->>'entity_id' = :'company' AS redirected, r->>'redirected_from' = :'acme' AS from_person, r->>'entity_type' AS entity_type,
       r->'snapshot'->>'name' AS name, r->'snapshot'->>'phone' AS phone, r->'observation_count' AS observations
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'acme')) r;
SELECT r->'total' AS relationships, r->'relationships'->0->>'target_entity_id' = :'company' AS to_company
FROM neotoma.list_relationships(jsonb_build_object('entity_id', :'note')) r;
SELECT jsonb_path_query_array(neotoma.retrieve_entities('{}'), '$.entities[*].entity_type') AS types;
-- The observations themselves are as they were (they said person).
SELECT count(*) FILTER (WHERE entity_type = 'person') AS said_person, count(*) AS observations FROM neotoma.observations WHERE entity_id = :'acme';
SELECT action, target_id = :'acme' AS target, target_type, details->>'to_entity_type' AS to_type, reason
FROM neotoma.audit_trail WHERE action IN ('reclassify', 'merge_entities');
-- Search and contradictions answer it as what it is now.
SELECT t AS entity_type, jsonb_array_length(neotoma.retrieve_entities(jsonb_build_object('search', 'Acme Tools', 'entity_type', t))->'entities') AS found
FROM unnest(ARRAY['person', 'company']) t;
SELECT t AS entity_type, jsonb_path_query_array(neotoma.list_contradictions(jsonb_build_object('entity_type', t)), '$.contradictions[*].field') AS fields
FROM unnest(ARRAY['person', 'company']) t;
-- Later stores reach it, under either type.
SELECT neotoma.store('{"entities": [{"entity_type": "company", "name": "Acme Tools", "email": "info@acme.example", "industry": "tools"}]}')->'entities'->0->>'entity_id' = :'company' AS as_company;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Acme Tools", "email": "info@acme.example", "role": "vendor"}]}')->'entities'->0->>'entity_id' = :'company' AS as_person;
SELECT r->'snapshot'->>'industry' AS industry, r->'snapshot'->>'role' AS role, r->'observation_count' AS observations
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'company')) r;

-- Joining an existing entity of the new type with the same identity.
SELECT neotoma.store('{"entities": [{"entity_type": "company", "name": "Globex"}, {"entity_type": "person", "name": "Globex"}]}') IS NOT NULL AS stored;
SELECT id AS globex_person FROM neotoma.entities WHERE entity_type = 'person' AND canonical_name = 'Globex' \gset
SELECT r->'joined_existing' AS joined, r->>'entity_id' = (SELECT id FROM neotoma.entities WHERE entity_type = 'company' AND canonical_name = 'Globex') AS the_company
FROM neotoma.reclassify(jsonb_build_object('entity_id', :'globex_person', 'new_entity_type', 'company', 'reason', 'duplicate under the wrong type')) r;
SELECT (neotoma.verify())->'ok' AS clean;

-- Entities the new type cannot identify (no identity rule of it holds)
-- stay apart: each becomes its own.
SELECT neotoma.store('{"entities": [{"entity_type": "note", "title": "one", "content": "a"}, {"entity_type": "note", "title": "two", "content": "b"}]}') IS NOT NULL AS notes;
SELECT count(DISTINCT r->>'entity_id') AS sessions, bool_or((r->'joined_existing')::boolean) AS any_joined
FROM neotoma.entities e,
     LATERAL neotoma.reclassify(jsonb_build_object('entity_id', e.id, 'new_entity_type', 'agent_session', 'reason', 'were sessions')) r
WHERE e.entity_type = 'note' AND e.canonical_name IN ('one', 'two');
SELECT (neotoma.verify())->'ok' AS clean;

-- Another user can neither reclassify nor see it.
SET neotoma.user_id = '42000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('reclassify', jsonb_build_object('entity_id', :'company', 'new_entity_type', 'person', 'reason', 'x'))) AS other_user,
       (SELECT count(*) FROM neotoma.audit_trail WHERE action = 'reclassify') AS audited;
SET neotoma.user_id = '42000000-0000-0000-0000-00000000000a';

-- Bad input.
SELECT neotoma.delete_entity(jsonb_build_object('entity_id', :'note', 'reason', 'old')) IS NOT NULL AS deleted;
SELECT error_code(try_action('reclassify', args)) AS code, try_action('reclassify', args)->'error'->'details'->>'field' AS field,
       left(try_action('reclassify', args)->'error'->>'message', 80) AS message
FROM (VALUES (jsonb_build_object('entity_id', :'company', 'new_entity_type', 'company', 'reason', 'x')),
             (jsonb_build_object('entity_id', :'company', 'new_entity_type', 'spaceship', 'reason', 'x')),
             (jsonb_build_object('entity_id', :'company', 'new_entity_type', 'Not A Type!', 'reason', 'x')),
             (jsonb_build_object('entity_id', :'company', 'new_entity_type', 'person', 'reason', ' ')),
             (jsonb_build_object('entity_id', :'company', 'new_entity_type', 'person', 'reason', repeat('x', 1001))),
             (jsonb_build_object('entity_id', :'note', 'new_entity_type', 'task', 'reason', 'x')),
             (jsonb_build_object('entity_id', 'ent_00000000000000000000000000000000', 'new_entity_type', 'person', 'reason', 'x')),
             ('{"new_entity_type": "person", "reason": "x"}'::jsonb),
             (jsonb_build_object('entity_id', :'company', 'new_entity_type', 'person', 'reason', 'x', 'extra', 1))) t(args);
-- Back again: the person it would become was reclassified into it.
SELECT error_code(try_action('reclassify', jsonb_build_object('entity_id', :'company', 'new_entity_type', 'person', 'reason', 'changed my mind'))) AS back_again;
SELECT (neotoma.verify())->'ok' AS clean;
ROLLBACK;
