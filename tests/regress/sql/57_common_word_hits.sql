-- A word every term of which is common (more entities than a rare term's,
-- RARE_TERM_ENTITIES: 2,000) answers the entities having it, each read from
-- its snapshot, the entity rows read for the page alone (0.21.0's library):
-- an alias still answers for the entity it was merged into, a deleted
-- entity is not counted, an entity of another workspace answers there
-- only, and semantic candidates are of the selected workspace. As an
-- ordinary role.
\ir include/setup.sql
BEGIN;
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '57000000-0000-0000-0000-00000000000a';
-- 2,100 notes with "harbour", and people: one named like it, one having the
-- word to be merged into one without it, one having it to be deleted.
SELECT sum(jsonb_array_length(neotoma.store(jsonb_build_object('entities',
  (SELECT jsonb_agg(jsonb_build_object('entity_type', 'note', 'title', 'Note ' || i,
                                       'content', 'ships in the harbour ' || i))
   FROM generate_series(b * 700 + 1, b * 700 + 700) i)))->'entities')) AS stored
FROM generate_series(0, 2) b;
CREATE TEMP TABLE p AS
SELECT (ARRAY['harbour master', 'ann quay', 'ann quay senior', 'old pier'])[n] AS name, e->>'entity_id' AS id
FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Harbour Master", "email": "master@harbour.example"},
  {"entity_type": "person", "name": "Ann Quay", "email": "ann@quay.example", "notes": "met at the harbour"},
  {"entity_type": "person", "name": "Ann Quay Senior", "email": "senior@quay.example"},
  {"entity_type": "person", "name": "Old Pier", "email": "pier@quay.example", "notes": "harbour works"}]}')->'entities')
     WITH ORDINALITY AS x(e, n);
SELECT count(DISTINCT id) AS people FROM p;
SELECT neotoma.merge_entities(jsonb_build_object(
  'from_entity_id', (SELECT id FROM p WHERE name = 'ann quay'),
  'to_entity_id', (SELECT id FROM p WHERE name = 'ann quay senior')))? 'merged_at' AS merged;
SELECT neotoma.delete_entity(jsonb_build_object('entity_id', (SELECT id FROM p WHERE name = 'old pier')))
       ? 'deleted_at' AS deleted;
SELECT jsonb_array_length(neotoma.store('{"workspace": "other", "entities": [
  {"entity_type": "person", "name": "Harbour Pilot", "email": "pilot@harbour.example", "notes": "harbour"}]}')->'entities')
       AS stored_elsewhere;

-- 2,100 notes + the master + the senior (for the merged one): the deleted
-- one and the other workspace's not counted; the master first by its name.
SELECT r->>'total' AS total, r->'entities'->0->>'canonical_name' AS first, r->>'search_method' AS method
FROM neotoma.retrieve_entities('{"search": "harbour", "search_mode": "lexical", "limit": 5}') r;
-- Every page: the senior answers as the alias's target, once; neither the
-- merged nor the deleted one answers.
SELECT count(*) AS answered, count(DISTINCT e->>'id') AS distinct_ids,
       bool_or(lower(e->>'canonical_name') = 'ann quay senior' AND e->'matched_fields' ? 'alias') AS senior_by_alias,
       bool_or(lower(e->>'canonical_name') IN ('ann quay', 'old pier', 'harbour pilot')) AS wrong_ones
FROM generate_series(0, 2100, 100) o,
     jsonb_array_elements(neotoma.retrieve_entities(jsonb_build_object(
       'search', 'harbour', 'search_mode', 'lexical', 'limit', 100, 'offset', o))->'entities') e;
-- With merged and deleted entities: each its own.
SELECT (neotoma.retrieve_entities('{"search": "harbour", "search_mode": "lexical", "limit": 1,
                                    "include_merged": true, "include_deleted": true}')->>'total') AS total_with_all;
-- The other workspace: its own entity only, by words and by meaning.
SELECT r->>'total' AS total, r->'entities'->0->>'canonical_name' AS first
FROM neotoma.retrieve_entities('{"search": "harbour", "search_mode": "lexical", "workspace": "other"}') r;
SELECT bool_and(e->>'workspace' = 'other') AS only_other
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "harbour pilot", "search_mode": "hybrid",
                                                      "workspace": "other", "limit": 50}')->'entities') e;
-- The same answer twice.
SELECT neotoma.retrieve_entities('{"search": "harbour", "search_mode": "hybrid", "limit": 10}')
     = neotoma.retrieve_entities('{"search": "harbour", "search_mode": "hybrid", "limit": 10}') AS deterministic;
ROLLBACK;
