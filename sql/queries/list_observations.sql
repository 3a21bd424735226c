-- list_observations: an entity's observations (and those of the entities
-- merged into it), newest first. $1 user, $2 entity id, $3 limit, $4 offset.
WITH o AS (
  SELECT * FROM neotoma.observations
  WHERE user_id = $1::uuid
    AND entity_id IN (SELECT $2::text UNION ALL SELECT id FROM neotoma.entities
                      WHERE user_id = $1::uuid AND merged_into = $2))
SELECT jsonb_build_object(
  'observations', coalesce((
    SELECT jsonb_agg(jsonb_build_object(
             'id', p.id, 'entity_id', p.entity_id, 'entity_type', p.entity_type,
             'schema_version', p.schema_version, 'source_id', p.source_id,
             'interpretation_run_id', p.interpretation_run_id, 'kind', p.kind,
             'observed_at', neotoma._iso(p.observed_at),
             'specificity_score', p.specificity_score, 'source_priority', p.source_priority,
             'fields', p.fields, 'created_at', neotoma._iso(p.created_at)
             , 'written_with', neotoma_private._written_with(p.token_id) -- new
             , 'valid_from', neotoma._iso(p.valid_from), 'valid_to', neotoma._iso(p.valid_to) -- new
             , 'confidence', neotoma.observation_confidence(p.confidence, p.source_priority, c.n), 'contests', c.n
             )
           ORDER BY p.observed_at DESC, p.id)
    FROM (SELECT * FROM o ORDER BY observed_at DESC, id LIMIT $3 OFFSET $4) p
    , LATERAL (SELECT count(*) AS n FROM neotoma.observation_contests x
               WHERE x.user_id = p.user_id AND x.observation_id = p.id) c
    ), '[]'),
  'total', (SELECT count(*) FROM o), 'limit', $3, 'offset', $4)
