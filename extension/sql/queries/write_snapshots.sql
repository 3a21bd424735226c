-- The snapshots of a batch of entities, written (or replaced) at once. $1
-- user, $2 rows (jsonb array: entity id, type, schema version, snapshot,
-- provenance, field provenance, reducer state, count, last observation as
-- microseconds).
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
