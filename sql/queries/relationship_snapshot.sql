-- get_relationship_snapshot: a relationship's reduced metadata and the
-- observations asserting it (and deleting or restoring it). $1 user, $2
-- relationship id.
SELECT jsonb_build_object(
  'snapshot', jsonb_build_object(
     'relationship_key', r.relationship_type || ':' || r.source_entity_id || ':' || r.target_entity_id,
     'id', r.id, 'relationship_type', r.relationship_type,
     'source_entity_id', r.source_entity_id, 'target_entity_id', r.target_entity_id,
     'schema_version', '1.0', 'snapshot', r.snapshot,
     'computed_at', neotoma._iso(r.last_observation_at),
     'observation_count', r.observation_count,
     'last_observation_at', neotoma._iso(r.last_observation_at),
     'provenance', r.provenance, 'user_id', r.user_id
     , 'deleted_at', neotoma._iso(r.deleted_at), 'deleted_reason', r.deleted_reason
     , 'valid_during', neotoma._valid_during(r.valid_during), 'timed', neotoma._relationship_timed(r.user_id, r.id) -- new
     ),
  'observations', coalesce((SELECT jsonb_agg(jsonb_build_object(
      'id', o.id, 'source_id', o.source_id, 'observed_at', neotoma._iso(o.observed_at),
      'kind', o.kind,
      'specificity_score', o.specificity_score, 'source_priority', o.source_priority,
      'metadata', o.metadata)
      || jsonb_strip_nulls(jsonb_build_object('valid_from', neotoma._iso(o.valid_from), 'valid_to', neotoma._iso(o.valid_to))) -- new
      ORDER BY o.observed_at DESC, o.id)
    FROM neotoma.relationship_observations o
    WHERE o.user_id = r.user_id AND o.relationship_id = r.id), '[]'))
FROM neotoma.relationships r WHERE r.user_id = $1::uuid AND r.id = $2::uuid
