-- Inputs a hostile test sent: each gets the envelope naming the field (never
-- a raw Postgres error), and nothing is half-written.
\ir include/setup.sql
BEGIN;

SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '17000000-0000-0000-0000-000000000017';
\set SHOW_CONTEXT never

-- Dates and offsets out of range, wherever a timestamp is taken.
SELECT error_code(r) AS code, r->'error'->'details'->>'field' AS field, r->>'sqlstate' AS sqlstate
FROM (VALUES
  ('retrieve_entity_snapshot', '{"entity_id": "ent_00000000000000000000000000000000", "at": "0000-01-01"}'::jsonb),
  ('retrieve_entity_snapshot', '{"entity_id": "ent_00000000000000000000000000000000", "at": "+10000-01-01"}'),
  ('list_timeline_events', '{"after_date": "-0001-01-01"}'),
  ('list_timeline_events', '{"before_date": "-100000-01-01"}'),
  ('list_timeline_events', '{"after_date": "2024-01-01T00:00:00+23:59"}'),
  ('store', '{"entities": [{"entity_type": "note", "title": "x"}], "provenance": {"source_refs": [], "extracted_at": "0000-01-01", "extractor_version": "1", "agent_id": "a"}}'),
  ('store', '{"entities": [{"entity_type": "task", "title": "x", "due_date": "+10000-01-01"}]}'),
  ('read_resource', '{"uri": "neotoma://timeline/0000"}'),
  ('read_resource', '{"uri": "neotoma://timeline/0000-01"}')
) AS t(action, args), LATERAL try_action(action, args) AS r;

-- Oversize names and identity values, deep nesting, big numbers, NUL.
SELECT error_code(r) AS code, left(r->'error'->'details'->>'field', 40) AS field, r->>'sqlstate' AS sqlstate
FROM (VALUES
  ('store', jsonb_build_object('entities', jsonb_build_array(jsonb_build_object('entity_type', 'person', 'name', 'A', 'email', repeat('e', 3000))))),
  ('store', jsonb_build_object('entities', jsonb_build_array(jsonb_build_object('entity_type', 'note', 'title', 'x', repeat('k', 3000), 1)))),
  ('register_schema', jsonb_build_object('entity_type', 'longver', 'user_specific', true, 'schema_version', repeat('9', 3000),
     'schema_definition', '{"fields": {"a": {"type": "string"}}}'::jsonb, 'reducer_config', '{"merge_policies": {}}'::jsonb)),
  ('store', jsonb_build_object('entities', jsonb_build_array(jsonb_build_object('entity_type', 'note', 'title', 'deep',
     'nested', (SELECT ('[' || repeat('[', 130) || '1' || repeat(']', 130) || ']')::jsonb))))),
  ('store', '{"entities": [{"entity_type": "note", "title": "big", "n": 1e400}]}'),
  ('retrieve_entities', '{"limit": 1e400}')
) AS t(action, args), LATERAL try_action(action, args) AS r;
SELECT neotoma._invoke('store', '{"entities": [{"entity_type": "note", "title": "nul\u0000"}]}')->'error'->>'code' AS nul_in_text,
       neotoma._invoke('store', '{"entities": [{"entity_type": "note", "title": "x", "k\u0000": 1}]}')->'error'->'details'->>'field' AS nul_in_key,
       neotoma._invoke('store', '[' || repeat('[', 100000) || repeat(']', 100000) || ']')->'error'->>'code' AS very_deep;

-- A JSON null among unknown fields is kept as a fragment, not refused.
SELECT r->'unknown_fields_count' AS unknown FROM neotoma.store('{"entities": [{"entity_type": "note", "title": "nulls", "mystery": null}]}') r;
SELECT fragment_key, fragment_value FROM neotoma.raw_fragments WHERE fragment_key = 'mystery';

-- A text file with NUL bytes is stored and interpreted (NUL becomes U+FFFD).
SELECT r->'interpretation'->>'status' AS status, r->'interpretation'->'entities_created' AS created
FROM neotoma.store(jsonb_build_object('file_content', encode(convert_to('a note', 'UTF8') || '\x00'::bytea || convert_to(' with a NUL', 'UTF8'), 'base64'),
  'mime_type', 'text/plain')) r;

-- Nothing half-written by the refusals above.
SELECT (SELECT count(*) FROM neotoma.sources) AS sources, (SELECT count(*) FROM neotoma.entities) AS entities;

-- Identifier fragments with digits are searched as what they are: a name or
-- an e-mail fragment is text, not a phone number.
SELECT neotoma.store('{"entities": [
  {"entity_type": "person", "name": "Agent g17z02bcc58b", "email": "ops-g17z02bcc58b@example.com"},
  {"entity_type": "person", "name": "Room 4711", "phone": "+49 30 1234 5678"}]}') IS NOT NULL AS stored;
SELECT i AS identifier, r->>'match_type' AS match, r->'total' AS total,
       (SELECT jsonb_agg(e->'matched_fields') FROM jsonb_array_elements(r->'entities') e) AS fields
FROM unnest(ARRAY['g17z02bcc58b', 'ops-g17z02', 'room 4711', '30 1234', '12345678']) i,
     LATERAL neotoma.retrieve_entity_by_identifier(jsonb_build_object('identifier', i)) r;

-- Signed URLs: every freshly signed URL verifies (2,000 of them).
SELECT r->>'source_id' AS file FROM neotoma.store(jsonb_build_object('file_content', encode('signed'::bytea, 'base64'),
  'mime_type', 'application/octet-stream', 'interpret', false)) r \gset
RESET ROLE;
CREATE TEMP TABLE urls AS
SELECT (regexp_match(u, 'expires=(\d+)&kid=([0-9a-f-]+)&sig=([0-9a-f]+)')) AS m FROM (
  SELECT neotoma.retrieve_file_url(jsonb_build_object('user_id', '17000000-0000-0000-0000-000000000017',
           'file_path', :'file', 'expires_in', 60))->>'signed_url' AS u
  FROM generate_series(1, 2000)) x;
SELECT count(*) AS signed, count(*) FILTER (WHERE EXISTS (
  SELECT 1 FROM neotoma.signed_file('17000000-0000-0000-0000-000000000017', :'file', m[1]::bigint, m[2]::uuid, m[3]))) AS verified
FROM urls;

SELECT neotoma.verify()->'ok' AS verified;
ROLLBACK;
