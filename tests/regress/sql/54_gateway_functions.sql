-- The functions the gateway calls instead of reading tables and catalogs
-- (0.20.0): gateway_handshake(), file_content() and recompute_snapshots(),
-- as an ordinary role, each user reaching only their own rows (users of
-- their own: the test also runs in a database with older users' data).
\ir include/setup.sql
BEGIN;
SET ROLE neotoma_regress_agent;

-- The handshake: the installed version and what the role may do (the agent
-- is a member of neotoma_service, not of neotoma_operator).
SELECT h->>'extension_version' = (SELECT extversion FROM pg_extension WHERE extname = 'neotoma') AS version_is_installed,
       h->'operator' AS operator, h->'token_context' AS token_context,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(h) k) AS keys
FROM neotoma.gateway_handshake() h;

-- A's file; B asks for it by its source id and gets nothing.
SET neotoma.user_id = '54000000-0000-0000-0000-00000000000a';
SELECT neotoma.store('{"file_content": "aGVsbG8gZ2F0ZXdheQ==", "original_filename": "hello.txt",
                       "mime_type": "text/plain", "interpret": false}')->>'source_id' AS source \gset
SELECT convert_from(neotoma.file_content(:'source'), 'UTF8') AS owner_reads;
SET neotoma.user_id = '54000000-0000-0000-0000-00000000000b';
SELECT neotoma.file_content(:'source') IS NULL AS stranger_reads_nothing;
SELECT neotoma.file_content(NULL) IS NULL AS no_source, neotoma.file_content(gen_random_uuid()) IS NULL AS unknown_source;

-- Recomputing: batches in id order, each going on after the last id; the
-- snapshots are unchanged (they were the fold already) and verify() stays
-- clean. B's batches hold only B's entities.
SET neotoma.user_id = '54000000-0000-0000-0000-00000000000a';
SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Gate One", "email": "one@gateway.example"},
  {"entity_type": "person", "name": "Gate Two", "email": "two@gateway.example"},
  {"entity_type": "person", "name": "Gate Three", "email": "three@gateway.example"}]}')->'entities') AS stored;
CREATE TEMP TABLE before_recompute AS
  SELECT entity_id, snapshot, field_provenance FROM neotoma.entity_snapshots;
SELECT neotoma.recompute_snapshots(NULL, 2) AS first \gset
SELECT cardinality(:'first'::text[]) AS first_batch,
       (:'first'::text[])[1] < (:'first'::text[])[2] AS in_id_order;
SELECT cardinality(neotoma.recompute_snapshots((:'first'::text[])[2], 1000)) AS the_rest,
       (SELECT count(*) FROM neotoma.entities) - 2 AS expected;
SELECT neotoma.recompute_snapshots((SELECT max(id) FROM neotoma.entities), 10) AS past_the_end,
       neotoma.recompute_snapshots(NULL, 0) AS none_asked,
       neotoma.recompute_snapshots(NULL, -5) AS negative,
       neotoma.recompute_snapshots(NULL, NULL) AS null_count;
SELECT count(*) AS snapshots_changed FROM neotoma.entity_snapshots s JOIN before_recompute b USING (entity_id)
WHERE s.snapshot IS DISTINCT FROM b.snapshot OR s.field_provenance IS DISTINCT FROM b.field_provenance;
SET neotoma.user_id = '54000000-0000-0000-0000-00000000000b';
SELECT count(*) AS others_recomputed FROM unnest(neotoma.recompute_snapshots(NULL, 1000)) i
WHERE i IN (SELECT entity_id FROM before_recompute);
RESET neotoma.user_id;
SELECT neotoma.recompute_snapshots(NULL, 1000) AS without_a_user;
RESET ROLE;
SELECT (neotoma.verify())->'ok' AS verified;
ROLLBACK;

-- Who may call them: ordinary users (neotoma_user), not PUBLIC.
SELECT p.proname, has_function_privilege('neotoma_user', p.oid, 'EXECUTE') AS users,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public
FROM pg_proc p WHERE p.pronamespace = 'neotoma'::regnamespace
  AND p.proname IN ('gateway_handshake', 'file_content', 'recompute_snapshots') ORDER BY 1;
