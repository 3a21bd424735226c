-- retrieve_graph_neighborhood of an entity. $1 user, $2 entity id,
-- $3..$6 include relationships, sources, events, observations ('true'/'false'),
-- $7 the workspaces (text[]): relationships to entities outside them are left out;
-- $8 a valid time (microseconds): relationships not holding then are left out.
WITH rel AS (
  SELECT r.* FROM neotoma.relationships r
  WHERE $3 = 'true' AND r.user_id = $1::uuid AND r.merged_into IS NULL
    AND (r.source_entity_id = $2 OR r.target_entity_id = $2)
    -- Not deleted, nor to deleted entities (lines marked 0.6 and 0.7: not
    -- before those versions).
    AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
    AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($7::text[])) -- ws:some
    AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
    AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.workspace <> ALL ($7::text[])) -- ws:some
    AND r.deleted_at IS NULL
    AND r.valid_during @> neotoma._from_micros($8) -- new
    ),
own AS (
  SELECT o.* FROM neotoma.observations o
  WHERE o.user_id = $1::uuid
    AND o.entity_id IN (SELECT $2::text UNION ALL SELECT id FROM neotoma.entities
                               WHERE user_id = $1::uuid AND merged_into = $2))
SELECT jsonb_build_object(
  'node_id', e.id, 'node_type', 'entity',
  'entity', jsonb_build_object('id', e.id, 'entity_type', e.entity_type, 'canonical_name', e.canonical_name,
                               'observation_count', coalesce(s.observation_count, 0),
                               'last_observation_at', neotoma._iso(s.last_observation_at)),
  'entity_snapshot', coalesce(s.snapshot, '{}'))
|| CASE WHEN $3 = 'true' THEN jsonb_build_object(
     'relationships', coalesce((SELECT jsonb_agg(jsonb_build_object('id', r.id,
         'relationship_type', r.relationship_type, 'source_entity_id', r.source_entity_id,
         'target_entity_id', r.target_entity_id, 'metadata', r.snapshot,
         'created_at', neotoma._iso(r.created_at))
         || jsonb_strip_nulls(jsonb_build_object('valid_during', neotoma._valid_during(r.valid_during), 'timed', CASE WHEN neotoma._relationship_timed(r.user_id, r.id) THEN true END)) -- new
         ORDER BY r.id) FROM rel r), '[]'),
     'related_entities', coalesce((SELECT jsonb_agg(jsonb_build_object('id', x.id,
         'entity_type', x.entity_type, 'canonical_name', x.canonical_name,
         'snapshot', coalesce(xs.snapshot, '{}')) ORDER BY x.id)
       FROM neotoma.entities x
       LEFT JOIN neotoma.entity_snapshots xs ON xs.user_id = x.user_id AND xs.entity_id = x.id
       WHERE x.user_id = $1::uuid AND x.id IN (SELECT CASE WHEN source_entity_id = $2 THEN target_entity_id
                                                           ELSE source_entity_id END FROM rel)), '[]'))
   ELSE '{}' END
|| CASE WHEN $4 = 'true' THEN jsonb_build_object(
     'related_sources', coalesce((SELECT jsonb_agg(jsonb_build_object('id', src.id,
         'source_type', src.source_type, 'mime_type', src.mime_type,
         'original_filename', src.original_filename, 'content_hash', src.content_hash,
         'created_at', neotoma._iso(src.created_at)) ORDER BY src.created_at, src.id)
       FROM neotoma.sources src
       WHERE src.user_id = $1::uuid AND src.id IN (SELECT source_id FROM own)), '[]'))
   ELSE '{}' END
|| CASE WHEN $5 = 'true' THEN jsonb_build_object(
     'timeline_events', coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id,
         'event_type', t.event_type, 'event_timestamp', neotoma._iso(t.event_timestamp),
         'source_id', t.source_id, 'entity_ids', to_jsonb(t.entity_ids), 'properties', t.properties)
         ORDER BY t.event_timestamp DESC, t.id)
       FROM neotoma.timeline_events t WHERE t.user_id = $1::uuid AND t.entity_id = $2), '[]'))
   ELSE '{}' END
|| CASE WHEN $6 = 'true' THEN jsonb_build_object(
     'observations', coalesce((SELECT jsonb_agg(jsonb_build_object('id', o.id, 'entity_id', o.entity_id,
         'source_id', o.source_id, 'kind', o.kind, 'observed_at', neotoma._iso(o.observed_at),
         'source_priority', o.source_priority, 'specificity_score', o.specificity_score,
         'fields', o.fields) ORDER BY o.observed_at DESC, o.id) FROM own o), '[]'))
   ELSE '{}' END
FROM neotoma.entities e
LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
WHERE e.user_id = $1::uuid AND e.id = $2
