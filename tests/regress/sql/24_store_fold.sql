-- A store folds its own observations and writes them with their snapshots
-- in one statement; every other insert of observations (an analyst's, in
-- SQL) is folded by the trigger. Both as a user under row level security,
-- checked against verify(), which recomputes every snapshot from scratch.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
\set SHOW_CONTEXT never
SET neotoma.user_id = '24000000-0000-0000-0000-000000000024';

-- Outside a store's own write, the trigger folds.
SELECT neotoma._store_folding() AS folding_outside_a_store;

-- A new entity, then a second observation of it: the snapshot, its
-- identifiers and its timeline events follow the latest values.
SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "F-24",
  "vendor_name": "Fold Ltd", "amount_due": 10, "invoice_date": "2024-03-01"}]}')
  ->'entities'->0->>'entity_id' AS invoice \gset
SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "F-24",
  "vendor_name": "Fold Ltd", "amount_due": 12, "invoice_date": "2024-03-02"}]}')
  ->'interpretation'->'entities_created' AS created_again;
SELECT snapshot->'amount_due' AS amount, snapshot->'vendor_name' AS vendor, observation_count
FROM neotoma.entity_snapshots WHERE entity_id = :'invoice';
SELECT event_type, event_timestamp::date FROM neotoma.timeline_events WHERE entity_id = :'invoice';
SELECT field, value FROM neotoma.entity_identifiers WHERE entity_id = :'invoice' ORDER BY field, value;
-- The run's counts and status were written with the rows.
SELECT status, entities_created, observations_created, finished_at IS NOT NULL AS finished
FROM neotoma.interpretation_runs ORDER BY started_at, id;

-- An observation inserted in SQL by the user is folded by the trigger.
INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, content)
VALUES ('24000000-0000-0000-0000-000000000024', '24000000-0000-0000-0000-0000000000f0',
        'sql-observation', 'structured', '{}');
INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id,
                                  observed_at, source_priority, fields)
VALUES ('24000000-0000-0000-0000-000000000024', '24000000-0000-0000-0000-0000000000f1', :'invoice',
        'invoice', '1.0', '24000000-0000-0000-0000-0000000000f0', now(), 500, '{"amount_due": 99}');
SELECT snapshot->'amount_due' AS amount_after_sql_insert, observation_count
FROM neotoma.entity_snapshots WHERE entity_id = :'invoice';

-- A batch where two entities are the same one, and an unknown field: one
-- entity, two observations, a raw fragment, in one store.
SELECT s->'interpretation'->'entities_created' AS created, s->'interpretation'->'observations_created' AS observed,
       s->'unknown_fields_count' AS unknown
FROM neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Fay Fold", "email": "fay@fold.example"},
  {"entity_type": "person", "name": "Fay F.", "email": "fay@fold.example", "shoe_size": 38}]}') AS s;
SELECT snapshot->'name' AS name, observation_count FROM neotoma.entity_snapshots s
JOIN neotoma.entities e USING (user_id) WHERE e.id = s.entity_id AND e.identity_key = 'email=fay@fold.example';
SELECT fragment_key, fragment_value FROM neotoma.raw_fragments ORDER BY fragment_key;

-- A store of an entity merged into another observes the merge target.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Gil Fold", "email": "gil@fold.example"}]}') IS NOT NULL AS stored;
SELECT id AS fay FROM neotoma.entities WHERE identity_key = 'email=fay@fold.example' \gset
SELECT id AS gil FROM neotoma.entities WHERE identity_key = 'email=gil@fold.example' \gset
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'gil', 'to_entity_id', :'fay'))->'observations_moved' AS moved;
SELECT (neotoma.store('{"entities": [{"entity_type": "person", "name": "Gil After Merge", "email": "gil@fold.example", "phone": "+1 555 0100"}]}')
        ->'entities'->0->>'entity_id') = :'fay' AS observed_the_target;
SELECT snapshot->'phone' AS phone FROM neotoma.entity_snapshots WHERE entity_id = :'fay';

-- Derived rows stay the extension's to write: the user cannot, and the
-- store's switch to the owner did not outlive its statement.
SELECT current_user AS role_after_stores;
SAVEPOINT s;
UPDATE neotoma.entity_snapshots SET observation_count = 0;
ROLLBACK TO SAVEPOINT s;
RESET ROLE;

-- Every snapshot is the fold of its observations.
SELECT neotoma.verify()->'ok' AS verified;
ROLLBACK;
