-- retrieve_graph_neighborhood of a source. $1 user, $2 source id,
-- $3..$5 include relationships, events, observations ('true'/'false'), $6
-- the workspaces (text[]): a source elsewhere is not found, entities elsewhere are left out;
-- $7 a valid time (microseconds): relationships not holding then are left out.
-- Deleted entities, their events and relationships, and deleted
-- relationships are left out (lines marked 0.6 and 0.7: not before those).
WITH obs AS (
  SELECT o.* FROM neotoma.observations o WHERE o.user_id = $1::uuid AND o.source_id = $2::uuid),
ents AS (
  SELECT DISTINCT coalesce(e.merged_into, e.id) AS id FROM obs
  JOIN neotoma.entities e ON e.user_id = $1::uuid AND e.id = obs.entity_id),
live AS (
  SELECT x.id FROM ents x
  WHERE x.id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
    AND x.id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($6::text[])) -- ws:some
  )
SELECT jsonb_build_object(
  'node_id', src.id, 'node_type', 'source',
  'source_material', jsonb_build_object('id', src.id, 'source_type', src.source_type,
      'mime_type', src.mime_type, 'original_filename', src.original_filename,
      'content_hash', src.content_hash, 'file_size', src.file_size, 'provenance', src.provenance,
      'created_at', neotoma._iso(src.created_at)),
  -- How the source was read: its interpretation runs, oldest first.
  'interpretation_runs', coalesce((SELECT jsonb_agg(jsonb_build_object('id', ir.id, 'interpreter', ir.interpreter,
      'status', ir.status, 'entities_created', ir.entities_created, 'observations_created', ir.observations_created,
      'unknown_fields_count', ir.unknown_fields_count, 'error', ir.error,
      'started_at', neotoma._iso(ir.started_at), 'finished_at', neotoma._iso(ir.finished_at))
      ORDER BY ir.started_at, ir.id)
    FROM neotoma.interpretation_runs ir WHERE ir.user_id = $1::uuid AND ir.source_id = src.id), '[]'),
  'related_entities', coalesce((SELECT jsonb_agg(jsonb_build_object('id', x.id,
      'entity_type', x.entity_type, 'canonical_name', x.canonical_name,
      'snapshot', coalesce(xs.snapshot, '{}')) ORDER BY x.id)
    FROM neotoma.entities x
    LEFT JOIN neotoma.entity_snapshots xs ON xs.user_id = x.user_id AND xs.entity_id = x.id
    WHERE x.user_id = $1::uuid AND x.id IN (SELECT id FROM live)), '[]'))
|| CASE WHEN $3 = 'true' THEN jsonb_build_object(
     'relationships', coalesce((SELECT jsonb_agg(jsonb_build_object('id', r.id,
         'relationship_type', r.relationship_type, 'source_entity_id', r.source_entity_id,
         'target_entity_id', r.target_entity_id, 'metadata', r.snapshot,
         'created_at', neotoma._iso(r.created_at))
         || jsonb_strip_nulls(jsonb_build_object('valid_during', neotoma._valid_during(r.valid_during), 'timed', CASE WHEN neotoma._relationship_timed(r.user_id, r.id) THEN true END)) -- new
         ORDER BY r.id)
       FROM neotoma.relationships r
       WHERE r.user_id = $1::uuid AND r.merged_into IS NULL
         -- (One IN of a UNION, not an OR of two: under row level security
         -- a subquery inside OR is no index condition.)
         AND r.id IN (SELECT ro.relationship_id FROM neotoma.relationship_observations ro
                      WHERE ro.user_id = $1::uuid AND ro.source_id = $2::uuid
                      UNION
                      SELECT r2.id FROM neotoma.relationships r2
                      WHERE r2.user_id = $1::uuid AND r2.merged_into IS NULL
                        AND r2.source_entity_id IN (SELECT id FROM ents)
                        AND r2.target_entity_id IN (SELECT id FROM ents))
         AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
         AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($6::text[])) -- ws:some
         AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
         AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($6::text[])) -- ws:some
         AND r.deleted_at IS NULL
         AND r.valid_during @> neotoma._from_micros($7) -- new
         ), '[]'))
   ELSE '{}' END
|| CASE WHEN $4 = 'true' THEN jsonb_build_object(
     'timeline_events', coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id,
         'event_type', t.event_type, 'event_timestamp', neotoma._iso(t.event_timestamp),
         'source_id', t.source_id, 'entity_ids', to_jsonb(t.entity_ids), 'properties', t.properties)
         ORDER BY t.event_timestamp DESC, t.id)
       FROM neotoma.timeline_events t WHERE t.user_id = $1::uuid AND t.source_id = $2::uuid
         AND t.entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
         AND t.entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($6::text[])) -- ws:some
         ), '[]'))
   ELSE '{}' END
|| CASE WHEN $5 = 'true' THEN jsonb_build_object(
     'observations', coalesce((SELECT jsonb_agg(jsonb_build_object('id', o.id, 'entity_id', o.entity_id,
         'source_id', o.source_id, 'kind', o.kind, 'observed_at', neotoma._iso(o.observed_at),
         'source_priority', o.source_priority, 'specificity_score', o.specificity_score,
         'fields', o.fields) ORDER BY o.observed_at DESC, o.id) FROM obs o), '[]'))
   ELSE '{}' END
FROM neotoma.sources src WHERE src.user_id = $1::uuid AND src.id = $2::uuid
  AND src.workspace = ANY($6::text[])
