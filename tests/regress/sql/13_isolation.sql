-- Row level security keeps users apart, through every action and every table.
\ir include/setup.sql
BEGIN;

-- User A's invoice and person, as 10_store stored them.
SET neotoma.user_id = 'a0000000-0000-0000-0000-00000000000a';
SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "invoice", "invoice_number": "INV-001", "vendor_name": "Acme Corp",
   "amount_due": 100, "currency": "EUR", "invoice_date": "2024-01-15", "po_number": "PO-9"},
  {"entity_type": "person", "name": "Alice Smith", "email": "Alice@Example.com"}],
  "provenance": {"extracted_at": "2024-01-16T10:00:00Z", "extractor_version": "test/1"}}')->'entities') AS stored;
RESET neotoma.user_id;

SET ROLE neotoma_regress_agent;

-- User B stores its own invoice with the very same content as A's.
SET neotoma.user_id = 'b0000000-0000-0000-0000-00000000000b';
SELECT r->'deduplicated' AS dedup_across_users, r->'interpretation'->'entities_created' AS created
FROM neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "INV-001",
  "vendor_name": "Acme Corp", "amount_due": 120, "po_number": "PO-B"}]}') AS r;

-- B sees only its own rows, in every table.
SELECT (SELECT count(*) FROM neotoma.sources) AS sources,
       (SELECT count(*) FROM neotoma.entities) AS entities,
       (SELECT count(*) FROM neotoma.observations) AS observations,
       (SELECT count(*) FROM neotoma.entity_snapshots) AS snapshots,
       (SELECT count(*) FROM neotoma.raw_fragments) AS fragments,
       (SELECT count(*) FROM neotoma.interpretation_runs) AS runs,
       (SELECT count(*) FROM neotoma.entity_identifiers) AS identifiers;

-- ...and through every action: A's entity ids are unknown to B.
RESET ROLE;
RESET neotoma.user_id;
SELECT id AS a_invoice FROM neotoma.entities
WHERE user_id = 'a0000000-0000-0000-0000-00000000000a' AND entity_type = 'invoice' \gset
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = 'b0000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('retrieve_entity_snapshot', jsonb_build_object('entity_id', :'a_invoice'))) AS snapshot,
       error_code(try_action('list_observations', jsonb_build_object('entity_id', :'a_invoice'))) AS observations,
       error_code(try_action('retrieve_field_provenance', jsonb_build_object('entity_id', :'a_invoice', 'field', 'amount_due'))) AS provenance,
       error_code(try_action('correct', jsonb_build_object('entity_id', :'a_invoice', 'entity_type', 'invoice', 'field', 'amount_due', 'value', 1))) AS correct;
SELECT neotoma.retrieve_entities('{}')->'total' AS entities_b_sees,
       neotoma.retrieve_entity_by_identifier('{"identifier": "alice@example.com"}')->'total' AS alice_for_b;

-- B cannot write rows for A, even directly.
\set SHOW_CONTEXT never
SAVEPOINT write_for_a;
INSERT INTO neotoma.sources (user_id, id, content_hash, source_type)
VALUES ('a0000000-0000-0000-0000-00000000000a', gen_random_uuid(), 'x', 'structured');
ROLLBACK TO SAVEPOINT write_for_a;

-- A user_id argument that differs from the established user is refused.
SELECT try_action('retrieve_entities', '{"user_id": "a0000000-0000-0000-0000-00000000000a"}');
SELECT error_code(try_action('store', '{"user_id": "a0000000-0000-0000-0000-00000000000a",
  "entities": [{"entity_type": "note", "content": "sneaky"}]}')) AS store_as_a;
RESET neotoma.user_id;

-- With no established user, user_id names the user (a trusted session)...
SELECT neotoma.retrieve_entities('{"user_id": "a0000000-0000-0000-0000-00000000000a"}')->'total' AS a_total,
       neotoma.retrieve_entities('{"user_id": "b0000000-0000-0000-0000-00000000000b"}')->'total' AS b_total;
-- ...and the action does not leave its user behind.
SELECT neotoma.current_user_id() AS after_action;
-- Without either, the action says what is missing.
SELECT try_action('retrieve_entities', '{}');
RESET ROLE;
ROLLBACK;
