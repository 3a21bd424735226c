-- Erasure (GDPR): content removed for good, nothing of it readable back
-- through any action, view or table; verify() clean; an audit row of counts
-- stays. The change feed: every change once, in an order paging never skips.
-- Not in one transaction: the feed shows what has committed. The user's
-- rows are erased at the end.
\ir include/setup.sql
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '32000000-0000-0000-0000-00000000000a';

-- The feed starts empty; each write adds its changes.
SELECT jsonb_array_length(r->'changes') AS changes, r->'has_more' AS more, r->>'next_cursor' AS cursor
FROM neotoma.list_recent_changes('{}') r;
-- Two sources describe Grace; one describes only Linus (with a file).
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Grace Hopper", "email": "grace@example.com",
                        "notes": "SECRET-GRACE-NOTE"}]}')->'source_id' IS NOT NULL AS stored;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Grace Hopper", "email": "grace@example.com",
                        "phone": "+1 555 0100"},
                       {"entity_type": "person", "name": "Linus", "email": "linus@example.com", "notes": "SECRET-LINUS"}]}')->'source_id' IS NOT NULL AS stored;
SELECT id AS grace FROM neotoma.entities WHERE canonical_name ILIKE 'grace%' \gset
SELECT id AS linus FROM neotoma.entities WHERE canonical_name ILIKE 'linus%' \gset
SELECT source_id AS grace_note_source FROM neotoma.observations WHERE fields::text LIKE '%SECRET-GRACE-NOTE%' \gset
SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'REFERS_TO',
  'source_entity_id', :'linus', 'target_entity_id', :'grace'))->>'relationship_type' AS linked;
SELECT neotoma.store(jsonb_build_object('file_content', encode(convert_to('SECRET-FILE-BYTES', 'UTF8'), 'base64'),
  'original_filename', 'linus.txt', 'interpret', false))->>'source_id' AS file_source \gset

SELECT c->>'kind' AS kind, c->>'operation' AS operation, count(*) AS n
FROM jsonb_array_elements(neotoma.list_recent_changes('{"limit": 1000}')->'changes') c GROUP BY 1, 2 ORDER BY 1, 2;
-- A relationship change names its type and ends.
SELECT c->>'relationship_type' AS type, c->>'source_entity_id' = :'linus' AS from_linus, c->>'target_entity_id' = :'grace' AS to_grace
FROM jsonb_array_elements(neotoma.list_recent_changes('{"limit": 1000}')->'changes') c WHERE c->>'kind' = 'relationship';
-- Paging: two at a time reads exactly what one page does, in the same order.
CREATE TEMP TABLE paged (n serial, cursor text);
DO $$
DECLARE r jsonb; c text; pages int := 0;
BEGIN
  LOOP
    r := neotoma.list_recent_changes(jsonb_strip_nulls(jsonb_build_object('since', c, 'limit', 2)));
    INSERT INTO paged (cursor) SELECT x->>'cursor' FROM jsonb_array_elements(r->'changes') x;
    c := r->>'next_cursor';
    pages := pages + 1;
    EXIT WHEN NOT (r->>'has_more')::boolean OR pages > 50;
  END LOOP;
END $$;
SELECT (SELECT array_agg(cursor ORDER BY n) FROM paged)
     = (SELECT array_agg(x->>'cursor') FROM jsonb_array_elements(neotoma.list_recent_changes('{"limit": 1000}')->'changes') x) AS same_order,
       (SELECT count(DISTINCT cursor) = count(*) FROM paged) AS no_repeats;
-- Polling with the last cursor: nothing new, the same cursor back.
SELECT jsonb_array_length(r->'changes') AS changes, r->>'next_cursor' = (SELECT cursor FROM paged ORDER BY n DESC LIMIT 1) AS same_cursor
FROM neotoma.list_recent_changes(jsonb_build_object('since', (SELECT cursor FROM paged ORDER BY n DESC LIMIT 1))) r;
SELECT count(*) AS person_changes FROM jsonb_array_elements(neotoma.list_recent_changes('{"entity_type": "person", "limit": 1000}')->'changes');
SELECT error_code(try_action('list_recent_changes', args)) AS code, try_action('list_recent_changes', args)->'error'->'details'->>'field' AS field
FROM (VALUES ('{"since": "yesterday"}'::jsonb), ('{"since": "c1.zz.1"}'), ('{"limit": 0}'), ('{"entity_type": "no such!"}'), ('{"kind": "x"}')) t(args);

-- Erase needs confirm: true, and one target.
SELECT error_code(try_action('erase', args)) AS code
FROM (VALUES (jsonb_build_object('source_id', :'grace_note_source')),
             (jsonb_build_object('source_id', :'grace_note_source', 'confirm', false)),
             (jsonb_build_object('source_id', :'grace_note_source', 'entity_id', :'grace', 'confirm', true)),
             ('{"confirm": true}'::jsonb),
             ('{"source_id": "00000000-0000-0000-0000-000000000000", "confirm": true}'),
             ('{"entity_id": "ent_0000000000000000000000000000000", "confirm": true}')) t(args);
-- Another user cannot erase this user's source.
SET neotoma.user_id = '32000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('erase', jsonb_build_object('source_id', :'grace_note_source', 'confirm', true))) AS other_user;
SET neotoma.user_id = '32000000-0000-0000-0000-00000000000a';

-- Erase the source of Grace's note: her other source remains, recomputed.
SELECT r->>'erased' AS erased, r->'counts' AS counts
FROM neotoma.erase(jsonb_build_object('source_id', :'grace_note_source', 'confirm', true, 'reason', 'subject request')) r;
SELECT s->'snapshot'->>'phone' AS phone, s->'snapshot' ? 'notes' AS has_notes
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'grace')) s;
SELECT count(*) AS sources_left FROM neotoma.sources WHERE id = :'grace_note_source';

-- Erase Linus: his observations, relationship, events, and the sources only he came from go;
-- the source he shared with Grace keeps its row without content.
SELECT r->>'erased' AS erased, r->'counts' AS counts
FROM neotoma.erase(jsonb_build_object('entity_id', :'linus', 'confirm', true)) r;
SELECT error_code(try_action('retrieve_entity_snapshot', jsonb_build_object('entity_id', :'linus'))) AS linus,
       neotoma.list_relationships(jsonb_build_object('entity_id', :'grace', 'include_deleted', true))->'total' AS grace_relationships,
       neotoma.retrieve_entities('{}')->'total' AS entities;
SELECT source_type, content IS NULL AS content_gone, erased_at IS NOT NULL AS marked
FROM neotoma.sources WHERE erased_at IS NOT NULL;
-- Storing that very content again is refused, not answered as a duplicate.
SELECT error_code(r) AS code, r->'error'->'details'->>'erased_at' IS NOT NULL AS has_time
FROM try_action('store', '{"entities": [{"entity_type": "person", "name": "Grace Hopper", "email": "grace@example.com",
                        "phone": "+1 555 0100"},
                       {"entity_type": "person", "name": "Linus", "email": "linus@example.com", "notes": "SECRET-LINUS"}]}') r;
-- The file: erase the file source; its signed URL no longer fetches it.
SELECT neotoma.retrieve_file_url(jsonb_build_object('file_path', 'sources/' || :'file_source'))->>'signed_url' AS url \gset
CREATE TEMP TABLE u AS SELECT
  substring(:'url' FROM 'expires=([0-9]+)')::bigint AS expires,
  substring(:'url' FROM 'kid=([0-9a-f-]+)')::uuid AS kid,
  substring(:'url' FROM 'sig=([0-9a-f]+)') AS sig;
SELECT count(*) AS fetched_before FROM u, neotoma.signed_file('32000000-0000-0000-0000-00000000000a', :'file_source', u.expires, u.kid, u.sig);
SELECT r->'counts'->'sources' AS sources FROM neotoma.erase(jsonb_build_object('source_id', :'file_source', 'confirm', true)) r;
RESET ROLE;
SELECT count(*) AS file_rows FROM neotoma.files WHERE user_id = '32000000-0000-0000-0000-00000000000a';
SELECT count(*) AS fetched_after FROM u, neotoma.signed_file('32000000-0000-0000-0000-00000000000a', :'file_source', u.expires, u.kid, u.sig);

-- Nothing erased can be read back from any table of the schema.
CREATE TEMP TABLE leaks (tbl text, n bigint);
DO $$
DECLARE t text; n bigint;
BEGIN
  FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
           WHERE s.nspname = 'neotoma' AND c.relkind IN ('r', 'v') ORDER BY 1 LOOP
    EXECUTE format('SELECT count(*) FROM neotoma.%I x WHERE x::text ~ %L', t, 'SECRET-(GRACE-NOTE|LINUS|FILE)|linus@|U0VDUkVULUZJTEU')
      INTO n;
    IF n > 0 THEN INSERT INTO leaks VALUES (t, n); END IF;
  END LOOP;
END $$;
SELECT * FROM leaks;
SELECT count(*) AS linus_rows FROM neotoma.changes WHERE entity_id = :'linus';
SELECT v->'ok' AS ok, v->'mismatch_count' AS mismatches FROM neotoma.verify() AS v;

-- The audit trail keeps counts and reasons, no content.
SET ROLE neotoma_regress_agent;
SELECT action, target_kind, target_id IS NULL AS no_id, reason, details->'counts'->'observations' AS observations
FROM neotoma.audit_trail WHERE action = 'erase' ORDER BY at;
SELECT c->>'kind' AS kind, c->>'operation' AS operation, c->>'entity_id' = :'grace' AS is_grace
FROM jsonb_array_elements(neotoma.list_recent_changes('{"limit": 1000}')->'changes') c
WHERE c->>'kind' = 'erasure' OR c->>'operation' = 'recomputed';
-- A filter that matches nothing more still moves the cursor to the end.
SELECT r->'changes' AS changes, r->>'next_cursor' = (neotoma.list_recent_changes('{"limit": 1000}')->>'next_cursor') AS at_end
FROM neotoma.list_recent_changes('{"entity_type": "no_such_type"}') r;
-- Users cannot write audit rows or change rows, nor delete history, nor erase a user.
BEGIN;
SAVEPOINT s;
INSERT INTO neotoma.erasures (user_id, id, target_kind, counts) VALUES ('32000000-0000-0000-0000-00000000000a', gen_random_uuid(), 'user', '{}');
ROLLBACK TO SAVEPOINT s;
INSERT INTO neotoma.changes (user_id, kind, operation) VALUES ('32000000-0000-0000-0000-00000000000a', 'entity', 'observed');
ROLLBACK TO SAVEPOINT s;
DELETE FROM neotoma.observations;
ROLLBACK TO SAVEPOINT s;
SELECT neotoma.erase_user('32000000-0000-0000-0000-00000000000a', true);
ROLLBACK TO SAVEPOINT s;

-- An operator erases a whole user: no row of theirs is left but the audit row.
SET ROLE neotoma_regress_operator;
RESET neotoma.user_id;
SELECT neotoma.erase_user('32000000-0000-0000-0000-00000000000a', false);
ROLLBACK TO SAVEPOINT s;
SET ROLE neotoma_regress_operator;
RESET neotoma.user_id;
SELECT neotoma.erase_user('00000000-0000-0000-0000-000000000000', true);
ROLLBACK;
SET ROLE neotoma_regress_operator;
RESET neotoma.user_id;
SELECT r->'counts'->'entities' AS entities, r->'counts'->'sources' AS sources
FROM neotoma.erase_user('32000000-0000-0000-0000-00000000000a', true) r;
RESET ROLE;
CREATE TEMP TABLE left_rows (tbl text, n bigint);
DO $$
DECLARE t text; n bigint;
BEGIN
  FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
           JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'user_id'
           WHERE s.nspname = 'neotoma' AND c.relkind = 'r' ORDER BY 1 LOOP
    EXECUTE format('SELECT count(*) FROM neotoma.%I WHERE user_id = %L', t, '32000000-0000-0000-0000-00000000000a') INTO n;
    IF n > 0 THEN INSERT INTO left_rows VALUES (t, n); END IF;
  END LOOP;
END $$;
SELECT * FROM left_rows ORDER BY tbl;
SELECT v->'ok' AS ok FROM neotoma.verify() AS v;
