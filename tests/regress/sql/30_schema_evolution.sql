-- Schema evolution: analysis, recommendations, incremental updates,
-- registration, automatic promotion.
-- Not in one transaction: last_write between two stores needs two
-- transactions (observed_at is now() when no provenance is given). It
-- leaves users 1 and 2's data and the global contact and meal schemas; no
-- other test reads them.
\ir include/setup.sql

CREATE FUNCTION note_with(k text, v jsonb, n int) RETURNS jsonb LANGUAGE sql AS $$
  SELECT neotoma.store(jsonb_build_object('entities', jsonb_build_array(
    jsonb_build_object('entity_type', 'note', 'content', 'note ' || k || ' ' || n, k, v)))) $$;
CREATE FUNCTION promoted(k text) RETURNS boolean LANGUAGE sql AS $$
  SELECT (SELECT definition->'fields' ? k FROM neotoma.entity_schemas
          WHERE entity_type = 'note' AND active AND user_id = neotoma.current_user_id()) IS TRUE $$;
-- An operator's session: it changes global schemas (an ordinary user's may
-- not; see 50_security) as well as its own user's data.
SET ROLE neotoma_regress_operator;
SET neotoma.user_id = '10000000-0000-0000-0000-000000000001';
\set SHOW_CONTEXT never

-- Manual loop first: automatic promotion off.
SET neotoma.auto_promote = off;
SELECT count(*) AS stores FROM generate_series(1, 6) i,
  LATERAL neotoma.store(jsonb_build_object('entities', jsonb_build_array(jsonb_build_object(
    'entity_type', 'contact', 'email', 'c' || i || '@x.example', 'tier', CASE WHEN i = 6 THEN 'vip' ELSE 'basic' END,
    'score', i * 10, 'joined', '2024-0' || (i % 9 + 1) || '-01', 'Odd Key', 'x')))) s;

SELECT r->'total_entity_types' AS types, r->'total_fields' AS fields,
       (SELECT jsonb_agg(jsonb_build_object('f', f->>'field_name', 't', f->>'field_type', 'n', f->'frequency',
          'src', f->'distinct_sources', 'c', f->'confidence', 'tc', f->'type_consistency', 'samples', jsonb_array_length(f->'sample_values')))
        FROM jsonb_array_elements(r->'recommendations'->0->'fields') f) AS candidates
FROM neotoma.analyze_schema_candidates('{"entity_type": "contact"}') r;
-- Deterministic: the same fragments, the same answer.
SELECT neotoma.analyze_schema_candidates('{}') = neotoma.analyze_schema_candidates('{}') AS deterministic;
SELECT neotoma.analyze_schema_candidates('{"min_frequency": 7}')->'total_fields' AS none_that_often;

-- The analysis is stored as a pending recommendation.
SELECT r->'total' AS total, r->'recommendations'->0->>'status' AS status,
       jsonb_array_length(r->'recommendations'->0->'fields') AS fields
FROM neotoma.get_schema_recommendations('{"entity_type": "contact"}') r;

-- Add `tier` (no migration): the next store keeps it in the observation.
SELECT r->'schema_version' AS version, r->'fields_added' AS added, r->'scope' AS scope, r->'activated' AS active
FROM neotoma.update_schema_incremental('{"entity_type": "contact", "fields_to_add": [{"field_name": "tier", "field_type": "string"}]}') r;
SELECT neotoma.store('{"entities": [{"entity_type": "contact", "email": "c1@x.example", "tier": "gold"}]}')->'unknown_fields_count' AS unknown;
SELECT snapshot->>'tier' AS tier FROM neotoma.entity_snapshots s JOIN neotoma.entities e ON e.id = s.entity_id
WHERE e.identity_key = 'email=c1@x.example';
-- Same fields again: same version, nothing new.
SELECT r->'schema_version' AS version, r->'fields_added' AS added
FROM neotoma.update_schema_incremental('{"entity_type": "contact", "fields_to_add": [{"field_name": "tier", "field_type": "string"}]}') r;

-- Add `score` and `joined` with migration: the fragments become observations
-- (same source and time), are marked migrated, and snapshots show them.
SELECT r->'schema_version' AS version, r->'fields_added' AS added, r->'fragments_migrated' AS migrated
FROM neotoma.update_schema_incremental('{"entity_type": "contact", "migrate_existing": true,
  "fields_to_add": [{"field_name": "score", "field_type": "number"}, {"field_name": "joined", "field_type": "date"}]}') r;
SELECT count(*) FILTER (WHERE migrated_at IS NOT NULL) AS migrated, count(*) FILTER (WHERE migrated_at IS NULL) AS kept
FROM neotoma.raw_fragments WHERE entity_type = 'contact';
SELECT e.canonical_name, s.snapshot->'score' AS score, s.snapshot->>'joined' AS joined,
       (SELECT o.source_id = f.source_id FROM neotoma.observations o, neotoma.raw_fragments f
        WHERE o.id = (s.field_provenance->'score'->>'observation_id')::uuid AND f.migrated_observation_id = o.id LIMIT 1) AS same_source,
       (SELECT kind FROM neotoma.observations o WHERE o.id = (s.field_provenance->'score'->>'observation_id')::uuid) AS kind
FROM neotoma.entity_snapshots s JOIN neotoma.entities e ON e.id = s.entity_id
WHERE e.entity_type = 'contact' ORDER BY e.canonical_name LIMIT 3;
-- The recommendation is applied.
SELECT neotoma.get_schema_recommendations('{"entity_type": "contact", "status": "applied"}')->'total' AS applied;
SELECT neotoma.list_timeline_events('{"event_type": "Joined"}')->'total' AS joined_events;

-- Registering a new type makes it usable at once.
SELECT r->'schema_version' AS version, r->'activated' AS active, r->'scope' AS scope
FROM neotoma.register_schema('{"entity_type": "meal", "schema_definition": {
  "description": "A meal eaten or cooked: dish, rating, when (food, dinner, lunch).",
  "fields": {"dish": {"type": "string", "required": true}, "rating": {"type": "number"}, "eaten_on": {"type": "date"}},
  "identity_fields": ["dish"], "temporal_fields": [{"field": "eaten_on", "event_type": "MealEaten"}]},
  "reducer_config": {"merge_policies": {"rating": {"strategy": "last_write"}}}}') r;
SELECT neotoma.list_entity_types('{"keyword": "dinner"}')->'entity_types'->0->>'entity_type' AS found;
SELECT neotoma.store('{"entities": [{"entity_type": "meal", "dish": "Ramen", "rating": 5, "eaten_on": "2024-05-01"}], "source_priority": 200}')->'deduplicated' AS d1;
SELECT neotoma.store('{"entities": [{"entity_type": "meal", "dish": "ramen", "rating": 3}], "source_priority": 50}')->'deduplicated' AS d2;
SELECT snapshot->'rating' AS rating_last_write FROM neotoma.entity_snapshots WHERE entity_type = 'meal';
SELECT neotoma.list_timeline_events('{"event_type": "MealEaten"}')->'total' AS meal_events;

-- A new version with another merge policy, activated: snapshots follow.
SELECT r->'schema_version' AS version, r->'entities_recomputed' AS recomputed
FROM neotoma.register_schema('{"entity_type": "meal", "schema_version": "2.0", "activate": true, "schema_definition": {
  "fields": {"dish": {"type": "string", "required": true}, "rating": {"type": "number"}, "eaten_on": {"type": "date"}},
  "identity_fields": ["dish"]},
  "reducer_config": {"merge_policies": {"rating": {"strategy": "highest_priority"}}}}') r;
SELECT snapshot->'rating' AS rating_highest_priority, schema_version FROM neotoma.entity_snapshots WHERE entity_type = 'meal';
SELECT count(*) FILTER (WHERE active) AS active_versions, count(*) AS versions
FROM neotoma.entity_schemas WHERE entity_type = 'meal';

-- Bad definitions are refused, naming the field.
SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field
FROM (VALUES
  ('{"entity_type": "bad type", "schema_definition": {"fields": {"a": {"type": "string"}}}, "reducer_config": {"merge_policies": {}}}'::jsonb),
  ('{"entity_type": "t1", "schema_definition": {"fields": {"a": {"type": "text"}}}, "reducer_config": {"merge_policies": {}}}'),
  ('{"entity_type": "t1", "schema_definition": {"fields": {"a": {"type": "string"}}}, "reducer_config": {"merge_policies": {"a": {"strategy": "newest"}}}}'),
  ('{"entity_type": "t1", "schema_definition": {"fields": {"a": {"type": "string"}}}, "reducer_config": {"merge_policies": {"a": {"strategy": "last_write", "tie_breaker": "luck"}}}}'),
  ('{"entity_type": "t1", "schema_definition": {"fields": {"a": {"type": "string"}}}, "reducer_config": {"merge_policies": {"b": {"strategy": "last_write"}}}}'),
  ('{"entity_type": "t1", "schema_definition": {"fields": {"a": {"type": "string"}}, "identity_fields": ["nope"]}, "reducer_config": {"merge_policies": {}}}'),
  ('{"entity_type": "t1", "schema_definition": {"fields": {"a": {"type": "string"}}, "temporal_fields": [{"field": "a", "event_type": "A"}]}, "reducer_config": {"merge_policies": {}}}'),
  ('{"entity_type": "t1", "schema_definition": {"fields": {}}, "reducer_config": {"merge_policies": {}}}'),
  ('{"entity_type": "meal", "schema_version": "2.0", "schema_definition": {"fields": {"a": {"type": "string"}}}, "reducer_config": {"merge_policies": {}}}')
) AS t(args), LATERAL try_action('register_schema', args) AS r;
SELECT error_code(try_action('update_schema_incremental', '{"entity_type": "spaceship", "fields_to_add": [{"field_name": "a", "field_type": "string"}]}')) AS unknown_type,
       error_code(try_action('update_schema_incremental', '{"entity_type": "contact", "fields_to_add": [{"field_name": "tier", "field_type": "number"}]}')) AS type_clash,
       error_code(try_action('update_schema_incremental', '{"entity_type": "contact", "fields_to_add": [{"field_name": "x", "field_type": "blob"}]}')) AS bad_type,
       error_code(try_action('update_schema_incremental', '{"entity_type": "contact", "fields_to_add": []}')) AS nothing;
RESET neotoma.user_id;
SELECT error_code(try_action('register_schema', '{"entity_type": "t2", "user_specific": true, "schema_definition": {"fields": {"a": {"type": "string"}}}, "reducer_config": {"merge_policies": {}}}')) AS no_user;
SET neotoma.user_id = '10000000-0000-0000-0000-000000000001';

-- Automatic promotion: 3 occurrences, 2 sources, 95% type consistency.
RESET neotoma.auto_promote;
-- Occurrences: 2 is not enough, 3 is.
SELECT note_with('mood', '"calm"', 1) IS NOT NULL AS s1, note_with('mood', '"busy"', 2) IS NOT NULL AS s2;
SELECT promoted('mood') AS after_two;
SELECT note_with('mood', '"calm"', 3) IS NOT NULL AS s3;
SELECT promoted('mood') AS after_three;
-- Sources: 3 occurrences from 1 source are not enough; a second source is.
SELECT neotoma.store('{"entities": [{"entity_type": "note", "content": "a", "place": "home"},
  {"entity_type": "note", "content": "b", "place": "work"}, {"entity_type": "note", "content": "c", "place": "cafe"}]}') IS NOT NULL AS one_source;
SELECT promoted('place') AS one_source_promoted;
SELECT note_with('place', '"park"', 1) IS NOT NULL AS second_source;
SELECT promoted('place') AS two_sources_promoted;
-- Consistency: 94% is not enough, 95% is.
SET neotoma.auto_promote = off;
SELECT count(*) FROM generate_series(1, 46) i, LATERAL note_with('weight', to_jsonb(i), i) s;
SELECT count(*) FROM generate_series(1, 3) i, LATERAL note_with('weight', '"heavy"', 100 + i) s;
SELECT count(*) FROM generate_series(1, 18) i, LATERAL note_with('height', to_jsonb(i), i) s;
SELECT count(*) FROM generate_series(1, 1) i, LATERAL note_with('height', '"tall"', 100 + i) s;
RESET neotoma.auto_promote;
SELECT note_with('weight', '47', 47) IS NOT NULL AS w, note_with('height', '19', 19) IS NOT NULL AS h;
SELECT promoted('weight') AS weight_at_94, promoted('height') AS height_at_95;
-- The promotion is recorded with its evidence, and the fragments moved.
SELECT r->'fields'->0->>'field_name' AS field, r->>'status' AS status, r->'evidence'->'height'->'type_consistency' AS consistency,
       r->'evidence'->'height'->'frequency' AS frequency
FROM jsonb_array_elements(neotoma.get_schema_recommendations('{"entity_type": "note", "status": "auto_applied"}')->'recommendations') r
WHERE r->'fields'->0->>'field_name' = 'height';
SELECT count(*) FILTER (WHERE migrated_at IS NULL) AS height_fragments_left FROM neotoma.raw_fragments WHERE fragment_key = 'height'
  AND jsonb_typeof(fragment_value) = 'number';

-- User-specific variants are invisible to other users.
SELECT t->>'schema_version' AS version, t->>'scope' AS scope, t->'field_names' ? 'mood' AS has_mood
FROM jsonb_array_elements(neotoma.list_entity_types('{"keyword": "note", "detail": true}')->'entity_types') t WHERE t->>'entity_type' = 'note';
SET neotoma.user_id = '20000000-0000-0000-0000-000000000002';
SELECT t->>'schema_version' AS version, t->>'scope' AS scope, t->'field_names' ? 'mood' AS has_mood
FROM jsonb_array_elements(neotoma.list_entity_types('{"keyword": "note", "detail": true}')->'entity_types') t WHERE t->>'entity_type' = 'note';
SELECT neotoma.store('{"entities": [{"entity_type": "note", "content": "other user", "mood": "ok"}]}')->'unknown_fields_count' AS mood_is_unknown_for_b;
SET neotoma.user_id = '10000000-0000-0000-0000-000000000001';

SELECT neotoma.verify()->'ok' AS verified;
RESET ROLE;
