-- search_subgraph and get_subgraph_by_ids: the entities a search finds (or
-- the ids name), with their latest observations, and the relationships
-- among them; what is matched (search_in_*), pages, missing ids, another
-- user's ids, bad input. As a non-superuser.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '35000000-0000-0000-0000-00000000000a';

SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com", "notes": "wrote about the engine"},
  {"entity_type": "person", "name": "Charles Babbage", "email": "cb@example.com", "notes": "designed the engine"},
  {"entity_type": "company", "name": "Engine Works", "website": "engine.example"},
  {"entity_type": "note", "title": "Tea", "content": "Earl Grey", "created_date": "2026-01-02"}]}')->'entities');
SELECT id AS ada FROM neotoma.entities WHERE identity_key = 'email=ada@example.com' \gset
SELECT id AS babbage FROM neotoma.entities WHERE identity_key = 'email=cb@example.com' \gset
SELECT id AS works FROM neotoma.entities WHERE entity_type = 'company' \gset
SELECT id AS tea FROM neotoma.entities WHERE entity_type = 'note' \gset
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'ada', 'target_entity_id', :'babbage')) IS NOT NULL AS linked;
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'ada', 'target_entity_id', :'tea')) IS NOT NULL AS linked;

-- "engine": three entities (names and notes), the relationship between two
-- of them; each with its observations.
SELECT e->>'entity_type' AS type, e->'snapshot'->>'name' AS name, e->'matched_fields' AS fields,
       jsonb_array_length(e->'observations') AS observations
FROM jsonb_array_elements(neotoma.search_subgraph('{"query": "engine"}')->'entities') e;
SELECT r->'total' AS total, r->'page' AS page, r->'per_page' AS per_page, r->>'search_method' AS method,
       jsonb_array_length(r->'relationships') AS relationships,
       (r->'relationships'->0->>'source_entity_id') = :'ada' AS from_ada
FROM neotoma.search_subgraph('{"query": "engine"}') r;
-- Names only: the company; values (the name is one of them): all three.
SELECT e->'snapshot'->>'name' AS name
FROM jsonb_array_elements(neotoma.search_subgraph('{"query": "engine", "search_in_observations": false}')->'entities') e;
SELECT e->'snapshot'->>'name' AS name
FROM jsonb_array_elements(neotoma.search_subgraph('{"query": "engine", "search_in_name": false}')->'entities') e;
-- A type's name finds its entities (weakly), unless search_in_type is false.
SELECT e->'snapshot'->>'name' AS name, e->'relevance_score' AS score, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.search_subgraph('{"query": "Person"}')->'entities') e;
SELECT r->'total' AS total FROM neotoma.search_subgraph('{"query": "Person", "search_in_type": false}') r;
-- Pages of one per page read what one page of three does.
SELECT (SELECT array_agg(e->>'entity_id') FROM jsonb_array_elements(neotoma.search_subgraph('{"query": "engine"}')->'entities') e)
     = (SELECT array_agg(e->>'entity_id') FROM generate_series(1, 3) p,
               jsonb_array_elements(neotoma.search_subgraph(jsonb_build_object('query', 'engine', 'per_page', 1, 'page', p))->'entities') e)
       AS same_order;

-- By ids: in the order asked, the relationships among them, the ids missing.
SELECT jsonb_path_query_array(r, '$.entities[*].entity_type') AS types,
       jsonb_array_length(r->'relationships') AS relationships, r->'missing' AS missing
FROM neotoma.get_subgraph_by_ids(jsonb_build_object('entity_ids',
       jsonb_build_array(:'babbage', :'ada', 'ent_00000000000000000000000000000000', :'ada', :'tea'))) r;

-- Another user: finds nothing, and the ids are missing.
SET neotoma.user_id = '35000000-0000-0000-0000-00000000000b';
SELECT r->'total' AS total FROM neotoma.search_subgraph('{"query": "engine"}') r;
SELECT jsonb_array_length(r->'entities') AS entities, jsonb_array_length(r->'missing') AS missing
FROM neotoma.get_subgraph_by_ids(jsonb_build_object('entity_ids', jsonb_build_array(:'ada', :'babbage'))) r;

-- Bad input.
SELECT error_code(try_action(action, args)) AS code, try_action(action, args)->'error'->'details'->>'field' AS field
FROM (VALUES ('search_subgraph', '{}'::jsonb), ('search_subgraph', '{"query": ""}'), ('search_subgraph', '{"query": "x", "page": 0}'),
             ('search_subgraph', '{"query": "x", "per_page": 101}'), ('search_subgraph', '{"query": "x", "search_in_name": "yes"}'),
             ('get_subgraph_by_ids', '{"entity_ids": []}'), ('get_subgraph_by_ids', '{"entity_ids": ["nope"]}'),
             ('get_subgraph_by_ids', jsonb_build_object('entity_ids', (SELECT jsonb_agg('ent_00000000000000000000000000000000'::text) FROM generate_series(1, 101))))) t(action, args);
ROLLBACK;
