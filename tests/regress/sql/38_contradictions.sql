-- Contradictions: a fixture with known conflicts (two sources disagree on a
-- phone; one source changing its mind is none; a merge_array field joins;
-- a tie broken by the tie-breaker; a correction resolves one), through
-- list_contradictions, retrieve_entity_snapshot {include_contradictions}
-- and the view; isolation as a non-superuser; bad input; verify() clean.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '38000000-0000-0000-0000-00000000000a';

-- Two sources give Ann two phones; a third gives the same e-mail again.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ann Lee", "email": "ann@example.com", "phone": "+1 555 0100"}],
                       "provenance": {"extracted_at": "2026-01-01T00:00:00Z", "extractor_version": "regress/1"}}') IS NOT NULL AS first;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ann Lee", "email": "ann@example.com", "phone": "+1 555 0199"}],
                       "provenance": {"extracted_at": "2026-02-01T00:00:00Z", "extractor_version": "regress/1"}}') IS NOT NULL AS second;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Bob Roe", "email": "bob@example.com", "phone": "+1 555 0200"}]}') IS NOT NULL AS bob;
SELECT id AS ann FROM neotoma.entities WHERE identity_key = 'email=ann@example.com' \gset

SELECT c->>'entity_type' AS type, c->>'field' AS field, c->'chosen_value' AS chosen,
       jsonb_path_query_array(c, '$.values[*].value') AS competing,
       c->>'strategy' AS strategy, c->>'tie_breaker' AS tie_breaker, c->>'reason' AS reason, c->'resolved' AS resolved,
       jsonb_array_length(c->'values'->0->'observations') AS chosen_by
FROM jsonb_array_elements(neotoma.list_contradictions('{"entity_type": "person"}')->'contradictions') c;
-- The chosen value is the snapshot's, and the snapshot says so too.
SELECT r->'snapshot'->>'phone' AS snapshot_phone,
       jsonb_path_query_array(r, '$.contradictions[*].field') AS contradicted,
       (r->'contradictions'->0->>'chosen_observation_id') = (r->'provenance'->>'phone') AS same_observation
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'ann', 'include_contradictions', true)) r;
SELECT r ? 'contradictions' AS without_asking FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'ann')) r;
-- As of before the second source: no contradiction yet.
SELECT r->'contradictions' AS then FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'ann',
  'at', '2026-01-15T00:00:00Z', 'include_contradictions', true)) r;

-- A correction resolves it, and says so.
SELECT neotoma.correct(jsonb_build_object('entity_id', :'ann', 'entity_type', 'person', 'field', 'phone', 'value', '+1 555 0111')) ? 'observation_id' AS corrected;
SELECT c->'chosen_value' AS chosen, c->'resolved' AS resolved, c->>'reason' AS reason,
       c->'values'->0->'observations'->0->'correction' AS by_correction
FROM jsonb_array_elements(neotoma.list_contradictions(jsonb_build_object('entity_id', :'ann'))->'contradictions') c;
SELECT jsonb_array_length(r->'contradictions') AS unresolved, r->'entities_checked' AS checked
FROM neotoma.list_contradictions(jsonb_build_object('entity_id', :'ann', 'include_resolved', false)) r;

-- A schema's merge policies decide: highest_priority with a tie broken by
-- observed_at; a merge_array field joins its values (no contradiction).
SELECT neotoma.register_schema('{"entity_type": "gadget", "user_specific": true, "schema_definition": {
  "fields": {"serial": {"type": "string", "required": true}, "color": {"type": "string"}, "tags": {"type": "array"}},
  "identity_fields": ["serial"]},
  "reducer_config": {"merge_policies": {"color": {"strategy": "highest_priority", "tie_breaker": "observed_at"},
                                        "tags": {"strategy": "merge_array"}}}}')->'scope' AS registered;
SELECT neotoma.store('{"entities": [{"entity_type": "gadget", "serial": "G1", "color": "red", "tags": ["a"]}], "provenance": {"extracted_at": "2026-03-01T00:00:00Z", "extractor_version": "regress/1"}}') IS NOT NULL AS g1;
SELECT neotoma.store('{"entities": [{"entity_type": "gadget", "serial": "G1", "color": "blue", "tags": ["b"]}], "provenance": {"extracted_at": "2026-03-02T00:00:00Z", "extractor_version": "regress/1"}}') IS NOT NULL AS g2;
SELECT c->>'field' AS field, c->'chosen_value' AS chosen, c->>'reason' AS reason
FROM jsonb_array_elements(neotoma.list_contradictions('{"entity_type": "gadget"}')->'contradictions') c;

-- The analysts' view shows the same.
SELECT entity_type, field, chosen_value, resolved FROM neotoma.contradictions ORDER BY entity_type, field;

-- Pages of entities in id order; has_more says when more follow. A deleted
-- entity is left out before the page is cut (a third one, deleted, takes
-- no place on a page).
SELECT neotoma.store('{"entities": [{"entity_type": "gadget", "serial": "G2", "color": "red"}]}') IS NOT NULL AS g3;
SELECT neotoma.store('{"entities": [{"entity_type": "gadget", "serial": "G2", "color": "green"}]}') IS NOT NULL AS g4;
SELECT neotoma.delete_entity(jsonb_build_object('entity_id', (SELECT entity_id FROM neotoma.entity_snapshots WHERE snapshot->>'serial' = 'G2')))
  IS NOT NULL AS deleted;
SELECT r->'entities_checked' AS checked, r->'has_more' AS more FROM neotoma.list_contradictions('{"limit": 1}') r;
SELECT r->'entities_checked' AS checked, r->'has_more' AS more FROM neotoma.list_contradictions('{"limit": 1, "offset": 1}') r;
SELECT r->'entities_checked' AS checked, r->'has_more' AS more FROM neotoma.list_contradictions('{"limit": 2}') r;

-- Another user sees none of it, through the action or the view.
SET neotoma.user_id = '38000000-0000-0000-0000-00000000000b';
SELECT jsonb_array_length(neotoma.list_contradictions('{}')->'contradictions') AS theirs;
SELECT count(*) AS in_view FROM neotoma.contradictions;
SELECT error_code(try_action('list_contradictions', jsonb_build_object('entity_id', :'ann'))) AS other_entity;
SET neotoma.user_id = '38000000-0000-0000-0000-00000000000a';

-- Bad input.
SELECT error_code(try_action('list_contradictions', args)) AS code,
       try_action('list_contradictions', args)->'error'->'details'->>'field' AS field
FROM (VALUES ('{"entity_id": "nope"}'::jsonb), ('{"limit": 0}'), ('{"limit": 101}'), ('{"offset": -1}'),
             ('{"include_resolved": "yes"}'), ('{"extra": 1}')) t(args);

SELECT (neotoma.verify())->'ok' AS clean;
ROLLBACK;
