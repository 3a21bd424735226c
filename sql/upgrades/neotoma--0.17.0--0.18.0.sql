-- 0.17.0 -> 0.18.0: a search knows a user's common words beforehand
-- (docs/decisions.md, "Common words known beforehand"): the table
-- neotoma.common_lexemes, counted with every build of the user's lists;
-- partial identifier lookups narrowed by the values' runs of three
-- characters (entity_identifiers.value_grams, indexed).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

-- A question's common words (docs/decisions.md, "Common words known
-- beforehand"): a search tells a rare term (it reads every entity having
-- it) from a common one (more entities than neotoma_core::search::
-- RARE_TERM_ENTITIES have it: it only weighs) by reading the term's index
-- up to that many rows, a few milliseconds per common word. The lexemes of
-- more than 1,000 of a user's snapshots, counted when the user's lists are
-- built, tell it beforehand: a word whose lexeme is here with more entities
-- than that is common without reading. A lexeme grown common since is read
-- as before; counts only fall when snapshots' text changes or entities are
-- erased, and the next build renews them.
CREATE TABLE neotoma.common_lexemes (
  user_id  uuid NOT NULL,
  lexeme   text NOT NULL,
  entities bigint NOT NULL,
  PRIMARY KEY (user_id, lexeme)
);
-- Counts the lexemes of every snapshot of user `u` (as a search's terms
-- count them) and keeps those of more than `more_than`; answers how many.
CREATE FUNCTION neotoma_private._count_common_lexemes(u uuid, more_than integer DEFAULT 1000) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  n integer;
BEGIN
  DELETE FROM neotoma.common_lexemes c WHERE c.user_id = u;
  INSERT INTO neotoma.common_lexemes (user_id, lexeme, entities)
  SELECT u, w.word, w.ndoc
  FROM ts_stat(format('SELECT s.search_vector FROM neotoma.entity_snapshots s WHERE s.user_id = %L', u)) w
  WHERE w.ndoc > more_than;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;

-- Builds every model's lists of user `u` (see index_embeddings), counts
-- the user's common lexemes, and records the build.
CREATE OR REPLACE FUNCTION neotoma_private._build_user_embedding_lists(u uuid, min_embeddings integer) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  m text;
  built jsonb := '[]';
BEGIN
  -- One build of a user at a time (several gateways may keep them).
  PERFORM pg_advisory_xact_lock(hashtextextended('neotoma embedding lists ' || u::text, 0));
  FOR m IN SELECT DISTINCT v.model FROM neotoma.entity_embeddings v WHERE v.user_id = u
           UNION SELECT l.model FROM neotoma.embedding_lists l WHERE l.user_id = u ORDER BY 1 LOOP
    built := built || neotoma_private._build_embedding_lists(u, m, coalesce(min_embeddings, 4096));
  END LOOP;
  PERFORM neotoma_private._count_common_lexemes(u);
  INSERT INTO neotoma.embedding_list_builds (user_id, entities, built_at)
  VALUES (u, (SELECT coalesce(sum(c.current), 0) FROM neotoma.entity_counts c WHERE c.user_id = u), clock_timestamp())
  ON CONFLICT (user_id) DO UPDATE SET entities = EXCLUDED.entities, built_at = EXCLUDED.built_at;
  RETURN built;
END $$;

ALTER TABLE neotoma.common_lexemes ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.common_lexemes FORCE ROW LEVEL SECURITY;
CREATE POLICY common_lexemes_own_rows ON neotoma.common_lexemes
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.common_lexemes FROM PUBLIC;
GRANT SELECT ON neotoma.common_lexemes TO neotoma_user;
REVOKE EXECUTE ON FUNCTION neotoma_private._count_common_lexemes(uuid, integer) FROM PUBLIC;

CREATE FUNCTION neotoma."_value_grams"(
	"value" TEXT /* &str */
) RETURNS TEXT[] /* alloc::vec::Vec<alloc::string::String> */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'value_grams_wrapper';
REVOKE ALL ON FUNCTION neotoma."_value_grams"(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma."_value_grams"(text) TO neotoma_user;

-- Partial identifier lookups (retrieve_entity_by_identifier, when no value
-- equals the identifier) look for the values that contain the identifier's
-- form: the runs of three characters of each value (neotoma._value_grams),
-- kept beside it, narrow them to those having every run of the form, and
-- LIKE decides. A column, not an index over the expression: under row level
-- security only a leakproof condition may use an index, and the functions
-- that compute the runs are not marked so (neotoma.@@ over a column is).
ALTER TABLE neotoma.entity_identifiers
  ADD COLUMN value_grams tsvector GENERATED ALWAYS AS (array_to_tsvector(neotoma._value_grams(value))) STORED;
-- A pending list of 64 kB, not 4 MB: a lookup reads the whole list, which
-- until a vacuum merged it made one take 23 ms instead of 0.9 at 2,500
-- persons; stores cost the same (fastupdate off cost them 0.5 ms each).
CREATE INDEX entity_identifiers_grams ON neotoma.entity_identifiers USING gin (value_grams neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);

-- Supabase-style platform roles get what neotoma_user has, as at install.
SELECT neotoma_private.grant_platform_roles();
