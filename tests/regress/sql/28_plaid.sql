-- Plaid in SQL: the actions check requests and answer the gateway's work;
-- record_plaid_item / record_plaid_sync record what the gateway got, one
-- transaction each. The sealed access token goes to the gateway's role only
-- and no user can select it; users see only their own items.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
CREATE ROLE plaid_regress_user NOSUPERUSER NOBYPASSRLS;
GRANT neotoma_user TO plaid_regress_user;
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '28000000-0000-0000-0000-00000000000a';

-- The work of each action, for the gateway.
SELECT neotoma.plaid_create_link_token('{"client_name": "Memory"}')->'external' AS link;
SELECT neotoma.plaid_exchange_public_token('{"public_token": "public-sandbox-1", "trigger_initial_sync": true}')->'external' AS exchange;

-- The gateway records the item it linked: accounts and institution as entities.
SELECT i->'plaid_item'->>'item_id' AS item_id, i->'plaid_item'->>'institution_name' AS institution,
       jsonb_path_query_array(i, '$.plaid_item.accounts[*].id') AS accounts
FROM neotoma.record_plaid_item('{"item_id": "item-1", "institution_id": "ins_1", "institution_name": "Platypus Bank",
  "products": ["transactions"], "access_token_ciphertext": "TlQxc2VhbGVkLXRva2Vu",
  "accounts": [{"account_id": "acc-1", "name": "Checking", "type": "depository", "subtype": "checking", "mask": "0000",
                "balances": {"current": 100.5, "iso_currency_code": "USD"}}]}') AS i;
SELECT i->>'item_id' AS item_id, i->>'institution_name' AS institution, i->'products' AS products, i->>'status' AS status,
       i ? 'access_token_ciphertext' AS token_listed
FROM jsonb_array_elements(neotoma.plaid_list_items('{}')->'items') AS i;
SELECT e->>'entity_type' AS type, e->'snapshot'->>'name' AS name
FROM jsonb_array_elements((neotoma.retrieve_entities('{"entity_type": "account"}'))->'entities') AS e;

-- A sync's work carries the sealed token to the gateway's role.
SELECT w->>'item_id' AS item_id, w->>'cursor' AS cursor, w->>'access_token_ciphertext' AS sealed
FROM jsonb_array_elements(neotoma.plaid_sync('{"item_id": "item-1"}')->'external'->'items') AS w;

-- Two pages: three added, then one modified and one removed. (Within one
-- recording a later page wins; in this one test transaction the removal is
-- on the third page so that it comes after the first recording's pages.)
SELECT s->>'status' AS status, s->'summary' AS summary, s->>'next_cursor' AS next_cursor
FROM neotoma.record_plaid_sync(jsonb_build_object(
  'plaid_item_id', (neotoma.plaid_list_items('{}')->'items'->0->>'id'), 'cursor_before', NULL, 'next_cursor', 'c1',
  'accounts', '[{"account_id": "acc-1", "name": "Checking"}]'::jsonb,
  'pages', '[{"added": [{"transaction_id": "t1", "account_id": "acc-1", "amount": 5, "date": "2026-11-01", "name": "Cafe"},
                        {"transaction_id": "t2", "account_id": "acc-1", "amount": 7, "date": "2026-11-02", "name": "Deli"}]},
             {"added": [{"transaction_id": "t3", "account_id": "acc-1", "amount": 9, "date": "2026-11-03", "name": "Bar"}]}]'::jsonb)) AS s;
SELECT s->'summary' AS summary
FROM neotoma.record_plaid_sync(jsonb_build_object(
  'plaid_item_id', (neotoma.plaid_list_items('{}')->'items'->0->>'id'), 'cursor_before', 'c1', 'next_cursor', 'c2',
  'pages', '[{}, {}, {"modified": [{"transaction_id": "t2", "account_id": "acc-1", "amount": 7.5, "date": "2026-11-02", "name": "Deli"}],
                      "removed": [{"transaction_id": "t3"}]}]'::jsonb)) AS s;
-- The removed one is deleted: out of the listing, its history kept.
SELECT e->'snapshot'->>'transaction_id' AS tx, e->'snapshot'->>'amount' AS amount, e->'snapshot'->>'status' AS status
FROM jsonb_array_elements((neotoma.retrieve_entities('{"entity_type": "transaction"}'))->'entities') AS e
ORDER BY 1;
SELECT e->'snapshot'->>'transaction_id' AS tx, e->'snapshot'->>'status' AS status, e->>'deleted_reason' AS deleted
FROM jsonb_array_elements((neotoma.retrieve_entities('{"entity_type": "transaction", "include_deleted": true}'))->'entities') AS e
ORDER BY 1;
-- A sync recorded from a stale cursor (another sync ran meanwhile) records nothing.
SELECT error_code(try_action('record_plaid_sync', jsonb_build_object(
  'plaid_item_id', (neotoma.plaid_list_items('{}')->'items'->0->>'id'), 'cursor_before', 'c1', 'next_cursor', 'c9',
  'pages', '[{"added": [{"transaction_id": "t9", "amount": 1}]}]'::jsonb))) AS stale;
SELECT count(*) AS t9 FROM neotoma.entity_snapshots WHERE snapshot->>'transaction_id' = 't9';

-- Bad requests.
SELECT args, error_code(try_action(action, args)) AS code
FROM (VALUES
  ('plaid_sync', '{}'::jsonb),
  ('plaid_sync', '{"plaid_item_id": "nope"}'),
  ('plaid_sync', '{"item_id": "item-unknown"}'),
  ('plaid_exchange_public_token', '{"public_token": ""}'),
  ('plaid_create_link_token', '{"products": []}'),
  ('plaid_create_link_token', '{"redirect_uri": "ftp://x"}'),
  ('record_plaid_sync', '{"plaid_item_id": "28000000-0000-0000-0000-000000000999"}'),
  ('record_plaid_item', '{"item_id": "x", "access_token_ciphertext": "%%%"}')
) AS t(action, args);

-- Another user sees nothing of it.
SET neotoma.user_id = '28000000-0000-0000-0000-00000000000b';
SELECT neotoma.plaid_list_items('{}') AS other_user_items;
SELECT error_code(try_action('plaid_sync', '{"item_id": "item-1"}')) AS other_user_sync;

-- A user (not the gateway) gets the work without the sealed token, and
-- cannot select the secret column at all.
RESET ROLE;
RESET neotoma.user_id;
SET ROLE plaid_regress_user;
SET request.jwt.claims = '{"sub": "28000000-0000-0000-0000-00000000000a", "role": "authenticated"}';
SELECT w->>'item_id' AS item_id, w->'access_token_ciphertext' AS sealed
FROM jsonb_array_elements(neotoma.plaid_sync('{"item_id": "item-1"}')->'external'->'items') AS w;
SELECT count(*) AS own_items FROM neotoma.connectors;
SAVEPOINT s;
SELECT secret FROM neotoma.connectors;
ROLLBACK TO SAVEPOINT s;
RESET ROLE;
ROLLBACK;
