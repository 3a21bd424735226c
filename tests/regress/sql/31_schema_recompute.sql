-- A schema change that alters what the reducer or the timeline derive
-- recomputes the snapshots it affects, in the same transaction: a user's
-- variant that user's, a global change every user's without a variant.
-- Not in one transaction: last_write between two stores needs two
-- transactions (observed_at is now()). It leaves users 31 and 32's data and
-- the global trip schema; no other test reads them.
\ir include/setup.sql

SET ROLE neotoma_regress_operator;
\set SHOW_CONTEXT never
SET neotoma.user_id = '31000000-0000-0000-0000-000000000031';
SELECT r->'schema_version' AS version FROM neotoma.register_schema('{"entity_type": "trip", "schema_definition": {
  "fields": {"name": {"type": "string"}, "leaves": {"type": "date"}, "seat": {"type": "string"}}, "identity_fields": ["name"],
  "temporal_fields": [{"field": "leaves", "event_type": "TripLeaves"}]},
  "reducer_config": {"merge_policies": {"seat": {"strategy": "last_write"}}}}') r;
SELECT neotoma.store('{"source_priority": 900, "entities": [{"entity_type": "trip", "name": "Oslo", "leaves": "2024-06-01", "seat": "12A"}]}') IS NOT NULL;
SELECT neotoma.store('{"source_priority": 10, "entities": [{"entity_type": "trip", "name": "Oslo", "seat": "30C"}]}') IS NOT NULL;
SELECT snapshot->>'seat' AS seat_31_last_write FROM neotoma.entity_snapshots WHERE entity_type = 'trip';
SET neotoma.user_id = '32000000-0000-0000-0000-000000000032';
SELECT neotoma.store('{"source_priority": 900, "entities": [{"entity_type": "trip", "name": "Rome", "leaves": "2024-07-01", "seat": "1A"}]}') IS NOT NULL;
SELECT neotoma.store('{"source_priority": 10, "entities": [{"entity_type": "trip", "name": "Rome", "seat": "2B"}]}') IS NOT NULL;

-- User 31's own variant: highest priority wins the seat; only 31 is recomputed.
SET neotoma.user_id = '31000000-0000-0000-0000-000000000031';
SELECT r->'scope' AS scope, r->'entities_recomputed' AS recomputed FROM neotoma.register_schema('{"entity_type": "trip",
  "user_specific": true, "schema_version": "1.1", "activate": true, "schema_definition": {
  "fields": {"name": {"type": "string"}, "leaves": {"type": "date"}, "seat": {"type": "string"}}, "identity_fields": ["name"],
  "temporal_fields": [{"field": "leaves", "event_type": "TripLeaves"}]},
  "reducer_config": {"merge_policies": {"seat": {"strategy": "highest_priority"}}}}') r;
SELECT snapshot->>'seat' AS seat_31 FROM neotoma.entity_snapshots WHERE entity_type = 'trip';
SET neotoma.user_id = '32000000-0000-0000-0000-000000000032';
SELECT snapshot->>'seat' AS seat_32 FROM neotoma.entity_snapshots WHERE entity_type = 'trip';

-- A global change of the event type: user 32 (no variant) gets its event
-- renamed at once; user 31 keeps its own variant's.
SELECT r->'entities_recomputed' AS recomputed FROM neotoma.register_schema('{"entity_type": "trip",
  "schema_version": "2.0", "activate": true, "schema_definition": {
  "fields": {"name": {"type": "string"}, "leaves": {"type": "date"}, "seat": {"type": "string"}}, "identity_fields": ["name"],
  "temporal_fields": [{"field": "leaves", "event_type": "Departure"}]},
  "reducer_config": {"merge_policies": {"seat": {"strategy": "last_write"}}}}') r;
SELECT e->>'event_type' AS event_32 FROM jsonb_array_elements(neotoma.list_timeline_events('{}')->'events') e;
SET neotoma.user_id = '31000000-0000-0000-0000-000000000031';
SELECT e->>'event_type' AS event_31 FROM jsonb_array_elements(neotoma.list_timeline_events('{}')->'events') e;
-- A change that derives nothing new (a description) recomputes nothing.
SELECT r->'entities_recomputed' AS recomputed FROM neotoma.register_schema('{"entity_type": "trip",
  "schema_version": "2.1", "activate": true, "schema_definition": {"description": "Travel.",
  "fields": {"name": {"type": "string"}, "leaves": {"type": "date"}, "seat": {"type": "string"}}, "identity_fields": ["name"],
  "temporal_fields": [{"field": "leaves", "event_type": "Departure"}]},
  "reducer_config": {"merge_policies": {"seat": {"strategy": "last_write"}}}}') r;
RESET ROLE;
RESET neotoma.user_id;
SELECT neotoma.verify()->'ok' AS verified;
