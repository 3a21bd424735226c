-- Files from SQL: storage, limits, quota, interpretation, signed URLs.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '30000000-0000-0000-0000-000000000003';
\set SHOW_CONTEXT never
CREATE TEMP TABLE f AS SELECT encode(convert_to(E'title,content\nA,first\nB,second\n', 'UTF8'), 'base64') AS csv;

SELECT r->'deduplicated' AS dedup, r->'file_size' AS size, r->'mime_type' AS mime,
       r->'interpretation'->'status' AS status, r->'interpretation'->'observations_created' AS observations,
       r->>'storage_path' = 'sources/' || (r->>'source_id') AS storage_path
FROM neotoma.store(jsonb_build_object('file_content', (SELECT csv FROM f), 'original_filename', 'notes.csv',
                                      'interpretation_config', '{"entity_type": "note"}'::jsonb)) r;
SELECT r->'deduplicated' AS dedup, r->'interpretation' AS interpretation, jsonb_array_length(r->'entities') AS entities
FROM neotoma.store(jsonb_build_object('file_content', (SELECT csv FROM f))) r;
SELECT source_type, mime_type, original_filename, file_size FROM neotoma.sources;
SELECT length(content) AS bytes FROM neotoma.files;
SELECT interpreter, status, config, entities_created, observations_created FROM neotoma.interpretation_runs;

-- interpret: false stores without interpreting; a later store with interpret: true interprets.
SELECT neotoma.store(jsonb_build_object('file_content', encode('hello world'::bytea, 'base64'), 'interpret', false))->'interpretation' AS deferred;
SELECT neotoma.store(jsonb_build_object('file_content', encode('hello world'::bytea, 'base64'), 'interpret', true))->'interpretation'->'status' AS now_interpreted;

-- Limits and bad input.
-- Limits are the operator's to set, not the user's.
SAVEPOINT user_sets_limit;
SET neotoma.max_file_bytes = 10;
ROLLBACK TO SAVEPOINT user_sets_limit;
SET ROLE neotoma_regress_operator;
SET neotoma.max_file_bytes = 10;
SET ROLE neotoma_regress_agent;
SELECT try_action('store', jsonb_build_object('file_content', encode('more than ten bytes'::bytea, 'base64')));
SET ROLE neotoma_regress_operator;
RESET neotoma.max_file_bytes;
SET ROLE neotoma_regress_agent;
SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field
FROM (VALUES ('{"file_content": "@@@"}'::jsonb), ('{"file_content": ""}'), ('{"file_path": "/etc/passwd"}'),
             ('{"file_content": "aGk=", "mime_type": "nonsense"}'),
             ('{"file_content": "aGk=", "entities": [{"entity_type": "note", "content": "x"}]}')) t(args),
     LATERAL try_action('store', args) r;

-- Quota: interpretation runs per user and month.
SET ROLE neotoma_regress_operator;
SET neotoma.interpretation_quota = 2;
SET ROLE neotoma_regress_agent;
SELECT error_code(try_action('store', jsonb_build_object('file_content', encode('third file'::bytea, 'base64')))) AS third_run,
       (SELECT count(*) FROM neotoma.sources WHERE file_size = length('third file')) AS nothing_half_written;
SELECT error_code(try_action('reinterpret', jsonb_build_object('source_id', (SELECT id FROM neotoma.sources WHERE mime_type = 'text/csv'),
                                                               'interpretation_config', '{"code_version": "9"}'::jsonb))) AS reinterpret;
SET ROLE neotoma_regress_operator;
RESET neotoma.interpretation_quota;
SET ROLE neotoma_regress_agent;

-- Signed URLs: relative without a public URL, verified by neotoma.signed_file.
SELECT neotoma.retrieve_file_url(jsonb_build_object('file_path', (SELECT storage_path FROM neotoma.sources WHERE mime_type = 'text/csv')))->>'signed_url' AS url \gset
SELECT :'url' LIKE '/files/30000000-0000-0000-0000-000000000003/%?expires=%&kid=%&sig=%' AS shape;
CREATE TEMP TABLE u AS SELECT
  split_part(split_part(:'url', '?', 1), '/', 4)::uuid AS source,
  substring(:'url' FROM 'expires=([0-9]+)')::bigint AS expires,
  substring(:'url' FROM 'kid=([0-9a-f-]+)')::uuid AS kid,
  substring(:'url' FROM 'sig=([0-9a-f]+)') AS sig;
SELECT (SELECT mime_type FROM neotoma.signed_file('30000000-0000-0000-0000-000000000003', source, expires, kid, sig)) AS valid,
       (SELECT count(*) FROM neotoma.signed_file('30000000-0000-0000-0000-000000000003', source, expires + 1, kid, sig)) AS other_expiry,
       (SELECT count(*) FROM neotoma.signed_file('30000000-0000-0000-0000-000000000003', source, expires, kid, repeat('0', 64))) AS tampered,
       (SELECT count(*) FROM neotoma.signed_file('40000000-0000-0000-0000-000000000004', source, expires, kid, sig)) AS other_user,
       (SELECT count(*) FROM neotoma.signed_file('30000000-0000-0000-0000-000000000003', source, 1, kid, sig)) AS expired
FROM u;
SELECT error_code(try_action('retrieve_file_url', '{"file_path": "sources/00000000-0000-0000-0000-000000000000"}')) AS missing,
       error_code(try_action('retrieve_file_url', jsonb_build_object('file_path', (SELECT id FROM neotoma.sources WHERE mime_type = 'text/csv'), 'expires_in', 0))) AS bad_expiry;
-- Another user cannot sign this user's file.
SET neotoma.user_id = '40000000-0000-0000-0000-000000000004';
SELECT error_code(try_action('retrieve_file_url', jsonb_build_object('file_path', (SELECT source FROM u)))) AS other_user_signs;
SELECT count(*) AS other_user_sees_files FROM neotoma.files;
SET neotoma.user_id = '30000000-0000-0000-0000-000000000003';
-- Signing keys and tokens are not readable.
SELECT try_action('get_version') ? 'extension_version' AS still_fine;
RESET ROLE;
SET ROLE neotoma_regress_agent;
SAVEPOINT read_keys;
SELECT count(*) FROM neotoma.signing_keys;
ROLLBACK TO SAVEPOINT read_keys;
RESET ROLE;
SET ROLE neotoma_regress_agent;
-- A file stored with a source_priority: its interpreted observations carry
-- it, on the first interpretation as on a reinterpretation.
SET neotoma.user_id = '40000000-0000-0000-0000-000000000004';
SELECT neotoma.store(jsonb_build_object('source_priority', 700, 'mime_type', 'text/csv',
  'file_content', encode(convert_to(E'title,content\nP,prioritised\n', 'UTF8'), 'base64')))->>'source_id' AS prio_source \gset
SELECT neotoma.reinterpret(jsonb_build_object('source_id', :'prio_source',
  'interpretation_config', jsonb_build_object('code_version', '2')))->'status' AS reinterpreted;
SELECT array_agg(DISTINCT source_priority) AS observation_priorities, count(*) AS observations
FROM neotoma.observations WHERE source_id = :'prio_source';
RESET ROLE;
SELECT neotoma.verify()->'ok' AS verified;
ROLLBACK;
