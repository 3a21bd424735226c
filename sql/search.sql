-- Search (retrieve_entities with `search`): what each snapshot is found by,
-- kept with it by Postgres (generated columns), so an entity is findable by
-- its new text in the transaction that stored it.
-- search_vector: every string and number of the snapshot as `simple` words
-- (exact, any language) and as `english` stems, its name or title weighted A.
-- name_trigrams: the trigrams of its name or title (neotoma._name_trigrams,
-- as pg_trgm makes them), for names with typos; one row each in
-- entity_name_trigrams, below.
-- Row level security lets an index answer a condition before the policy
-- has filtered the rows only if the condition's function is LEAKPROOF (it
-- tells nothing of a row the session may not see). Postgres does not mark
-- `tsvector @@ tsquery` so, though it only answers true or false: through
-- RLS no GIN index of words was ever used, and a search read every entity
-- of the user. neotoma.@@ is the same function (ts_match_vq) marked
-- LEAKPROOF, with a GIN operator class of its own made of the core's
-- tsvector support functions, so the word indexes below serve ordinary
-- roles (docs/decisions.md).
CREATE FUNCTION neotoma._ts_match(tsvector, tsquery) RETURNS boolean
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'ts_match_vq';
CREATE OPERATOR neotoma.@@ (LEFTARG = tsvector, RIGHTARG = tsquery, FUNCTION = neotoma._ts_match,
                            RESTRICT = tsmatchsel, JOIN = tsmatchjoinsel);
CREATE OPERATOR CLASS neotoma.tsvector_rls_ops FOR TYPE tsvector USING gin AS
  OPERATOR 1 neotoma.@@ (tsvector, tsquery),
  FUNCTION 1 gin_cmp_tslexeme(text, text),
  FUNCTION 2 gin_extract_tsvector(tsvector, internal, internal),
  FUNCTION 3 gin_extract_tsquery(tsvector, internal, int2, internal, internal, internal, internal),
  FUNCTION 4 gin_tsquery_consistent(internal, int2, tsvector, int4, internal, internal, internal, internal),
  FUNCTION 5 gin_cmp_prefix(text, text, int2, internal),
  FUNCTION 6 gin_tsquery_triconsistent(internal, int2, tsvector, int4, internal, internal, internal),
  STORAGE text;

ALTER TABLE neotoma.entity_snapshots
  ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('pg_catalog.simple', coalesce(snapshot->>'name', snapshot->>'title', '')), 'A')
    || jsonb_to_tsvector('pg_catalog.simple', snapshot, '["string", "numeric"]')
    || jsonb_to_tsvector('pg_catalog.english', snapshot, '["string"]')) STORED,
  ADD COLUMN name_trigrams tsvector GENERATED ALWAYS AS (
    array_to_tsvector(neotoma._name_trigrams(coalesce(snapshot->>'name', snapshot->>'title', '')))) STORED;
-- Each GIN index of search keeps a pending list of 64 kB, not the default
-- 4 MB: a search reads the whole list until a vacuum merges it (after 3,000
-- stores at 50,000 entities a lexical search took 20.4 ms instead of 13.9),
-- and stores cost no more (docs/decisions.md, "GIN pending lists").
-- The index holds each snapshot's words and its user as one more word
-- (neotoma._user_words): a search asks for the user's word too, so the
-- index answers the user's entities only, not every user's that have the
-- words (whose rows the heap then read and row level security dropped: half
-- of a common word's 57,434 heap pages with two users of a million).
CREATE FUNCTION neotoma._user_words(user_id uuid, words tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE LEAKPROOF SET search_path = pg_catalog, pg_temp AS $$
  SELECT words || array_to_tsvector(ARRAY['~' || user_id::text])
$$;
-- The word a user's snapshots have (no text gives it: the parser splits
-- "~" and the dashes off).
CREATE FUNCTION neotoma._user_word(user_id uuid) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT quote_literal('~' || user_id::text)::tsquery
$$;
CREATE INDEX entity_snapshots_search ON neotoma.entity_snapshots
  USING gin (neotoma._user_words(user_id, search_vector) neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);

-- The index of name trigrams, one row each, kept by the triggers below from
-- entity_snapshots.name_trigrams: finds the entities sharing enough of a
-- query's trigrams the way pg_trgm's index does, from a narrow btree,
-- without reading snapshots. Each row also says how many trigrams its name
-- has (in the index too), so the similarity is computed from the index
-- alone. Beside the trigrams, the deletion variants of the name's words
-- (neotoma._name_variants: `~` and the word, or the word less one
-- character): a typo shares one with the word it misspells, which finds it
-- among a million names whose trigrams are all common (reading every name
-- with those trigrams took 131 ms).
CREATE TABLE neotoma.entity_name_trigrams (
  user_id            uuid     NOT NULL,
  trigram            text     NOT NULL,
  entity_id          text     NOT NULL,
  name_trigram_count integer  NOT NULL,
  PRIMARY KEY (user_id, trigram, entity_id) INCLUDE (name_trigram_count)
);
-- The name a snapshot's rows come from (as name_trigrams reads it).
CREATE FUNCTION neotoma._snapshot_name(snapshot jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(snapshot->>'name', snapshot->>'title', '')
$$;
-- Row triggers, by key: a snapshot's rows are found through its own
-- trigrams and variants (no foreign key: its check per row cost more than
-- the rows).
CREATE FUNCTION neotoma_private._name_trigrams_changed() RETURNS trigger
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
-- Emptying the snapshots (TRUNCATE, also by CASCADE from entities) empties it.
CREATE FUNCTION neotoma_private._name_trigrams_truncated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  TRUNCATE neotoma.entity_name_trigrams;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_snapshots_name_trigrams AFTER INSERT OR DELETE ON neotoma.entity_snapshots
  FOR EACH ROW EXECUTE FUNCTION neotoma_private._name_trigrams_changed();
-- (The name, not its trigrams: "abab" and "ababab" have the same.)
CREATE TRIGGER entity_snapshots_name_trigrams_changed AFTER UPDATE ON neotoma.entity_snapshots
  FOR EACH ROW WHEN (neotoma._snapshot_name(OLD.snapshot) IS DISTINCT FROM neotoma._snapshot_name(NEW.snapshot))
  EXECUTE FUNCTION neotoma_private._name_trigrams_changed();
CREATE TRIGGER entity_snapshots_truncated AFTER TRUNCATE ON neotoma.entity_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._name_trigrams_truncated();

-- The words of an observation's values (as search_vector reads a
-- snapshot's), indexed: retrieve_entities {search, include_observations}
-- also finds entities by values since corrected or outranked.
-- LEAKPROOF and not inlined (its SET keeps Postgres from inlining it), so
-- that under row level security `_observation_vector(fields) @@ q` is an
-- index condition: inlined, its jsonb_to_tsvector calls are not leakproof
-- and a search read every observation of the user (5 s at 200,000
-- entities). It answers only the words and raises no error for a stored
-- row (the index computed it when the row was written).
CREATE FUNCTION neotoma._observation_vector(fields jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE LEAKPROOF SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_to_tsvector('pg_catalog.simple', fields, '["string", "numeric"]')
         || jsonb_to_tsvector('pg_catalog.english', fields, '["string"]')
$$;
-- (With the user's word, as the snapshots' index: neotoma._user_words.)
CREATE INDEX observations_search ON neotoma.observations
  USING gin (neotoma._user_words(user_id, neotoma._observation_vector(fields)) neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);

-- The words of a stored file (neotoma._file_text: the start of a UTF-8 text
-- file; nothing of a binary one), indexed: retrieve_entities {search,
-- include_observations} also finds the entities observed from it.
ALTER TABLE neotoma.files ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  to_tsvector('pg_catalog.simple', neotoma._file_text(content))
  || to_tsvector('pg_catalog.english', neotoma._file_text(content))) STORED;
CREATE INDEX files_search ON neotoma.files USING gin (neotoma._user_words(user_id, search_vector) neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);
