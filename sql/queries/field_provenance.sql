-- retrieve_field_provenance: one field's value with the observation, source
-- and run it came from. $1 user, $2 observation id, $3 field, $4 value.
SELECT jsonb_build_object(
  'field', $3::text, 'value', $4::jsonb, 'observed_at', neotoma._iso(o.observed_at),
  'source_observation', jsonb_build_object(
     'id', o.id, 'source_id', o.source_id, 'observed_at', neotoma._iso(o.observed_at),
     'specificity_score', o.specificity_score, 'source_priority', o.source_priority,
     'kind', o.kind, 'interpretation_run_id', o.interpretation_run_id
     , 'written_with', neotoma_private._written_with(o.token_id) -- new
     ),
  'source_material', jsonb_build_object(
     'id', s.id, 'source_type', s.source_type, 'mime_type', s.mime_type,
     'original_filename', s.original_filename, 'content_hash', s.content_hash,
     'file_urls', '[]'::jsonb, 'storage_path', s.storage_path,
     'created_at', neotoma._iso(s.created_at)),
  'interpretation_run', (SELECT jsonb_build_object(
     'id', r.id, 'interpreter', r.interpreter, 'config', r.config, 'status', r.status,
     'started_at', neotoma._iso(r.started_at), 'finished_at', neotoma._iso(r.finished_at))
     FROM neotoma.interpretation_runs r
     WHERE r.user_id = o.user_id AND r.id = o.interpretation_run_id))
FROM neotoma.observations o
JOIN neotoma.sources s ON s.user_id = o.user_id AND s.id = o.source_id
WHERE o.user_id = $1::uuid AND o.id = $2::uuid
