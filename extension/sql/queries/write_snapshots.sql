-- The derived rows of a batch of entities, as the CTEs of one statement
-- (which the caller ends, or continues with a store's own rows): their
-- snapshots (written or replaced), identifiers and timeline events (whose
-- earlier rows were deleted before). $1 user; $2 snapshot rows
-- (entity id, type, schema version, snapshot, provenance, field provenance,
-- reducer state, count, last observation as microseconds); $3 identifier
-- rows (entity id, field, value); $4 timeline event rows.
WITH snapshots AS (
  INSERT INTO neotoma.entity_snapshots AS t (user_id, entity_id, entity_type, schema_version,
      snapshot, provenance, field_provenance, reducer_state, observation_count,
      last_observation_at, computed_at)
  SELECT $1::uuid, r.entity_id, r.entity_type, r.schema_version, r.snapshot, r.provenance,
         r.field_provenance, r.reducer_state, r.observation_count,
         neotoma._from_micros(r.last_us), neotoma._from_micros(r.last_us)
  FROM jsonb_to_recordset($2) AS r(entity_id text, entity_type text, schema_version text,
       snapshot jsonb, provenance jsonb, field_provenance jsonb, reducer_state jsonb,
       observation_count bigint, last_us bigint)
  ON CONFLICT (user_id, entity_id) DO UPDATE SET
      entity_type = EXCLUDED.entity_type, schema_version = EXCLUDED.schema_version,
      snapshot = EXCLUDED.snapshot, provenance = EXCLUDED.provenance,
      field_provenance = EXCLUDED.field_provenance, reducer_state = EXCLUDED.reducer_state,
      observation_count = EXCLUDED.observation_count,
      last_observation_at = EXCLUDED.last_observation_at, computed_at = EXCLUDED.computed_at
), identifiers AS (
  INSERT INTO neotoma.entity_identifiers (user_id, entity_id, field, value)
  SELECT $1::uuid, r.entity_id, r.field, r.value
  FROM jsonb_to_recordset($3) AS r(entity_id text, field text, value text)
), events AS (
  INSERT INTO neotoma.timeline_events (user_id, id, event_type, event_timestamp, source_id,
      entity_id, entity_ids, source_field, observation_id, properties)
  SELECT $1::uuid, r.id, r.event_type, neotoma._from_micros(r.ts), r.source_id, r.entity_id,
         ARRAY[r.entity_id], r.source_field, r.observation_id, r.properties
  FROM jsonb_to_recordset($4) AS r(id uuid, event_type text, ts bigint, source_id uuid,
       entity_id text, source_field text, observation_id uuid, properties jsonb)
)
