-- Data stored through the old version's API (as a trusted superuser naming
-- the user), before the upgrade.
SELECT neotoma.store('{"user_id": "a0000000-0000-0000-0000-00000000000a", "entities": [
  {"entity_type": "person", "name": "Ann Lee", "email": "ann@example.com"},
  {"entity_type": "invoice", "invoice_number": "INV-1", "vendor_name": "Acme", "amount_due": 10, "date_due": "2024-02-01", "note": "kept"}]}') IS NOT NULL AS stored;
SELECT neotoma.correct(jsonb_build_object('user_id', 'a0000000-0000-0000-0000-00000000000a',
  'entity_id', (SELECT id FROM neotoma.entities WHERE entity_type = 'invoice'), 'entity_type', 'invoice',
  'field', 'amount_due', 'value', 12)) IS NOT NULL AS corrected;
SELECT neotoma.create_relationship(jsonb_build_object('user_id', 'a0000000-0000-0000-0000-00000000000a',
  'relationship_type', 'REFERS_TO',
  'source_entity_id', (SELECT id FROM neotoma.entities WHERE entity_type = 'invoice'),
  'target_entity_id', (SELECT id FROM neotoma.entities WHERE entity_type = 'person'))) IS NOT NULL AS related;
SELECT neotoma.create_api_token('a0000000-0000-0000-0000-00000000000a', 'oldhash', 'old token') IS NOT NULL AS token;
-- The new library serves the old version's listings before the update
-- (their totals counted from the entities).
DO $$
BEGIN
  IF (neotoma.retrieve_entities('{"user_id": "a0000000-0000-0000-0000-00000000000a", "entity_type": "person"}')->>'total')::int <> 1
     OR (neotoma.retrieve_entities('{"user_id": "a0000000-0000-0000-0000-00000000000a"}')->>'total')::int <> 2 THEN
    RAISE EXCEPTION 'listing totals before the update are wrong';
  END IF;
END $$;
-- Search before the update: a name with a typo is found from 0.8.0 on (the
-- queries read as that version's SQL has them); before, the answer says to
-- update.
DO $$
DECLARE r jsonb;
BEGIN
  r := neotoma.retrieve_entities('{"user_id": "a0000000-0000-0000-0000-00000000000a", "search": "Ann Lea", "search_mode": "lexical"}');
  IF (r->>'total')::int <> 1 THEN
    RAISE EXCEPTION 'search before the update found % entities', r->'total';
  END IF;
EXCEPTION WHEN OTHERS THEN
  IF SQLERRM NOT LIKE '%run ALTER EXTENSION neotoma UPDATE%' THEN
    RAISE;
  END IF;
END $$;
-- Snapshots as a library before 0.11.0 folded them: no rating in
-- field_provenance (the update adds each field's default).
DO $$ BEGIN
  IF to_regclass('neotoma.observation_contests') IS NULL THEN
    UPDATE neotoma.entity_snapshots
    SET field_provenance = (SELECT coalesce(jsonb_object_agg(f.key, f.value - 'confidence'), '{}')
                            FROM jsonb_each(field_provenance) f);
  END IF;
END $$;
-- From 0.10.0 on, today's library finds them consistent before the update too.
DO $$ BEGIN
  IF to_regclass('neotoma.annotations') IS NOT NULL AND NOT (neotoma.verify()->>'ok')::boolean THEN
    RAISE EXCEPTION 'verify() before the update: %', neotoma.verify();
  END IF;
END $$;
