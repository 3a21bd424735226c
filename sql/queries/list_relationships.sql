-- list_relationships: a page of an entity's current relationships, newest
-- first, between entities that are not deleted. $1 user, $2 entity id, $3 direction (inbound, outbound, both),
-- $4 relationship type or NULL, $5 limit, $6 offset, $7 include_deleted ('true'/'false'):
-- deleted relationships, and those to deleted entities, with deleted_at;
-- $8 the workspaces (text[]): an edge to an entity outside them is not shown;
-- $9 current only: only those holding at valid time $10 (microseconds).
WITH r AS (
  SELECT * FROM neotoma.relationships r
  WHERE r.user_id = $1::uuid AND r.merged_into IS NULL
    AND (($3 <> 'inbound' AND r.source_entity_id = $2) OR ($3 <> 'outbound' AND r.target_entity_id = $2))
    AND ($4::text IS NULL OR r.relationship_type = $4)
    -- Not while the other end is deleted.
    AND ($7 = 'true' OR r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL))
    AND ($7 = 'true' OR r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL))
    AND ($7 = 'true' OR r.deleted_at IS NULL)
    AND NOT EXISTS (SELECT FROM neotoma.entities o WHERE o.user_id = $1::uuid -- ws:some
                    AND o.id IN (r.source_entity_id, r.target_entity_id) AND o.workspace <> ALL ($8::text[])) -- ws:some
    AND (NOT $9 OR r.valid_during @> neotoma._from_micros($10)) -- new
    )
SELECT jsonb_build_object(
  'relationships', coalesce((SELECT jsonb_agg(jsonb_build_object(
      'id', p.id, 'relationship_type', p.relationship_type,
      'source_entity_id', p.source_entity_id, 'target_entity_id', p.target_entity_id,
      'metadata', p.snapshot, 'created_at', neotoma._iso(p.created_at)
      , 'valid_during', neotoma._valid_during(p.valid_during), 'timed', neotoma._relationship_timed(p.user_id, p.id) -- new
      )
      || CASE WHEN $7 = 'true' THEN jsonb_build_object('deleted_at', neotoma._iso(p.deleted_at),
                                   'deleted_reason', p.deleted_reason) ELSE '{}' END
    ORDER BY p.created_at DESC, p.id)
    FROM (SELECT * FROM r ORDER BY created_at DESC, id LIMIT $5 OFFSET $6) p), '[]'),
  'total', (SELECT count(*) FROM r), 'limit', $5, 'offset', $6)
