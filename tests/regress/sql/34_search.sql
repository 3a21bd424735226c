-- Search (retrieve_entities with `search`): ranking on a corpus with known
-- answers (the exact name first, typos found by trigram, words found in any
-- field, stems), the mode that answered, a stable order across pages,
-- isolation (as a non-superuser: B never finds A's entities), aliases of
-- merged entities, read-after-write, bad input.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '34000000-0000-0000-0000-00000000000a';

SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Grace Hopper", "email": "grace@navy.example", "notes": "invented the first compiler"},
  {"entity_type": "person", "name": "Grace Hopper Jr", "email": "gj@example.com"},
  {"entity_type": "person", "name": "Alan Turing", "email": "alan@example.com", "notes": "compilers and computing machinery"},
  {"entity_type": "company", "name": "Grace Foods", "website": "grace-foods.example"},
  {"entity_type": "note", "title": "Meeting with Ada", "content": "Ada explained the Analytical Engine", "created_date": "2026-01-02"}]}')->'entities');

-- The exact name first, then the longer one, then one sharing a word.
SELECT e->>'entity_type' AS type, e->'snapshot'->>'name' AS name, e->'relevance_score' AS score, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Grace Hopper", "search_mode": "lexical"}')->'entities') e;
-- Typos: found by the name's trigrams.
SELECT e->'snapshot'->>'name' AS name, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Grce Hoppr"}')->'entities') e;
-- Any field's words, English stems too (compiler ~ compilers); a title names a note.
SELECT e->'snapshot'->>'name' AS name, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "compiler", "search_mode": "lexical"}')->'entities') e;
SELECT e->'snapshot'->>'title' AS title, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "analytical engine", "entity_type": "note"}')->'entities') e;
-- The mode that answered, said: auto is hybrid (the model embeds every entity).
SELECT r->>'search_method' AS method, r->>'search_fallback' AS fallback, r->'total' AS total
FROM (VALUES ('{"search": "grace"}'::jsonb), ('{"search": "grace", "search_mode": "lexical"}'),
             ('{"search": "grace", "search_mode": "hybrid"}')) t(args), neotoma.retrieve_entities(args) r;
-- Pages of one order: two at a time read what one page does.
SELECT (SELECT array_agg(e->>'id') FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "grace compiler", "limit": 100}')->'entities') e)
     = (SELECT array_agg(e->>'id') FROM generate_series(0, 4, 2) o,
               jsonb_array_elements(neotoma.retrieve_entities(jsonb_build_object('search', 'grace compiler', 'limit', 2, 'offset', o))->'entities') e)
       AS same_order;
-- Read after write: a new value is found in the same transaction.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Alan Turing", "email": "alan@example.com", "notes": "Enigma codebreaker"}]}') IS NOT NULL AS stored;
SELECT e->'snapshot'->>'name' AS name FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "enigma"}')->'entities') e;
-- The old notes are no longer the snapshot's; include_observations finds
-- them in the observation that said them.
SELECT r->'total' AS total FROM neotoma.retrieve_entities('{"search": "computing machinery", "search_mode": "lexical"}') r;
SELECT e->'snapshot'->>'name' AS name, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "computing machinery", "search_mode": "lexical", "include_observations": true}')->'entities') e;
SELECT error_code(try_action('retrieve_entities', '{"include_observations": true}')) AS without_search;
-- A merged entity's name is an alias of the one it went to.
SELECT neotoma.merge_entities(jsonb_build_object(
  'from_entity_id', (SELECT id FROM neotoma.entities WHERE identity_key = 'email=gj@example.com'),
  'to_entity_id', (SELECT id FROM neotoma.entities WHERE identity_key = 'email=grace@navy.example'))) IS NOT NULL AS merged;
SELECT e->'snapshot'->>'name' AS name, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Grace Hopper Jr", "search_mode": "lexical"}')->'entities') e;
SELECT jsonb_array_length(neotoma.retrieve_entities('{"search": "Grace Hopper Jr", "search_mode": "lexical", "include_merged": true}')->'entities') AS with_merged;
-- Deleted entities are not found unless asked for.
SELECT neotoma.delete_entity(jsonb_build_object('entity_id',
  (SELECT e->>'id' FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Grace Foods"}')->'entities') e LIMIT 1))) IS NOT NULL AS deleted;
SELECT (SELECT count(*) FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "foods"}')->'entities')) AS found,
       (SELECT count(*) FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "foods", "include_deleted": true}')->'entities')) AS with_deleted;
-- Punctuation only matches nothing; stop words alone need no notice.
SELECT r->'total' AS total FROM neotoma.retrieve_entities('{"search": "?!"}') r;
SELECT r->'total' AS total FROM neotoma.retrieve_entities('{"search": "the of"}') r;

-- The words of stored files: an e-mail's contacts are observed from it,
-- so include_observations finds them by what it says ('files'); its note
-- is found by its snapshot. A binary file's bytes are not words.
SELECT jsonb_array_length(r->'entities') AS stored FROM neotoma.store(jsonb_build_object(
  'file_content', encode(convert_to(E'From: Katherine Johnson <kj@nasa.example>\r\nTo: Dorothy Vaughan <dv@nasa.example>\r\n'
    'Subject: Trajectories\r\nDate: Mon, 2 Feb 2026 10:00:00 +0000\r\nMessage-ID: <t1@nasa.example>\r\n\r\n'
    'The orbital reentry figures are checked.\r\n', 'UTF8'), 'base64'),
  'mime_type', 'message/rfc822', 'original_filename', 'trajectories.eml')) r;
SELECT jsonb_array_length(r->'entities') AS stored FROM neotoma.store(jsonb_build_object(
  'file_content', encode(E'\\x89504e470d0a1a0a000000'::bytea || convert_to('glovebox', 'UTF8'), 'base64'),
  'mime_type', 'image/png', 'interpret', false)) r;
SELECT e->>'entity_type' AS type, coalesce(e->'snapshot'->>'name', e->'snapshot'->>'title') AS name, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "reentry", "search_mode": "lexical", "include_observations": true}')->'entities') e;
SELECT r->'total' AS without_files FROM neotoma.retrieve_entities('{"search": "reentry", "search_mode": "lexical"}') r;
SELECT r->'total' AS only_contacts
FROM neotoma.retrieve_entities('{"search": "orbital", "entity_type": "contact", "search_mode": "lexical", "include_observations": true}') r;
-- The most words 128 KiB of text can hold (about 32,000 distinct ones)
-- still fit a tsvector: the file is stored, its words searched up to the
-- limit ('a00'), not beyond ('zzz').
WITH a(c) AS (VALUES ('0123456789abcdefghijklmnopqrstuvwxyz'))
SELECT r ? 'source_id' AS stored FROM a, neotoma.store(jsonb_build_object(
  'file_content', encode(convert_to((SELECT string_agg(substr(c, i / 1296 % 36 + 1, 1) || substr(c, i / 36 % 36 + 1, 1)
                                                       || substr(c, i % 36 + 1, 1), ' ') FROM generate_series(0, 80000) i), 'UTF8'), 'base64'),
  'mime_type', 'text/plain', 'interpret', false)) r;
SELECT count(*) FILTER (WHERE search_vector @@ 'glovebox'::tsquery) AS binary_words,
       count(*) FILTER (WHERE search_vector @@ 'reentry'::tsquery) AS text_words,
       count(*) FILTER (WHERE search_vector @@ 'a00'::tsquery) AS within_limit,
       count(*) FILTER (WHERE search_vector @@ 'zzz'::tsquery) AS beyond_limit FROM neotoma.files;

-- A question, not a conjunction: an entity matching some of its words is
-- found, one matching more ranks higher; the exact name still comes first.
SELECT jsonb_array_length(neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Ada Lovelace", "notes": "Wrote the first program"},
  {"entity_type": "task", "title": "Call Ada about the engine", "status": "open"},
  {"entity_type": "note", "title": "Baxter", "content": "We adopted Baxter, a beagle puppy, from the shelter."},
  {"entity_type": "note", "title": "Holiday", "content": "We chose the beach this summer."},
  {"entity_type": "note", "title": "Hiking", "content": "The mountains in autumn."},
  {"entity_type": "note", "title": "Report", "content": "The report is ready. Der Bericht ist fertig. Le rapport est prêt."},
  {"entity_type": "note", "title": "Dog", "content": "Rex the dog; der Hund Bello; le chat Minou."},
  {"entity_type": "note", "title": "会议", "content": "我们明天在北京开会讨论预算。"},
  {"entity_type": "note", "title": "日本", "content": "来週は東京で新しいプロジェクトを始めます。"},
  {"entity_type": "note", "title": "ไทย", "content": "พรุ่งนี้เราจะไปเชียงใหม่เพื่อประชุมลูกค้า"}]}')->'entities') AS stored;
SELECT q, string_agg(coalesce(e->'snapshot'->>'name', e->'snapshot'->>'title'), ' | ' ORDER BY o) AS found
FROM (VALUES (1, 'engine program'), (2, 'When did I adopt Baxter?'), (3, 'beach or mountains?'), (4, 'Ada Lovelace'),
             -- stop words of the question's language match nothing
             (5, 'Where is the dog?'), (6, 'Wo ist der Hund?'), (7, 'Où est le chat ?'),
             -- a word inside a sentence without spaces
             (8, '北京'), (9, '東京で'), (10, 'เชียงใหม่')) t(n, q),
  LATERAL neotoma.retrieve_entities(jsonb_build_object('search', q, 'search_mode', 'lexical')) r,
  LATERAL jsonb_array_elements(r->'entities') WITH ORDINALITY a(e, o)
GROUP BY n, q ORDER BY n;

-- Another user finds none of it, by any word or name.
SET neotoma.user_id = '34000000-0000-0000-0000-00000000000b';
SELECT r->'total' AS total FROM (VALUES ('grace'), ('Grce Hoppr'), ('compiler'), ('enigma')) t(q),
  neotoma.retrieve_entities(jsonb_build_object('search', q)) r;
SELECT r->'total' AS total FROM neotoma.retrieve_entities('{"search": "reentry", "include_observations": true}') r;

-- The index of name trigrams is checked by verify(), and repaired.
SET neotoma.user_id = '34000000-0000-0000-0000-00000000000a';
SELECT (neotoma.verify())->'ok' AS clean;
RESET ROLE;
DELETE FROM neotoma.entity_name_trigrams WHERE user_id = '34000000-0000-0000-0000-00000000000a' AND trigram = 'tur';
SET ROLE neotoma_regress_agent;
SELECT v->'ok' AS clean, jsonb_path_query_array(v, '$.mismatches[*].what') AS what FROM neotoma.verify() v;
SELECT (neotoma.verify(true))->'repaired' AS repaired, (neotoma.verify())->'ok' AS clean;
SELECT e->'snapshot'->>'name' AS name FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Alan Turing", "search_mode": "lexical"}')->'entities') e;

-- Bad input: empty, too long, an unknown mode, a mode without a search.
SELECT error_code(try_action('retrieve_entities', args)) AS code,
       try_action('retrieve_entities', args)->'error'->'details'->>'field' AS field
FROM (VALUES ('{"search": ""}'::jsonb), ('{"search": "   "}'), (jsonb_build_object('search', repeat('x', 10000))),
             ('{"search": "grace", "search_mode": "psychic"}'), ('{"search_mode": "lexical"}'), ('{"search": 42}')) t(args);

-- Through row level security (this role) a GIN index of words serves a
-- match only through a leakproof operator: the built-in @@ is not one, so
-- every word index is of neotoma.tsvector_rls_ops, whose neotoma.@@ is
-- (benches/million.py measures the difference).
SELECT (SELECT proleakproof FROM pg_proc WHERE oid = 'neotoma._ts_match'::regproc) AS leakproof;
SELECT i.indexrelid::regclass AS word_index, c.opcname AS operator_class
FROM pg_index i JOIN pg_opclass c ON c.oid = ANY (i.indclass)
WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'gin')
  AND i.indrelid IN ('neotoma.entity_snapshots'::regclass, 'neotoma.observations'::regclass, 'neotoma.files'::regclass)
ORDER BY i.indexrelid::regclass::text;
ROLLBACK;
