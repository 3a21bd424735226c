-- Semantic and hybrid search (retrieve_entities with search_mode), by the
-- built-in embedding model (potion-base-8M, installed by scripts/setup):
-- entities found by meaning with no word in common, hybrid fusing both
-- rankings, auto choosing hybrid, read-after-write, embeddings kept with
-- corrections, isolation (as a non-superuser), verify() and its repair,
-- no model (the fallback said), list_entity_types by meaning,
-- determinism, bad input.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SELECT neotoma._embedding_model() AS model, array_length(neotoma._entity_embedding('person', '{"name": "Ada"}'), 1) AS dims;
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '36000000-0000-0000-0000-00000000000a';

SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "transaction", "merchant": "Cafe Roma", "amount": 12.5, "date": "2026-01-03", "description": "coffee and cake"},
  {"entity_type": "invoice", "invoice_number": "INV-7", "vendor": "Acme", "amount_due": 300, "status": "unpaid"},
  {"entity_type": "note", "title": "Dinner", "content": "spaghetti carbonara with friends", "created_date": "2026-01-04"},
  {"entity_type": "person", "name": "Grace Hopper", "email": "grace@navy.example", "notes": "computer scientist"},
  {"entity_type": "note", "title": "Trip", "content": "hiking in the mountains", "created_date": "2026-01-05"}]}')->'entities');
-- Every snapshot has its embedding, by the model, in this transaction.
SELECT count(*) AS embeddings, min(model) AS model, min(array_length(embedding, 1)) AS dims FROM neotoma.entity_embeddings;

-- By meaning: no entity has the word "payment"; lexical finds none.
SELECT r->>'search_method' AS method, r->'total' AS total
FROM neotoma.retrieve_entities('{"search": "payment", "search_mode": "lexical"}') r;
SELECT r->>'search_method' AS method, r->'pending_embeddings' AS pending,
       jsonb_path_query_array(r, '$.entities[*].entity_type') AS types
FROM neotoma.retrieve_entities('{"search": "payment", "search_mode": "semantic"}') r;
-- Scores are the cosine similarities, best first; no lexical fields matched.
SELECT e->>'entity_type' AS type, (e->>'relevance_score')::float8 = (e->>'semantic_similarity')::float8 AS score_is_similarity,
       (e->>'semantic_similarity')::float8 >= 0.2 AS near, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "payment", "search_mode": "semantic"}')->'entities') e;
SELECT jsonb_path_query_array(neotoma.retrieve_entities('{"search": "italian food", "search_mode": "semantic"}'), '$.entities[*].snapshot.title') AS food;

-- Hybrid: both rankings fused (Reciprocal Rank Fusion); first in both scores 1.
SELECT e->'snapshot'->>'name' AS name, e->'relevance_score' AS score, e->'matched_fields' AS fields
FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "Grace Hopper", "search_mode": "hybrid", "limit": 1}')->'entities') e;
-- auto is hybrid when embeddings exist, and says so.
SELECT r->>'search_method' AS method, r->>'search_fallback' AS fallback
FROM neotoma.retrieve_entities('{"search": "coffee"}') r;
-- Pages of one order, in every mode.
SELECT m AS mode, (SELECT jsonb_agg(e->'id') FROM jsonb_array_elements(neotoma.retrieve_entities(jsonb_build_object('search', 'food and drink', 'search_mode', m, 'limit', 10))->'entities') e)
     = (SELECT jsonb_agg(x) FROM (
          SELECT e->'id' AS x FROM jsonb_array_elements(neotoma.retrieve_entities(jsonb_build_object('search', 'food and drink', 'search_mode', m, 'limit', 2))->'entities') e
          UNION ALL SELECT e->'id' FROM jsonb_array_elements(neotoma.retrieve_entities(jsonb_build_object('search', 'food and drink', 'search_mode', m, 'limit', 8, 'offset', 2))->'entities') e) p) AS same_order
FROM unnest(ARRAY['semantic', 'hybrid']) m;
-- Same question, same answer.
SELECT neotoma.retrieve_entities('{"search": "money", "search_mode": "hybrid"}')
     = neotoma.retrieve_entities('{"search": "money", "search_mode": "hybrid"}') AS deterministic;

-- Read-after-write, and a correction moves the embedding with the text.
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "note", "title": "Garden", "content": "tomatoes and basil in the greenhouse", "created_date": "2026-01-06"}]}')->'entities');
SELECT id AS garden FROM neotoma.entities WHERE entity_type = 'note' AND canonical_name ILIKE '%garden%' \gset
SELECT e->'snapshot'->>'title' AS first FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "vegetables growing", "search_mode": "semantic", "limit": 1}')->'entities') e;
SELECT embedding AS before FROM neotoma.entity_embeddings WHERE entity_id = :'garden' \gset
SELECT neotoma.correct(jsonb_build_object('entity_id', :'garden', 'entity_type', 'note', 'field', 'content', 'value', 'sailing boats on the lake')) ? 'observation_id' AS corrected;
SELECT embedding <> :'before'::real[] AS embedding_moved FROM neotoma.entity_embeddings WHERE entity_id = :'garden';
SELECT coalesce((SELECT e->'snapshot'->>'title' FROM jsonb_array_elements(neotoma.retrieve_entities('{"search": "vegetables growing", "search_mode": "semantic", "limit": 1}')->'entities') e), 'none') AS first_now;

-- Another user finds none of it, and reads none of the embeddings.
SET neotoma.user_id = '36000000-0000-0000-0000-00000000000b';
SELECT r->'total' AS total, r->>'search_method' AS method, r->>'search_fallback' AS fallback
FROM neotoma.retrieve_entities('{"search": "payment", "search_mode": "semantic"}') r;
SELECT count(*) AS visible_embeddings FROM neotoma.entity_embeddings;
SELECT has_table_privilege('neotoma.entity_embeddings', 'INSERT') AS can_insert,
       has_table_privilege('neotoma.entity_embeddings', 'UPDATE') AS can_update;
SET neotoma.user_id = '36000000-0000-0000-0000-00000000000a';

-- verify() compares every embedding with the model's; verify(true) repairs.
SELECT (neotoma.verify())->'ok' AS clean;
RESET ROLE;
UPDATE neotoma.entity_embeddings SET embedding = array_fill(0.5::real, ARRAY[256]) WHERE entity_id = :'garden';
SET ROLE neotoma_regress_agent;
SELECT v->'ok' AS clean, jsonb_path_query_array(v, '$.mismatches[*].what') AS what FROM neotoma.verify() v;
SELECT (neotoma.verify(true))->'repaired' AS repaired, (neotoma.verify())->'ok' AS clean;

-- No model: semantic and hybrid say they fell back; auto answers lexically;
-- what is stored meanwhile has no embedding, which verify(true) writes
-- once the model is back.
RESET ROLE;
SET neotoma.embedding_model = 'off';
SET ROLE neotoma_regress_agent;
SELECT m AS mode, r->>'search_method' AS method, r->>'search_fallback' AS fallback
FROM unnest(ARRAY['auto', 'semantic', 'hybrid']) m, neotoma.retrieve_entities(jsonb_build_object('search', 'coffee', 'search_mode', m)) r;
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store('{"entities": [
  {"entity_type": "note", "title": "Boat", "content": "a sailing trip", "created_date": "2026-01-07"}]}')->'entities');
SELECT count(*) AS without_embedding FROM neotoma.entity_snapshots s
WHERE NOT EXISTS (SELECT FROM neotoma.entity_embeddings v WHERE v.entity_id = s.entity_id);
RESET ROLE;
RESET neotoma.embedding_model;
SET ROLE neotoma_regress_agent;
-- (0: the server's model is not counted; verify() below finds the entity.)
SELECT r->'pending_embeddings' AS pending FROM neotoma.retrieve_entities('{"search": "boat", "search_mode": "hybrid"}') r;
SELECT v->'ok' AS clean, jsonb_path_query_array(v, '$.mismatches[*].what') AS what FROM neotoma.verify() v;
SELECT (neotoma.verify(true))->'repaired' AS repaired, (neotoma.verify())->'ok' AS clean;
SELECT r->'pending_embeddings' AS pending FROM neotoma.retrieve_entities('{"search": "boat", "search_mode": "hybrid"}') r;

-- Types by meaning: keywords look at names and fields only, then meaning.
SELECT r->>'search_method' AS method, jsonb_path_query_array(r, '$.entity_types[0 to 2].entity_type') AS types,
       r->'entity_types'->0->>'match_type' AS match
FROM neotoma.list_entity_types('{"keyword": "payment"}') r;
SELECT neotoma.register_schema('{"entity_type": "meal", "user_specific": true, "schema_definition": {
  "description": "A dish eaten or cooked.",
  "fields": {"dish": {"type": "string", "required": true}, "rating": {"type": "number"}},
  "identity_fields": ["dish"]}, "reducer_config": {"merge_policies": {}}}')->'scope' AS registered;
SELECT r->>'search_method' AS method, r->'entity_types'->0->>'entity_type' AS first
FROM neotoma.list_entity_types('{"keyword": "food"}') r;

-- A gateway's remote provider (neotoma_service): what it has not embedded,
-- with the text to embed; vectors written only for the current text; the
-- query embedding it hands over for a call ranks by its rows.
SELECT jsonb_array_length(p) AS pending, p->0 ? 'text' AS text_given
FROM neotoma.pending_embeddings('remote:toy', 3) p;
CREATE TEMP VIEW own_pending AS
  SELECT count(*) AS own_pending FROM jsonb_array_elements(neotoma.pending_embeddings('remote:toy', 1000)) p
  WHERE p->>'user_id' = '36000000-0000-0000-0000-00000000000a';
SELECT * FROM own_pending;
SELECT neotoma._embedding_text('note', snapshot) AS garden_text FROM neotoma.entity_snapshots WHERE entity_id = :'garden' \gset
SELECT neotoma.put_embeddings('remote:toy', jsonb_build_array(
  jsonb_build_object('user_id', '36000000-0000-0000-0000-00000000000a', 'entity_id', :'garden', 'text', 'an old text', 'embedding', '[1, 0]'::jsonb))) AS stale_written,
       neotoma.put_embeddings('remote:toy', jsonb_build_array(
  jsonb_build_object('user_id', '36000000-0000-0000-0000-00000000000a', 'entity_id', :'garden', 'text', :'garden_text', 'embedding', '[1, 0]'::jsonb))) AS written;
SELECT * FROM own_pending;
SET neotoma.query_embedding_model = 'remote:toy';
SET neotoma.query_embedding = '[0.9, 0.1]';
SELECT r->>'search_method' AS method, r->>'embedding_model' AS model, r->'pending_embeddings' AS pending,
       jsonb_path_query_array(r, '$.entities[*].snapshot.title') AS titles
FROM neotoma.retrieve_entities('{"search": "anything", "search_mode": "semantic"}') r;
RESET neotoma.query_embedding;
RESET neotoma.query_embedding_model;
-- A change of text drops the remote embedding with it.
SELECT neotoma.correct(jsonb_build_object('entity_id', :'garden', 'entity_type', 'note', 'field', 'content', 'value', 'rowing')) ? 'observation_id' AS corrected;
SELECT count(*) AS toy_rows FROM neotoma.entity_embeddings WHERE model = 'remote:toy';
-- What one transaction made pending, as a notification names it: this
-- test's (which stored every entity of the user) as much as all; another's,
-- nothing.
SELECT (SELECT count(*) FROM jsonb_array_elements(neotoma.pending_embeddings_of('remote:toy',
          '36000000-0000-0000-0000-00000000000a', pg_current_xact_id(), 1000))) = (SELECT own_pending FROM own_pending) AS as_all,
       neotoma.pending_embeddings_of('remote:toy', '36000000-0000-0000-0000-00000000000a', pg_current_xact_id(), 1000)
         @> jsonb_build_array(jsonb_build_object('entity_id', :'garden')) AS garden_pending,
       jsonb_array_length(neotoma.pending_embeddings_of('remote:toy', '36000000-0000-0000-0000-00000000000a', '3'::xid8)) AS other_transaction;
SELECT error_code(try_action('retrieve_entities', '{"search": "x"}')) IS NULL AS still_fine;
RESET ROLE;
SELECT has_function_privilege('neotoma_user', 'neotoma.put_embeddings(text, jsonb)', 'EXECUTE') AS users_put,
       has_function_privilege('neotoma_service', 'neotoma.put_embeddings(text, jsonb)', 'EXECUTE') AS service_puts,
       has_function_privilege('neotoma_user', 'neotoma.pending_embeddings_of(text, uuid, xid8, integer, text[])', 'EXECUTE') AS users_look,
       has_function_privilege('neotoma_service', 'neotoma.drop_embeddings(text)', 'EXECUTE') AS service_drops,
       has_function_privilege('neotoma_operator', 'neotoma.drop_embeddings(text)', 'EXECUTE') AS operators_drop;
-- An operator drops the rows of a remote model no gateway uses any more,
-- never the server model's.
SELECT neotoma._embedding_text('note', snapshot) AS garden_text FROM neotoma.entity_snapshots WHERE entity_id = :'garden' \gset
SELECT neotoma.put_embeddings('remote:toy', jsonb_build_array(
  jsonb_build_object('user_id', '36000000-0000-0000-0000-00000000000a', 'entity_id', :'garden', 'text', :'garden_text', 'embedding', '[1, 0]'::jsonb))) AS written;
SELECT neotoma.drop_embeddings('remote:toy') AS dropped, neotoma.drop_embeddings('remote:toy') AS again;
SAVEPOINT own_model;
SELECT neotoma.drop_embeddings(neotoma._embedding_model());
ROLLBACK TO own_model;
SET ROLE neotoma_regress_agent;

-- Bad input: an unknown mode.
SELECT error_code(try_action('retrieve_entities', '{"search": "coffee", "search_mode": "vector"}')) AS code;
ROLLBACK;
