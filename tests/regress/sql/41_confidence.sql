-- Confidence ratings (admiralty code): given on store and correct,
-- defaulted per kind (F3 stored, A1 corrected), shown per field in
-- field_provenance; the highest_confidence merge strategy; min_confidence
-- filters (AND on letter and number); contest lowers a rating one step of
-- credibility, recorded and audited, the snapshot refolded (verify()
-- reproduces it); the SQL rating function agrees with the reducer;
-- isolation (as a non-superuser); bad input.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '41000000-0000-0000-0000-00000000000a';

SELECT neotoma.register_schema('{"entity_type": "sighting", "user_specific": true, "schema_definition": {
  "fields": {"ref": {"type": "string", "required": true}, "place": {"type": "string"}, "count": {"type": "number"}},
  "identity_fields": ["ref"]},
  "reducer_config": {"merge_policies": {"place": {"strategy": "highest_confidence"}}}}')->'scope' AS registered;
-- Three sources disagree on the place: a usually reliable one (B2) first,
-- then a newer unrated one (F3), then a newer fairly reliable one (C1).
SELECT neotoma.store('{"entities": [{"entity_type": "sighting", "ref": "S1", "place": "harbour", "count": 3}], "confidence": "B2", "provenance": {"extracted_at": "2026-05-01T00:00:00Z", "extractor_version": "regress/1"}}') IS NOT NULL AS b2;
SELECT neotoma.store('{"entities": [{"entity_type": "sighting", "ref": "S1", "place": "station"}], "provenance": {"extracted_at": "2026-05-02T00:00:00Z", "extractor_version": "regress/1"}}') IS NOT NULL AS unrated;
SELECT neotoma.store('{"entities": [{"entity_type": "sighting", "ref": "S1", "place": "market", "count": 4}], "confidence": "c1", "provenance": {"extracted_at": "2026-05-03T00:00:00Z", "extractor_version": "regress/1"}}') IS NOT NULL AS c1;
SELECT id AS s1 FROM neotoma.entities WHERE entity_type = 'sighting' \gset
-- place: the most reliable source wins (B2 over a newer C1); count is
-- last_write (C1's 4), each with its rating.
SELECT r->'snapshot' AS snapshot, r->'field_provenance'->'place'->>'confidence' AS place_rating,
       r->'field_provenance'->'count'->>'confidence' AS count_rating
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'s1')) r;
SELECT field, value_text, confidence FROM neotoma.entity_fields WHERE entity_id = :'s1' ORDER BY field;
SELECT o.confidence AS given, o.fields->>'place' AS place FROM neotoma.observations o WHERE o.entity_id = :'s1' ORDER BY o.observed_at;
SELECT confidence FROM neotoma.sources WHERE source_type = 'structured' ORDER BY created_at, confidence NULLS LAST;
-- list_observations says each rating.
SELECT o->'fields'->>'place' AS place, o->>'confidence' AS confidence, o->'contests' AS contests
FROM jsonb_array_elements(neotoma.list_observations(jsonb_build_object('entity_id', :'s1'))->'observations') o;

-- min_confidence: only fields whose rating passes, letter AND number.
SELECT m AS min_confidence, r->'snapshot' AS snapshot
FROM unnest(ARRAY['B2', 'C1', 'B1', 'A1', 'F6']) m,
     LATERAL neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'s1', 'min_confidence', m)) r;
-- Listings: entities with a passing field, showing only those.
SELECT neotoma.store('{"entities": [{"entity_type": "sighting", "ref": "S2", "place": "pier"}]}') IS NOT NULL AS s2;
SELECT m AS min_confidence, r->'total' AS total,
       jsonb_path_query_array(r, '$.entities[*].snapshot') AS snapshots
FROM unnest(ARRAY['B2', 'C1', 'F3', 'A1']) m,
     LATERAL neotoma.retrieve_entities(jsonb_build_object('entity_type', 'sighting', 'min_confidence', m)) r;
SELECT r->'total' AS any_type FROM neotoma.retrieve_entities('{"min_confidence": "F6"}') r;

-- contest: B2 becomes B3; still ahead of C1 (reliability first).
SELECT o.id AS harbour FROM neotoma.observations o WHERE o.entity_id = :'s1' AND o.fields->>'place' = 'harbour' \gset
SELECT r->>'entity_id' = :'s1' AS on_s1, r->>'confidence_before' AS before, r->>'confidence' AS after,
       r->'contests' AS contests, r->'already_contested' AS again
FROM neotoma.contest(jsonb_build_object('observation_id', :'harbour', 'reason', 'The harbour was closed that day.')) r;
-- The same reason again changes nothing; another lowers it once more.
SELECT r->>'confidence' AS after, r->'already_contested' AS again
FROM neotoma.contest(jsonb_build_object('observation_id', :'harbour', 'reason', 'The harbour was closed that day.')) r;
SELECT r->>'confidence' AS after, r->'contests' AS contests
FROM neotoma.contest(jsonb_build_object('observation_id', :'harbour', 'reason', 'No ferry ran either.')) r;
SELECT r->'snapshot'->>'place' AS place, r->'field_provenance'->'place'->>'confidence' AS rating
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'s1')) r;
-- The observation itself did not change.
SELECT confidence, fields->>'place' AS place FROM neotoma.observations WHERE id = :'harbour';
SELECT action, target_kind, target_id = :'harbour' AS on_harbour, reason FROM neotoma.audit_trail WHERE action = 'contest' ORDER BY at;
-- Contradictions say each value's rating and why the chosen one won.
SELECT c->>'reason' AS reason, jsonb_path_query_array(c, '$.values[*].observations[*].confidence') AS ratings
FROM jsonb_array_elements(neotoma.list_contradictions(jsonb_build_object('entity_id', :'s1'))->'contradictions') c
WHERE c->>'field' = 'place';
-- As of a time before the contests, they do not count.
SELECT r->'field_provenance'->'place'->>'confidence' AS rating_in_may
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'s1', 'at', '2026-05-10T00:00:00Z')) r;
-- The change feed says the snapshot was refolded.
SELECT operation, entity_id = :'s1' AS on_s1, count(*) AS rows FROM neotoma.changes
WHERE operation = 'recomputed' GROUP BY 1, 2;
-- Contests are not edited or withdrawn, not even by their table's owner.
RESET ROLE;
SAVEPOINT edit;
DELETE FROM neotoma.observation_contests;
ROLLBACK TO SAVEPOINT edit;
SET ROLE neotoma_regress_agent;

-- A contest inserted by plain SQL refolds the snapshot too: count's value
-- came from the C1 observation, now C2.
SELECT o.id AS market FROM neotoma.observations o WHERE o.entity_id = :'s1' AND o.fields->>'place' = 'market' \gset
INSERT INTO neotoma.observation_contests (user_id, id, observation_id, reason)
VALUES (neotoma.current_user_id(), '41000000-0000-0000-0000-0000000000c1', :'market', 'by hand');
SELECT field_provenance->'count'->>'confidence' AS count_rating FROM neotoma.entity_snapshots WHERE entity_id = :'s1';
SELECT (neotoma.verify())->'ok' AS clean;

-- A correction (A1 unless rated) beats them all; rated, it says so.
SELECT neotoma.correct(jsonb_build_object('entity_id', :'s1', 'entity_type', 'sighting', 'field', 'place', 'value', 'quay', 'confidence', 'B1'))->>'message' AS corrected;
SELECT r->'snapshot'->>'place' AS place, r->'field_provenance'->'place'->>'confidence' AS rating
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'s1')) r;
SELECT neotoma.correct(jsonb_build_object('entity_id', :'s1', 'entity_type', 'sighting', 'field', 'count', 'value', 5))->>'message' AS corrected;
SELECT r->'field_provenance'->'count'->>'confidence' AS unrated_correction
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'s1')) r;

-- The SQL rating agrees with the reducer's for every observation.
SELECT count(*) FILTER (WHERE (o->>'confidence') IS DISTINCT FROM neotoma.observation_confidence(x.confidence, x.source_priority, (o->>'contests')::bigint)) AS disagree,
       count(*) AS checked
FROM jsonb_array_elements(neotoma.list_observations(jsonb_build_object('entity_id', :'s1'))->'observations') o
JOIN neotoma.observations x ON x.id = (o->>'id')::uuid;
SELECT neotoma.observation_confidence('B5', 100, 3) AS capped, neotoma.observation_confidence(NULL, 1000, 0) AS correction,
       neotoma.observation_confidence(NULL, 100, 1) AS unrated_contested;

SELECT (neotoma.verify())->'ok' AS clean;

-- A split moves the contested observation with its contests: its copy on
-- the new entity is as disputed (B4).
SELECT r->>'to_entity_id' AS split_to FROM neotoma.split_entity(jsonb_build_object('entity_id', :'s1', 'observation_ids', jsonb_build_array(:'harbour'))) r \gset
SELECT r->'snapshot'->>'place' AS place, r->'field_provenance'->'place'->>'confidence' AS rating
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'split_to')) r;
SELECT error_code(try_action('contest', jsonb_build_object('observation_id', :'harbour', 'reason', 'again'))) AS moved_original;
SELECT (neotoma.verify())->'ok' AS clean;

-- Another user can neither contest nor see them.
SET neotoma.user_id = '41000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('contest', jsonb_build_object('observation_id', :'harbour', 'reason', 'x'))) AS contest,
       (SELECT count(*) FROM neotoma.observation_contests) AS visible,
       (SELECT count(*) FROM neotoma.audit_trail WHERE action = 'contest') AS audited;
SET neotoma.user_id = '41000000-0000-0000-0000-00000000000a';

-- Bad input.
SELECT error_code(try_action(a, args)) AS code, try_action(a, args)->'error'->'details'->>'field' AS field,
       left(try_action(a, args)->'error'->>'message', 90) AS message
FROM (VALUES ('contest', jsonb_build_object('observation_id', :'harbour', 'reason', '  ')),
             ('contest', jsonb_build_object('observation_id', :'harbour', 'reason', repeat('x', 10001))),
             ('contest', '{"reason": "x"}'::jsonb),
             ('contest', '{"observation_id": "nope", "reason": "x"}'),
             ('contest', '{"observation_id": "00000000-0000-0000-0000-000000000001", "reason": "x"}'),
             ('contest', jsonb_build_object('observation_id', :'harbour', 'reason', 'x', 'extra', 1)),
             ('store', '{"entities": [{"entity_type": "sighting", "ref": "S9"}], "confidence": "G1"}'),
             ('store', '{"entities": [{"entity_type": "sighting", "ref": "S9"}], "confidence": 2}'),
             ('correct', jsonb_build_object('entity_id', :'s1', 'entity_type', 'sighting', 'field', 'place', 'value', 'x', 'confidence', 'A0')),
             ('retrieve_entities', '{"min_confidence": "B"}'),
             ('retrieve_entities', '{"min_confidence": "B2", "search": "pier"}'),
             ('retrieve_entity_snapshot', jsonb_build_object('entity_id', :'s1', 'min_confidence', 'Z9')),
             ('register_schema', '{"entity_type": "thing", "user_specific": true, "schema_definition": {"fields": {"a": {"type": "string"}}}, "reducer_config": {"merge_policies": {"a": {"strategy": "most_confident"}}}}')) t(a, args);
SELECT count(*) AS s9_stored FROM neotoma.entities WHERE canonical_name = 's9';

-- Erasing the entity removes its contests with it.
SELECT neotoma.erase(jsonb_build_object('entity_id', :'s1', 'confirm', true)) IS NOT NULL AS erased;
SELECT count(*) AS contests_left, count(*) FILTER (WHERE o.entity_id = :'split_to') AS of_the_split_copy
FROM neotoma.observation_contests c LEFT JOIN neotoma.observations o ON o.id = c.observation_id;
SELECT (neotoma.verify())->'ok' AS clean;
ROLLBACK;
