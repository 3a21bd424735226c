-- The derived rows of a batch of entities, as the CTEs of one statement
-- (which the caller ends, or continues with a store's own rows): their
-- snapshots (written or replaced), identifiers and timeline events (whose
-- earlier rows were deleted before). $1 user; $2 snapshot rows (entity_id,
-- entity_type, schema_version, snapshot, provenance, field_provenance,
-- reducer_state, observation_count, last_us: the last observation as
-- microseconds, valid_until: until when the render holds, microseconds; valid_values:
-- the values that hold over valid time, compact); $3 identifier rows (entity_id, field, value); $4 timeline
-- event rows (id, event_type, ts, source_id, entity_id, source_field,
-- observation_id, properties). Each is a jsonb[] of one object per row,
-- read one row at a time. Snapshots and events carry their entity's
-- workspace (which never changes).
WITH snapshots AS (
  INSERT INTO neotoma.entity_snapshots AS t (user_id, entity_id, entity_type, schema_version,
      snapshot, provenance, field_provenance, reducer_state, observation_count,
      last_observation_at, computed_at
      , workspace
      , valid_until, valid_values -- new
      )
  SELECT $1::uuid, r->>'entity_id', r->>'entity_type', r->>'schema_version', r->'snapshot',
         r->'provenance', r->'field_provenance', r->'reducer_state', (r->>'observation_count')::bigint,
         neotoma._from_micros((r->>'last_us')::bigint), neotoma._from_micros((r->>'last_us')::bigint)
         , (SELECT e.workspace FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.id = r->>'entity_id')
         , neotoma._from_micros((r->>'valid_until')::bigint), r->'valid_values' -- new
  FROM unnest($2::jsonb[]) AS r
  ON CONFLICT (user_id, entity_id) DO UPDATE SET
      entity_type = EXCLUDED.entity_type, schema_version = EXCLUDED.schema_version,
      snapshot = EXCLUDED.snapshot, provenance = EXCLUDED.provenance,
      field_provenance = EXCLUDED.field_provenance, reducer_state = EXCLUDED.reducer_state,
      observation_count = EXCLUDED.observation_count,
      last_observation_at = EXCLUDED.last_observation_at, computed_at = EXCLUDED.computed_at
      , valid_until = EXCLUDED.valid_until, valid_values = EXCLUDED.valid_values -- new
), identifiers AS (
  INSERT INTO neotoma.entity_identifiers (user_id, entity_id, field, value)
  SELECT $1::uuid, r->>'entity_id', r->>'field', r->>'value'
  FROM unnest($3::jsonb[]) AS r
), events AS (
  INSERT INTO neotoma.timeline_events (user_id, id, event_type, event_timestamp, source_id,
      entity_id, entity_ids, source_field, observation_id, properties
      , workspace
      )
  SELECT $1::uuid, (r->>'id')::uuid, r->>'event_type', neotoma._from_micros((r->>'ts')::bigint),
         (r->>'source_id')::uuid, r->>'entity_id', ARRAY[r->>'entity_id'], r->>'source_field',
         (r->>'observation_id')::uuid, r->'properties'
         , (SELECT e.workspace FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.id = r->>'entity_id')
  FROM unnest($4::jsonb[]) AS r
)
