-- Provider imports in SQL: the catalog, connectors (secrets sealed by the
-- gateway, readable by no user), the work of a sync for the gateway, and
-- record_provider_sync storing fetched e-mails as message/rfc822 sources,
-- one transaction per run.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
CREATE ROLE providers_regress_user NOSUPERUSER NOBYPASSRLS;
GRANT neotoma_user TO providers_regress_user;
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '29000000-0000-0000-0000-00000000000a';

SELECT p->>'id' AS id, p->>'status' AS status, p->>'auth_type' AS auth, p->'capabilities' AS capabilities
FROM jsonb_array_elements(neotoma.list_provider_catalog('{}')->'providers') AS p;

-- connect_provider answers the work: the login to check, the password to seal.
SELECT neotoma.connect_provider('{"provider": "imap", "settings": {"host": "mail.example.com", "username": "ada",
  "password": "pw"}}')->'external' AS imap_work;
SELECT neotoma.connect_provider('{"provider": "gmail", "settings": {"username": "ada@gmail.com",
  "password": "app-pw"}}')->'external'->'settings' AS gmail_settings;

SELECT args, error_code(r) AS code, r->'error'->'details'->>'field' AS field
FROM (VALUES
  ('{"provider": "myspace", "settings": {}}'::jsonb),
  ('{"provider": "x", "settings": {}}'),
  ('{"provider": "plaid", "settings": {}}'),
  ('{"provider": "imap"}'),
  ('{"provider": "imap", "settings": {"host": "h", "username": "u", "password": "p", "port": "993"}}'),
  ('{"provider": "gmail", "settings": {"username": "u", "password": "p", "tls": false}}')
) AS t(args), LATERAL try_action('connect_provider', args) AS r;

-- The gateway records the connector it checked.
SELECT c->>'provider' AS provider, c->>'external_id' AS external_id, c->'settings' AS settings
FROM neotoma.record_connector('{"provider": "imap", "external_id": "ada@127.0.0.1:1143/INBOX",
  "settings": {"host": "127.0.0.1", "port": 1143, "tls": false, "username": "ada", "mailbox": "INBOX"},
  "secret_ciphertext": "TlQxc2VhbGVk"}') AS c;
SELECT error_code(try_action('record_connector', '{"provider": "imap", "external_id": "eve@elsewhere:1/INBOX",
  "settings": {"host": "127.0.0.1", "port": 1143, "tls": false, "username": "ada", "mailbox": "INBOX"},
  "secret_ciphertext": "TlQxc2VhbGVk"}')) AS external_id_must_match;
SELECT c->>'provider' AS provider, c->>'status' AS status, c ? 'secret' AS secret_listed
FROM jsonb_array_elements(neotoma.list_connectors('{}')->'connectors') AS c;

-- A sync's work: each connector, its cursor, its sealed password (for the
-- gateway's role), the paging.
SELECT w->'limit' AS lim, w->'max_pages' AS pages, c->>'cursor' AS cursor, c->>'password_ciphertext' AS sealed
FROM neotoma.sync_provider_imports('{"provider": "imap", "limit": 20, "max_pages": 2}') AS s,
     LATERAL (SELECT s->'external' AS w) x, jsonb_array_elements(w->'connectors') AS c;
SELECT args, error_code(try_action('sync_provider_imports', args)) AS code
FROM (VALUES
  ('{"provider": "gmail"}'::jsonb),
  ('{"provider": "imap", "connector_id": "29000000-0000-0000-0000-000000000999"}'),
  ('{"provider": "imap", "connector_id": "nope"}'),
  ('{"provider": "imap", "limit": 501}'),
  ('{"provider": "imap", "sync_type": "sometimes"}'),
  ('{"provider": "myspace"}')
) AS t(args);

-- The gateway records what it fetched: two messages, each an e-mail source
-- read by the e-mail interpreter; the cursor moves.
SELECT r->>'status' AS status, r->'stats' AS stats, r->>'provider' AS provider
FROM neotoma.record_provider_sync(jsonb_build_object('provider', 'imap', 'started_at', '2026-11-24T08:00:00Z',
  'connectors', jsonb_build_array(jsonb_build_object(
    'connector_id', neotoma.list_connectors('{}')->'connectors'->0->>'connector_id', 'cursor_before', NULL,
    'cursor_after', '7:2', 'messages', jsonb_build_array(
      jsonb_build_object('uid', 1, 'content', encode(convert_to(E'From: Ada <ada@example.com>\r\nTo: me@example.com\r\nSubject: Hello\r\nMessage-ID: <m1@example.com>\r\n\r\nFirst.\r\n', 'UTF8'), 'base64')),
      jsonb_build_object('uid', 2, 'content', encode(convert_to(E'From: Bob <bob@example.com>\r\nTo: me@example.com\r\nSubject: Again\r\nMessage-ID: <m2@example.com>\r\n\r\nSecond.\r\n', 'UTF8'), 'base64'))))))) AS r;
SELECT s.mime_type, s.original_filename FROM neotoma.sources s
WHERE s.user_id = '29000000-0000-0000-0000-00000000000a' AND s.source_type = 'file' ORDER BY 2;
SELECT e->'snapshot'->>'title' AS title FROM jsonb_array_elements(neotoma.retrieve_entities('{"entity_type": "note"}')->'entities') AS e ORDER BY 1;
SELECT c->>'status' AS status, c->>'last_successful_sync' IS NOT NULL AS synced
FROM jsonb_array_elements(neotoma.list_connectors('{"provider": "imap"}')->'connectors') AS c;
SELECT w->>'cursor' AS cursor
FROM jsonb_array_elements(neotoma.sync_provider_imports('{"provider": "imap"}')->'external'->'connectors') AS w;
-- From a stale cursor (another sync ran meanwhile): nothing recorded.
SELECT error_code(try_action('record_provider_sync', jsonb_build_object('provider', 'imap', 'started_at', '2026-11-24T08:01:00Z',
  'connectors', jsonb_build_array(jsonb_build_object(
    'connector_id', neotoma.list_connectors('{}')->'connectors'->0->>'connector_id', 'cursor_before', NULL, 'cursor_after', '7:9'))))) AS stale;
-- A connector that could not be read: the run fails, the connector says why.
SELECT r->>'status' AS status, r->'stats' AS stats, r->>'error' AS error
FROM neotoma.record_provider_sync(jsonb_build_object('provider', 'imap', 'started_at', '2026-11-24T08:02:00Z',
  'connectors', jsonb_build_array(jsonb_build_object(
    'connector_id', neotoma.list_connectors('{}')->'connectors'->0->>'connector_id', 'cursor_before', '7:2',
    'error', 'login refused')))) AS r;
SELECT c->>'status' AS status, c->>'last_error' AS last_error
FROM jsonb_array_elements(neotoma.list_connectors('{}')->'connectors') AS c;
-- A plaid run reports the counts of its plaid_sync.
SELECT r->>'status' AS status, r->'stats' AS stats
FROM neotoma.record_provider_sync('{"provider": "plaid", "started_at": "2026-11-24T08:03:00Z",
  "stats": {"records_added": 5, "records_updated": 2, "errors": 0}}') AS r;
SELECT provider, status, stats FROM neotoma.sync_runs ORDER BY started_at;

-- Another user reaches none of it.
SET neotoma.user_id = '29000000-0000-0000-0000-00000000000b';
SELECT neotoma.list_connectors('{}') AS other_user;
SELECT error_code(try_action('sync_provider_imports', '{"provider": "imap"}')) AS other_user_sync;
SELECT count(*) AS other_user_runs FROM neotoma.sync_runs;

-- A user (not the gateway): no sealed password in the work, no secret column.
RESET ROLE;
RESET neotoma.user_id;
SET ROLE providers_regress_user;
SET request.jwt.claims = '{"sub": "29000000-0000-0000-0000-00000000000a", "role": "authenticated"}';
SELECT c->'password_ciphertext' AS sealed
FROM jsonb_array_elements(neotoma.sync_provider_imports('{"provider": "imap"}')->'external'->'connectors') AS c;
SAVEPOINT s;
SELECT secret FROM neotoma.connectors;
ROLLBACK TO SAVEPOINT s;
-- Nor record what a provider said (only the gateway does, after its checks),
-- nor rewrite a connector's settings.
SELECT action, error_code(try_action(action, args)) AS code
FROM (VALUES
  ('record_provider_sync', '{"provider": "imap", "started_at": "2026-11-24T09:00:00Z"}'::jsonb),
  ('record_connector', '{"provider": "imap", "external_id": "a@b:1/INBOX", "settings": {}, "secret_ciphertext": "eA=="}'),
  ('record_plaid_item', '{"item_id": "x", "access_token_ciphertext": "eA=="}'),
  ('record_plaid_sync', '{"plaid_item_id": "29000000-0000-0000-0000-000000000001"}')
) AS t(action, args);
SAVEPOINT s2;
UPDATE neotoma.connectors SET settings = '{"host": "10.0.0.1"}';
ROLLBACK TO SAVEPOINT s2;
RESET ROLE;
ROLLBACK;
