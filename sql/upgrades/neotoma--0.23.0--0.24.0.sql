-- 0.23.0 -> 0.24.0: typos among a million names, and a search that reads
-- only its user's snapshots (issue 40). Beside the
-- trigrams of each name, entity_name_trigrams keeps the deletion variants of
-- its words (neotoma._name_variants: `~` and the word, or the word less one
-- character, for the first 4 words of 4 to 20 letters without digits), so lexical search finds the
-- names one typo from a word whose trigrams every name has, instead of
-- reading every name having them. The trigger writes them; the rows of the
-- snapshots stored before are written here (about 12 per name: minutes per
-- million entities). The trigger on updates now compares the names, not
-- their trigrams ("abab" and "ababab" have the same trigrams, not the same
-- variants).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

CREATE FUNCTION neotoma."_name_variants"(
	"name" TEXT /* &str */
) RETURNS TEXT[] /* alloc::vec::Vec<alloc::string::String> */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'name_variants_wrapper';
REVOKE ALL ON FUNCTION neotoma."_name_variants"(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma."_name_variants"(text) TO neotoma_user;

-- The name a snapshot's rows come from (as name_trigrams reads it).
CREATE FUNCTION neotoma._snapshot_name(snapshot jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(snapshot->>'name', snapshot->>'title', '')
$$;
REVOKE ALL ON FUNCTION neotoma._snapshot_name(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._snapshot_name(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma_private._name_trigrams_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM neotoma.entity_name_trigrams t
    WHERE t.user_id = OLD.user_id
      AND t.trigram = ANY (tsvector_to_array(OLD.name_trigrams) || neotoma._name_variants(neotoma._snapshot_name(OLD.snapshot)))
      AND t.entity_id = OLD.entity_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO neotoma.entity_name_trigrams (user_id, trigram, entity_id, name_trigram_count)
    SELECT NEW.user_id, g, NEW.entity_id, length(NEW.name_trigrams)
    FROM unnest(tsvector_to_array(NEW.name_trigrams) || neotoma._name_variants(neotoma._snapshot_name(NEW.snapshot))) g
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER entity_snapshots_name_trigrams_changed ON neotoma.entity_snapshots;
-- (The name, not its trigrams: "abab" and "ababab" have the same.)
CREATE TRIGGER entity_snapshots_name_trigrams_changed AFTER UPDATE ON neotoma.entity_snapshots
  FOR EACH ROW WHEN (neotoma._snapshot_name(OLD.snapshot) IS DISTINCT FROM neotoma._snapshot_name(NEW.snapshot))
  EXECUTE FUNCTION neotoma_private._name_trigrams_changed();

-- The variants of the names stored before.
INSERT INTO neotoma.entity_name_trigrams (user_id, trigram, entity_id, name_trigram_count)
SELECT s.user_id, v, s.entity_id, length(s.name_trigrams)
FROM neotoma.entity_snapshots s, unnest(neotoma._name_variants(neotoma._snapshot_name(s.snapshot))) v
ON CONFLICT DO NOTHING;
ANALYZE neotoma.entity_name_trigrams;

-- The indexes of search hold each row's user as one more word
-- (neotoma._user_words), so a search reads the user's matching rows only,
-- not every user's (rebuilt: 25 s for the words of 2 million snapshots).
CREATE FUNCTION neotoma._user_words(user_id uuid, words tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE LEAKPROOF SET search_path = pg_catalog, pg_temp AS $$
  SELECT words || array_to_tsvector(ARRAY['~' || user_id::text])
$$;
CREATE FUNCTION neotoma._user_word(user_id uuid) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT quote_literal('~' || user_id::text)::tsquery
$$;
REVOKE ALL ON FUNCTION neotoma._user_words(uuid, tsvector), neotoma._user_word(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._user_words(uuid, tsvector), neotoma._user_word(uuid) TO neotoma_user;
DROP INDEX neotoma.entity_snapshots_search;
CREATE INDEX entity_snapshots_search ON neotoma.entity_snapshots
  USING gin (neotoma._user_words(user_id, search_vector) neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);
-- So are the other indexes of search: the snapshots' character pairs, the
-- observations' words, the files' words.
DROP INDEX neotoma.entity_snapshots_search_grams;
CREATE INDEX entity_snapshots_search_grams ON neotoma.entity_snapshots
  USING gin (neotoma._user_words(user_id, search_grams) neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);
DROP INDEX neotoma.observations_search;
CREATE INDEX observations_search ON neotoma.observations
  USING gin (neotoma._user_words(user_id, neotoma._observation_vector(fields)) neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);
DROP INDEX neotoma.files_search;
CREATE INDEX files_search ON neotoma.files USING gin (neotoma._user_words(user_id, search_vector) neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);

-- On a router, rotating the signing keys rotates the partitions' too (they
-- sign the files' URLs), which the router's login may do.
CREATE OR REPLACE FUNCTION neotoma_private.rotate_signing_key(revoke_previous boolean DEFAULT false) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE k uuid := gen_random_uuid();
BEGIN
  UPDATE neotoma.signing_keys SET retired_at = clock_timestamp() WHERE retired_at IS NULL;
  IF revoke_previous THEN
    UPDATE neotoma.signing_keys SET revoked_at = clock_timestamp() WHERE revoked_at IS NULL;
  END IF;
  INSERT INTO neotoma.signing_keys (user_id, id, secret) VALUES (neotoma.global_user_id(), k, neotoma._random_bytes(32));
  -- On a router the files, and the keys that sign their URLs, are the
  -- partitions': they rotate too (docs/scale-out.md).
  IF EXISTS (SELECT FROM pg_extension WHERE extname = 'neotoma_router') THEN
    EXECUTE 'SELECT neotoma_router.rotate_signing_keys($1)' USING revoke_previous;
  END IF;
  RETURN k;
END $$;
GRANT EXECUTE ON FUNCTION neotoma.rotate_signing_key(boolean), neotoma_private.rotate_signing_key(boolean)
  TO neotoma_router;

-- A token's context on a router's partition, where the tokens are not
-- (they are the router's): no foreign key to them (revoking a token
-- deletes its context, as it did).
ALTER TABLE neotoma.contexts DROP CONSTRAINT contexts_user_id_token_id_fkey;

SELECT neotoma_private.grant_platform_roles();
