-- Valid time of relationships (issue 44, docs/design/valid-time.md): an
-- assertion may hold over [valid_from, valid_to); a relationship holds
-- over the union of its assertions' intervals, its metadata at an instant
-- reduced from the assertions valid then. Reads answer what holds at their
-- valid_at (default now); verify() checks the stored union. As a
-- non-superuser role, through row level security.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '68000000-0000-0000-0000-00000000000a';

SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Alice Martin", "email": "alice@example.com"},
                                    {"entity_type": "company", "name": "Acme"},
                                    {"entity_type": "company", "name": "Initech"},
                                    {"entity_type": "company", "name": "Hooli"}]}')->'entities' AS e \gset
SELECT (:'e'::jsonb)->0->>'entity_id' AS alice, (:'e'::jsonb)->1->>'entity_id' AS acme,
       (:'e'::jsonb)->2->>'entity_id' AS initech, (:'e'::jsonb)->3->>'entity_id' AS hooli \gset

-- Alice was part of Acme from 2019 (an engineer, then a manager from
-- mid-2020: two assertions that meet) to March 2022, and of Initech since.
-- The answer of a creation shows when the relationship holds.
SELECT r->'valid_during' AS acme_during, r->'metadata' AS metadata_now
FROM neotoma.create_relationship(jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'alice',
       'target_entity_id', :'acme', 'metadata', '{"role": "engineer"}'::jsonb,
       'valid_from', '2019-01-01', 'valid_to', '2020-06-01')) r;
SELECT r->'valid_during' AS acme_during
FROM neotoma.create_relationship(jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'alice',
       'target_entity_id', :'acme', 'metadata', '{"role": "manager"}'::jsonb,
       -- The same instant in another zone: naive and zoned times are UTC instants.
       'valid_from', '2020-06-01T02:00:00+02:00', 'valid_to', '2022-03-01')) r;
SELECT r->'valid_during' AS initech_during, r->'metadata' AS metadata_now
FROM neotoma.create_relationship(jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'alice',
       'target_entity_id', :'initech', 'metadata', '{"role": "director"}'::jsonb, 'valid_from', '2022-03-01')) r;

-- Now: Initech only. In 2019: Acme, as an engineer; in 2021: a manager; on
-- 2022-03-01 Initech (a start is included) and not Acme (an end is not).
SELECT coalesce(t, 'now') AS valid_at, r->>'target_entity_id' = :'acme' AS acme, r->'metadata'->>'role' AS role
FROM unnest(ARRAY[NULL, '2018-06-01', '2019-05-01', '2021-05-01', '2022-02-28T23:59:59Z', '2022-03-01']) WITH ORDINALITY u(t, n),
     jsonb_array_elements(neotoma.list_relationships(jsonb_strip_nulls(jsonb_build_object('entity_id', :'alice', 'valid_at', t)))->'relationships') r
ORDER BY n;
SELECT count(*) AS relationships_in_2018
FROM jsonb_array_elements(neotoma.list_relationships(jsonb_build_object('entity_id', :'alice', 'valid_at', '2018-06-01'))->'relationships');
-- current_only false lists them all, each saying when it holds.
SELECT r->>'target_entity_id' = :'acme' AS acme, r->'valid_during' AS valid_during
FROM jsonb_array_elements(neotoma.list_relationships(jsonb_build_object('entity_id', :'alice', 'current_only', false))->'relationships') r
ORDER BY 1;
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', :'alice'))->'total' AS total_now,
       neotoma.list_relationships(jsonb_build_object('entity_id', :'alice', 'current_only', false))->'total' AS total_all;

-- One relationship at an instant: the metadata valid then, with its
-- provenance; the observations with their intervals.
SELECT t AS valid_at, s->'snapshot'->'snapshot' AS metadata,
       (SELECT o->>'valid_from' FROM jsonb_array_elements(s->'observations') o
        WHERE o->>'id' = s->'snapshot'->'provenance'->>'role') AS from_assertion_valid_from,
       jsonb_array_length(s->'snapshot'->'valid_during') AS stretches
FROM unnest(ARRAY['2019-05-01', '2021-05-01']) t,
     neotoma.get_relationship_snapshot(jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'alice',
       'target_entity_id', :'acme', 'valid_at', t)) s;
SELECT o->'metadata' AS metadata, o->>'valid_from' AS valid_from, o->>'valid_to' AS valid_to
FROM jsonb_array_elements(neotoma.get_relationship_snapshot(jsonb_build_object('relationship_type', 'PART_OF',
       'source_entity_id', :'alice', 'target_entity_id', :'acme'))->'observations') o
ORDER BY o->>'valid_from';

-- Traversals, neighborhoods and subgraphs follow what holds at valid_at.
SELECT coalesce(t, 'now') AS valid_at,
       (SELECT array_agg(x->>'canonical_name' ORDER BY x->>'canonical_name')
        FROM jsonb_array_elements(neotoma.retrieve_related_entities(jsonb_strip_nulls(jsonb_build_object(
               'entity_id', :'alice', 'include_entities', false, 'valid_at', t)))->'entities') x) AS related,
       (SELECT array_agg(x->'metadata'->>'role' ORDER BY x->>'id')
        FROM jsonb_array_elements(neotoma.retrieve_graph_neighborhood(jsonb_strip_nulls(jsonb_build_object(
               'node_id', :'alice', 'include_sources', false, 'include_events', false, 'valid_at', t)))->'relationships') x) AS neighborhood_roles,
       jsonb_array_length(neotoma.get_subgraph_by_ids(jsonb_strip_nulls(jsonb_build_object(
               'entity_ids', jsonb_build_array(:'alice', :'acme', :'initech'), 'valid_at', t)))->'relationships') AS subgraph_relationships
FROM unnest(ARRAY[NULL, '2015-01-01', '2021-05-01']) WITH ORDINALITY u(t, n) ORDER BY n;
-- The view of current relationships: those holding now.
SELECT target_name, valid_during IS NOT NULL AS has_valid_during FROM neotoma.relationship_overview
WHERE source_entity_id = :'alice' ORDER BY target_name;

-- Asserting the same again with the same interval adds nothing; the same
-- metadata over another interval is another assertion, and the union grows.
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'alice',
         'target_entity_id', :'initech', 'metadata', '{"role": "director"}'::jsonb, 'valid_from', '2022-03-01'))->'valid_during' AS again;
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'alice',
         'target_entity_id', :'initech', 'metadata', '{"role": "intern"}'::jsonb,
         'valid_from', '2012-01-01', 'valid_to', '2013-01-01'))->'valid_during' AS with_an_internship;
SELECT observation_count FROM neotoma.relationships WHERE source_entity_id = :'alice' AND target_entity_id = :'initech';
-- An assertion that holds always makes the relationship hold always.
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'alice',
         'target_entity_id', :'hooli', 'valid_from', '2010-01-01', 'valid_to', '2011-01-01'))->'valid_during' AS hooli_during;
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'alice',
         'target_entity_id', :'hooli', 'metadata', '{"note": "mentioned"}'::jsonb)) ? 'valid_during' AS hooli_bounded_after;

-- A relationship that holds always, with metadata that changed over valid
-- time: Alice refers to Hooli as a client, and as a partner from 2023.
-- It holds always (no valid_during), and its metadata then is the one
-- valid then, not the fold of every assertion.
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'hooli',
         'target_entity_id', :'alice', 'metadata', '{"as": "client"}'::jsonb)) IS NOT NULL AS always;
SELECT r ? 'valid_during' AS bounded, r->'metadata' AS metadata_now
FROM neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'hooli',
         'target_entity_id', :'alice', 'metadata', '{"as": "partner"}'::jsonb, 'valid_from', '2023-01-01')) r;
SELECT t AS valid_at, r->'metadata' AS metadata
FROM unnest(ARRAY['2020-06-01', '2024-06-01']) t,
     jsonb_array_elements(neotoma.list_relationships(jsonb_build_object('entity_id', :'hooli', 'direction', 'outbound',
       'relationship_type', 'REFERS_TO', 'valid_at', t))->'relationships') r;
SELECT (neotoma.get_relationship_snapshot(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'hooli',
         'target_entity_id', :'alice', 'valid_at', '2020-06-01'))->'snapshot'->'snapshot') AS snapshot_2020,
       (SELECT r->'metadata' FROM jsonb_array_elements(neotoma.retrieve_graph_neighborhood(jsonb_build_object(
          'node_id', :'hooli', 'include_sources', false, 'include_events', false, 'valid_at', '2020-06-01'))->'relationships') r
        WHERE r->>'source_entity_id' = :'hooli' AND r->>'relationship_type' = 'REFERS_TO') AS neighborhood_2020,
       (SELECT r->'snapshot' FROM jsonb_array_elements(neotoma.get_subgraph_by_ids(jsonb_build_object(
          'entity_ids', jsonb_build_array(:'hooli', :'alice'), 'valid_at', '2020-06-01'))->'relationships') r
        WHERE r->>'source_entity_id' = :'hooli') AS subgraph_2020;

-- Batches take intervals too: create_relationships and a bulk operation.
SELECT r->'valid_during' AS batch_during
FROM jsonb_array_elements(neotoma.create_relationships(jsonb_build_object('relationships', jsonb_build_array(
       jsonb_build_object('relationship_type', 'DEPENDS_ON', 'source_entity_id', :'acme', 'target_entity_id', :'hooli',
                          'valid_to', '2001-01-01'))))->'relationships') r;
SELECT o->'result'->'valid_during' AS bulk_during
FROM jsonb_array_elements(neotoma.bulk(jsonb_build_object('operations', jsonb_build_array(
       jsonb_build_object('action', 'create_relationship', 'args', jsonb_build_object('relationship_type', 'DEPENDS_ON',
         'source_entity_id', :'initech', 'target_entity_id', :'hooli', 'valid_from', '2030-01-01')))))->'results') o;

-- Bad intervals and instants are refused, naming the argument; nothing is written.
SELECT try_action('create_relationship', jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'alice',
         'target_entity_id', :'hooli', 'valid_from', '2022-01-01', 'valid_to', '2022-01-01'))->'error' AS empty_interval;
SELECT try_action('create_relationship', jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'alice',
         'target_entity_id', :'hooli', 'valid_from', 'last spring'))->'error'->'details' AS bad_start;
SELECT try_action('list_relationships', jsonb_build_object('entity_id', :'alice', 'valid_at', '2020-13-01'))->'error'->'details' AS bad_valid_at;
SELECT try_action('retrieve_related_entities', jsonb_build_object('entity_id', :'alice', 'valid_at', 7))->'error'->>'code' AS valid_at_not_text;
SELECT count(*) AS part_of_hooli FROM neotoma.relationships WHERE relationship_type = 'PART_OF' AND target_entity_id = :'hooli';

-- A merge moves the intervals with the assertions: Initech merged into
-- Initech Corp, Alice's relationship to it holds over the same stretches.
SELECT neotoma.store('{"entities": [{"entity_type": "company", "name": "Initech Corp"}]}')->'entities'->0->>'entity_id' AS corp \gset
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'initech', 'to_entity_id', :'corp'))->>'to_entity_id' = :'corp' AS merged;
SELECT r->'valid_during' AS rekeyed_during, r->'metadata'->>'role' AS role_now
FROM jsonb_array_elements(neotoma.list_relationships(jsonb_build_object('entity_id', :'corp', 'direction', 'inbound'))->'relationships') r;

-- Export and import: the file leaves valid_during out, the import
-- recomputes it from the assertions (and a row of an older export, which
-- has none, holds always until then); another user's import holds the
-- same stretches.
CREATE TEMP TABLE exported AS SELECT row_number() OVER () AS n, l FROM neotoma.export_lines() l;
SELECT count(*) FILTER (WHERE l->>'table' = 'relationships') AS relationship_lines,
       count(*) FILTER (WHERE l->>'table' = 'relationships' AND l->'row' ? 'valid_during') AS with_valid_during
FROM exported;
CREATE TEMP TABLE exported_during AS
  SELECT relationship_type, source_entity_id, target_entity_id, neotoma._valid_during(valid_during) AS during
  FROM neotoma.relationships WHERE merged_into IS NULL;
SET neotoma.user_id = '68000000-0000-0000-0000-00000000000d';
SELECT neotoma.import_lines(array_agg(l ORDER BY n)) ? 'relationship_observations' AS imported FROM exported;
SELECT count(*) AS same_stretches, count(*) FILTER (WHERE d.during IS NOT NULL) AS bounded
FROM neotoma.relationships r
JOIN exported_during d USING (relationship_type, source_entity_id, target_entity_id)
WHERE r.merged_into IS NULL AND neotoma._valid_during(r.valid_during) IS NOT DISTINCT FROM d.during;
SELECT (SELECT count(*) FROM neotoma.relationships WHERE merged_into IS NULL) AS imported_relationships;
SELECT neotoma.verify()->'mismatches' AS mismatches_after_import;
SET neotoma.user_id = '68000000-0000-0000-0000-00000000000a';

-- verify() recomputes the union; a stored union that is not the fold is found.
SELECT neotoma.verify()->'mismatches' AS mismatches;
RESET ROLE;
UPDATE neotoma.relationships SET valid_during = '{(,)}'
WHERE user_id = '68000000-0000-0000-0000-00000000000a'
  AND relationship_type = 'PART_OF' AND source_entity_id = :'alice' AND target_entity_id = :'acme';
SELECT m->>'field' AS field, m->'expected' AS expected, m->'stored' AS stored
FROM jsonb_array_elements(neotoma.verify()->'mismatches') m;

-- The graph servers' reads take valid_at too (Neotoma's addition: the
-- peers' documents have no time): the relations holding then, and the
-- nodes' fields as true then; without it, what holds now.
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '68000000-0000-0000-0000-00000000000c';
SELECT neotoma.memory_create_entities('{"entities": [{"name": "Ann", "entityType": "person", "observations": ["likes tea"]},
                                                     {"name": "Acme", "entityType": "company", "observations": []}]}') IS NOT NULL AS created;
SELECT e.id AS ann FROM neotoma.entities e JOIN neotoma.entity_snapshots s ON s.entity_id = e.id WHERE s.snapshot->>'name' = 'Ann' \gset
SELECT e.id AS acme_co FROM neotoma.entities e JOIN neotoma.entity_snapshots s ON s.entity_id = e.id WHERE s.snapshot->>'name' = 'Acme' \gset
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'PART_OF', 'source_entity_id', :'ann',
         'target_entity_id', :'acme_co', 'valid_from', '2019-01-01', 'valid_to', '2022-03-01')) IS NOT NULL AS related;
SELECT neotoma.correct(jsonb_build_object('entity_id', :'ann', 'entity_type', 'person', 'field', 'observations',
         'value', '["worked at Acme"]'::jsonb, 'valid_from', '2019-01-01', 'valid_to', '2022-03-01')) IS NOT NULL AS corrected;
SELECT coalesce(t, 'now') AS valid_at,
       jsonb_path_query_array(g, '$.entities[*] ? (@.name == "Ann").observations') AS ann_observations,
       jsonb_path_query_array(g, '$.relations[*].relationType') AS relations
FROM unnest(ARRAY[NULL, '2020-06-01']) WITH ORDINALITY u(t, n),
     neotoma.memory_read_graph(jsonb_strip_nulls(jsonb_build_object('valid_at', t))) g
ORDER BY n;
SELECT jsonb_path_query_array(neotoma.memory_open_nodes('{"names": ["Ann"], "valid_at": "2020-06-01"}'), '$.entities[*].observations') AS opened_then,
       jsonb_array_length(neotoma.graphmem_find_relations('{}')->'relations') AS graphmem_relations_now,
       jsonb_path_query_array(neotoma.graphmem_find_relations('{"valid_at": "2020-06-01"}'), '$.relations[*].relation_type') AS graphmem_relations_then;
SELECT try_action('memory_read_graph', '{"valid_at": "yesterday"}')->'error'->'details' AS bad_dialect_valid_at;
-- A write finds a relation whatever its valid time: deleting the one that
-- held until 2022 deletes it.
SELECT neotoma.memory_delete_relations('{"relations": [{"from": "Ann", "to": "Acme", "relationType": "PART_OF"}]}') AS deleted;
SELECT count(*) AS ann_relationships_left
FROM jsonb_array_elements(neotoma.list_relationships(jsonb_build_object('entity_id', :'ann', 'current_only', false))->'relationships');

-- Another user sees none of it.
SET neotoma.user_id = '68000000-0000-0000-0000-00000000000b';
SELECT count(*) AS others_relationship_observations FROM neotoma.relationship_observations WHERE valid_from IS NOT NULL OR valid_to IS NOT NULL;
SELECT try_action('list_relationships', jsonb_build_object('entity_id', :'alice', 'current_only', false))->'error'->>'code' AS others_list;
ROLLBACK;
