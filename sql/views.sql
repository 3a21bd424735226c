-- Views for analysts: the truth model as plain rows. Each is
-- security_invoker, so the querying session's row level security applies (a
-- view otherwise reads its tables as the view's owner, often a superuser).

-- One row per entity: its current snapshot, whether it was merged away,
-- and whether (since when, why) it is deleted.
CREATE VIEW neotoma.entity_overview WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       coalesce(s.snapshot, '{}') AS snapshot,
       coalesce(s.observation_count, 0) AS observation_count,
       s.last_observation_at, s.schema_version,
       e.merged_into, e.merged_at, e.created_at, e.deleted_at, e.deleted_reason, e.workspace
FROM neotoma.entities e
LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
WHERE e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.entity_overview IS
  'One row per entity that is not deleted: type, name, current snapshot, observation count; merged_into is set for merged entities; the workspace it belongs to. Deleted entities: neotoma.deleted_entities.';

-- Deleted entities (delete_entity; restore_entity brings one back), which
-- every other view leaves out.
CREATE VIEW neotoma.deleted_entities WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       coalesce(s.snapshot, '{}') AS snapshot, e.deleted_at, e.deleted_reason, e.workspace
FROM neotoma.entities e
LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
WHERE e.deleted_at IS NOT NULL;
COMMENT ON VIEW neotoma.deleted_entities IS
  'One row per deleted entity: type, name, its snapshot when deleted, when and why it was deleted (restore_entity brings it back).';

-- One row per field of each current (not merged, not deleted) entity, with the
-- observation and source its value came from.
CREATE VIEW neotoma.entity_fields WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       f.key AS field, f.value, f.value #>> '{}' AS value_text,
       (p ->> 'observation_id')::uuid AS observation_id,
       (p ->> 'source_id')::uuid AS source_id,
       (p ->> 'observed_at')::timestamptz AS observed_at,
       (p ->> 'source_priority')::integer AS source_priority,
       p ->> 'confidence' AS confidence, e.workspace
FROM neotoma.entities e
JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
CROSS JOIN LATERAL jsonb_each(s.snapshot) AS f
CROSS JOIN LATERAL (SELECT s.field_provenance -> f.key) AS fp(p)
WHERE e.merged_into IS NULL AND e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.entity_fields IS
  'One row per field of each current entity: value (jsonb and text) and its provenance (observation, source, time, priority, confidence rating).';

-- Current relationships with the names of both ends (none while an end is deleted).
CREATE VIEW neotoma.relationship_overview WITH (security_invoker = true) AS
SELECT r.user_id, r.id AS relationship_id, r.relationship_type,
       r.source_entity_id, se.entity_type AS source_entity_type, se.canonical_name AS source_name,
       r.target_entity_id, te.entity_type AS target_entity_type, te.canonical_name AS target_name,
       r.snapshot AS metadata, r.observation_count, r.last_observation_at, r.created_at,
       se.workspace AS source_workspace, te.workspace AS target_workspace, r.valid_during
FROM neotoma.relationships r
JOIN neotoma.entities se ON se.user_id = r.user_id AND se.id = r.source_entity_id
JOIN neotoma.entities te ON te.user_id = r.user_id AND te.id = r.target_entity_id
WHERE r.merged_into IS NULL AND r.deleted_at IS NULL AND se.deleted_at IS NULL AND te.deleted_at IS NULL
  AND r.valid_during @> now();
COMMENT ON VIEW neotoma.relationship_overview IS
  'Current relationships (not re-keyed by a merge, not deleted, between entities that are not deleted, holding now in valid time) with the type and name of both entities, the reduced metadata and when the relationship holds (valid_during).';

-- Timeline events with the entity they are about (not of deleted entities).
CREATE VIEW neotoma.timeline WITH (security_invoker = true) AS
SELECT t.user_id, t.id AS event_id, t.event_timestamp, t.event_type,
       t.entity_id, e.entity_type, e.canonical_name,
       t.source_field, t.source_id, t.observation_id, t.properties, t.workspace
FROM neotoma.timeline_events t
JOIN neotoma.entities e ON e.user_id = t.user_id AND e.id = t.entity_id
WHERE e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.timeline IS
  'Timeline events (derived from date fields) with the type and name of their entity.';

-- Fields that sources keep giving but no schema has yet (not yet migrated).
CREATE VIEW neotoma.unknown_fields WITH (security_invoker = true) AS
SELECT user_id, entity_type, fragment_key AS field,
       count(*) AS occurrences,
       count(DISTINCT source_id) AS sources,
       mode() WITHIN GROUP (ORDER BY inferred_type) AS usual_type,
       min(created_at) AS first_seen, max(created_at) AS last_seen
FROM neotoma.raw_fragments
WHERE migrated_at IS NULL
GROUP BY user_id, entity_type, fragment_key;
COMMENT ON VIEW neotoma.unknown_fields IS
  'Unknown fields kept in raw_fragments and not yet migrated, by entity type: occurrences, distinct sources, usual type.';

-- The schema each entity type resolves to for this session: the user's own
-- active variant when there is one, else the global one.
CREATE VIEW neotoma.active_schemas WITH (security_invoker = true) AS
SELECT DISTINCT ON (entity_type)
       entity_type, schema_version,
       CASE WHEN user_id = neotoma.global_user_id() THEN 'global' ELSE 'user' END AS scope,
       description, definition, created_at
FROM neotoma.entity_schemas
WHERE active AND user_id IN (neotoma.global_user_id(), neotoma.current_user_id())
ORDER BY entity_type, user_id = neotoma.global_user_id();
COMMENT ON VIEW neotoma.active_schemas IS
  'The active schema of each entity type as this session resolves it (its user''s variant first, else global).';

-- The fields of those schemas, one row each.
CREATE VIEW neotoma.schema_fields WITH (security_invoker = true) AS
SELECT a.entity_type, a.schema_version, a.scope, f.key AS field,
       f.value ->> 'type' AS field_type,
       coalesce((f.value ->> 'required')::boolean, false) AS required,
       coalesce(a.definition -> 'merge_policies' -> f.key ->> 'strategy', 'last_write') AS merge_strategy
FROM neotoma.active_schemas a
CROSS JOIN LATERAL jsonb_each(a.definition -> 'fields') AS f;
COMMENT ON VIEW neotoma.schema_fields IS
  'One row per field of each active schema: type, required, merge strategy (last_write when none is set).';
