-- merge_entities.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
\set SHOW_CONTEXT never

-- Another user's invoice (as 21_timeline stores it), for the merge across users.
SET neotoma.user_id = 'e0000000-0000-0000-0000-00000000000e';
SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "T-1", "vendor_name": "V", "invoice_date": "2024-01-10", "date_due": "2024-02-10"}]}')->'entities') AS stored;

SET neotoma.user_id = 'f0000000-0000-0000-0000-00000000000f';

SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Robert Roe", "email": "bob@old.example", "role": "cto"},
  {"entity_type": "person", "name": "Bob Roe", "email": "bob@new.example", "phone": "+1 555 0199"},
  {"entity_type": "company", "name": "Roe Inc", "website": "roe.example"},
  {"entity_type": "invoice", "invoice_number": "M-1", "vendor_name": "Roe Inc", "invoice_date": "2024-05-01"}],
  "provenance": {"extracted_at": "2024-05-02T00:00:00Z", "extractor_version": "t"}}')->'entities') AS stored;
SELECT id AS old_bob FROM neotoma.entities WHERE identity_key = 'email=bob@old.example' \gset
SELECT id AS new_bob FROM neotoma.entities WHERE identity_key = 'email=bob@new.example' \gset
SELECT id AS roe FROM neotoma.entities WHERE entity_type = 'company' \gset
SELECT id AS inv FROM neotoma.entities WHERE entity_type = 'invoice' \gset
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'old_bob', 'target_entity_id', :'roe', 'metadata', '{"role": "founder"}'::jsonb))->'relationship_type' AS rel;
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO', 'source_entity_id', :'new_bob', 'target_entity_id', :'old_bob'))->'relationship_type' AS rel_between;

-- Bad merges.
SELECT error_code(try_action('merge_entities', jsonb_build_object('from_entity_id', :'old_bob', 'to_entity_id', :'old_bob'))) AS into_itself,
       error_code(try_action('merge_entities', jsonb_build_object('from_entity_id', :'old_bob', 'to_entity_id', :'roe'))) AS other_type,
       error_code(try_action('merge_entities', jsonb_build_object('from_entity_id', :'old_bob', 'to_entity_id', 'ent_00000000000000000000000000000000'))) AS missing;

-- Merge old Bob into new Bob.
SELECT r->'observations_moved' AS observations, r->'relationships_moved' AS relationships, r->'merge_reason' AS reason,
       r->>'from_entity_id' = :'old_bob' AS from_ok
FROM neotoma.merge_entities(jsonb_build_object('from_entity_id', :'old_bob', 'to_entity_id', :'new_bob', 'merge_reason', 'same person')) r;

-- The target's snapshot is recomputed from the union (role came from old Bob).
SELECT r->'snapshot'->>'role' AS role, r->'observation_count' AS n
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'new_bob')) r;
-- Retrieving the merged entity redirects to the target.
SELECT r->>'entity_id' = :'new_bob' AS redirected, r->>'redirected_from' = :'old_bob' AS says_from
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'old_bob')) r;
-- Hidden from listings unless include_merged, which reports merged_into.
SELECT neotoma.retrieve_entities('{"entity_type": "person"}')->'total' AS visible,
       (SELECT x->>'merged_into' = :'new_bob' FROM jsonb_array_elements(neotoma.retrieve_entities(
          '{"entity_type": "person", "include_merged": true}')->'entities') x WHERE x->>'id' = :'old_bob') AS reports_merged_into;
-- Its identifiers find the target now.
SELECT (SELECT jsonb_agg(x->>'id' = :'new_bob') FROM jsonb_array_elements(r->'entities') x) AS finds_target
FROM neotoma.retrieve_entity_by_identifier('{"identifier": "bob@old.example"}') r;
-- Relationships resolve to the target; the one between the two is dissolved.
SELECT (SELECT jsonb_agg(jsonb_build_object('type', x->>'relationship_type', 'from_target', x->>'source_entity_id' = :'new_bob', 'metadata', x->'metadata')))
FROM jsonb_array_elements(neotoma.list_relationships(jsonb_build_object('entity_id', :'roe'))->'relationships') x;
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', :'new_bob'))->'total' AS new_bob_relationships;
-- Observations are untouched: the pre-merge history is reconstructable.
SELECT count(*) FILTER (WHERE entity_id = :'old_bob') AS still_old_bob, count(*) AS all_observations
FROM neotoma.observations WHERE entity_type = 'person';
SELECT neotoma.list_observations(jsonb_build_object('entity_id', :'new_bob'))->'total' AS observations_of_target;
-- New data about old Bob lands on new Bob.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "BOB@old.example", "country": "NZ"}]}')->'entities'->0->>'entity_id' = :'new_bob' AS stored_on_target;
-- The merge is logged.
SELECT from_entity_id = :'old_bob' AS from_ok, merge_reason, observations_moved, from_snapshot->'snapshot'->>'role' AS pre_merge_role
FROM neotoma.entity_merges;

-- Merging twice, or into a merged entity.
SELECT error_code(try_action('merge_entities', jsonb_build_object('from_entity_id', :'old_bob', 'to_entity_id', :'new_bob'))) AS twice,
       error_code(try_action('merge_entities', jsonb_build_object('from_entity_id', :'new_bob', 'to_entity_id', :'old_bob'))) AS into_merged;
-- Across users: the other user's entity does not exist for this one.
SET neotoma.user_id = 'e0000000-0000-0000-0000-00000000000e';
SELECT error_code(try_action('merge_entities', jsonb_build_object('from_entity_id', :'new_bob',
  'to_entity_id', (SELECT id FROM neotoma.entities WHERE entity_type = 'invoice' LIMIT 1)))) AS across_users;
SET neotoma.user_id = 'f0000000-0000-0000-0000-00000000000f';

SELECT neotoma.verify()->'ok' AS verified;
RESET ROLE;
ROLLBACK;
