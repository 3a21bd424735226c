-- After the upgrade: the old data is there and consistent, the old token
-- still authenticates (as a user-scoped token), and the database works as
-- a current one, with row level security for an ordinary role.
\pset format unaligned
SELECT neotoma.verify()->'ok' AS verified;
SELECT user_id, scope, expires_at, id IS NOT NULL AS has_id FROM neotoma.authenticate_token('oldhash');
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_upgrade_agent') THEN
    CREATE ROLE neotoma_upgrade_agent NOSUPERUSER NOBYPASSRLS;
    GRANT neotoma_service TO neotoma_upgrade_agent;
  END IF;
END $$;
SET ROLE neotoma_upgrade_agent;
SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SELECT neotoma.retrieve_entities('{}')->'total' AS entities;
SELECT snapshot->'amount_due' AS corrected_amount FROM neotoma.entity_snapshots s JOIN neotoma.entities e ON e.id = s.entity_id
WHERE e.entity_type = 'invoice';
SELECT neotoma.list_relationships(jsonb_build_object('entity_id', (SELECT id FROM neotoma.entities WHERE entity_type = 'invoice')))->'total' AS relationships;
SELECT neotoma.list_timeline_events('{}')->'total' AS events;
-- The update folded the old snapshots again: a field two sources gave two
-- values (the corrected amount) is listed from the index of disagreements.
SELECT jsonb_path_query_array(neotoma.list_contradictions('{}'), '$.contradictions[*].field') AS contradicted;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ann Lee", "email": "ann@example.com", "phone": "+1 555 010 2030"}]}')
  ->'entities'->0->>'entity_id' = (SELECT id FROM neotoma.entities WHERE entity_type = 'person') AS same_person;
-- Snapshots folded before ratings existed say their defaults (A1 for the
-- correction, F3 otherwise); a contest of an old observation refolds it.
SELECT string_agg(DISTINCT f.key || '=' || (f.value->>'confidence'), ' ' ORDER BY f.key || '=' || (f.value->>'confidence')) AS ratings
FROM neotoma.entity_snapshots s JOIN neotoma.entities e ON e.id = s.entity_id, jsonb_each(s.field_provenance) f
WHERE e.entity_type = 'invoice' AND f.key IN ('amount_due', 'invoice_number');
SELECT neotoma.contest(jsonb_build_object('observation_id', (SELECT o.id FROM neotoma.observations o JOIN neotoma.entities e ON e.id = o.entity_id
                                                             WHERE e.entity_type = 'invoice' AND o.kind <> 'correction' ORDER BY o.id LIMIT 1),
                                          'reason', 'checked after the upgrade'))->>'confidence' AS contested;
-- Everything stored before lies in default, and a new workspace works.
SELECT string_agg(DISTINCT workspace, ',') AS stored_in FROM neotoma.entities;
SELECT neotoma.store('{"workspace": "after", "entities": [{"entity_type": "person", "name": "Ann Lee", "email": "ann@example.com"}]}')
  ->'entities'->0->>'entity_id' <> (SELECT id FROM neotoma.entities WHERE entity_type = 'person' AND workspace = 'default') AS another_ann;
SELECT string_agg(w->>'name' || '=' || (w->>'entities'), ' ') AS workspaces FROM jsonb_array_elements(neotoma.list_workspaces()->'workspaces') w;
-- The other servers' tool sets read what was stored before: the person
-- through the memory set; graphmem numbers it and canonicalizes types.
SELECT jsonb_path_query_array(neotoma.memory_open_nodes('{"names": ["Ann Lee"]}'), '$.entities[*].entityType') AS memory_sees;
SELECT neotoma.graphmem_create_entity('{"name": "Upgrade check", "entity_type": "repo"}')->'entity'->>'entity_type' AS canonical,
       (SELECT count(*) FROM neotoma.entity_type_mappings WHERE variant IN ('repo', 'bug', 'widget')) AS seeded;
SET neotoma.user_id = 'b0000000-0000-0000-0000-00000000000b';
SELECT neotoma.retrieve_entities('{}')->'total' AS other_user_sees;
RESET ROLE;
SELECT neotoma.verify()->'ok' AS still_verified;
