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
-- variants). And a timeline listing's total over a long range is read
-- from counts per day (neotoma.timeline_counts), and semantic search scans
-- compact copies of the embeddings (entity_embeddings.code). Tokens can
-- be limited: read-only, or to some tools (issue 43).
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

-- A listing's total over a long range from the counts of each day
-- (neotoma.timeline_counts, kept by triggers on the events; filled here
-- from the events stored before: seconds per million events).
-- How many events each user has per workspace, day (UTC) and type, so that
-- a listing's total over a long range is read from a few rows per day
-- instead of counted event by event (a month of a million-entity memory:
-- 16,000 events). Events of deleted entities are counted here; a listing
-- subtracts them (list_timeline_events.sql). Rows are deltas appended by
-- the triggers below, as in neotoma.entity_counts (counts.sql): concurrent
-- writers never wait on a shared counter, and a writer now and then folds
-- the rows of a day that no other transaction holds into one. verify()
-- checks the sums against the events.
CREATE TABLE neotoma.timeline_counts (
  user_id    uuid   NOT NULL,
  workspace  text   NOT NULL,
  day        date   NOT NULL,
  event_type text   NOT NULL,
  events     bigint NOT NULL
);
CREATE INDEX timeline_counts_day ON neotoma.timeline_counts (user_id, workspace, day)
  INCLUDE (event_type, events);

-- Trigger body: the deltas of a statement's inserted, updated or deleted
-- events, then, one statement in 8, the fold of the days it touched that
-- have more than 8 rows. Runs as the extension's owner: users read the
-- counts, never write them.
CREATE FUNCTION neotoma_private._count_events() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  look boolean := random() < 0.125;
  users uuid[];
  spaces text[];
  days date[];
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE neotoma.timeline_counts;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    WITH d AS (
      INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
      SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date, event_type, count(*)
      FROM new_events GROUP BY 1, 2, 3, 4
      RETURNING user_id, workspace, day)
    SELECT array_agg(user_id), array_agg(workspace), array_agg(day) INTO users, spaces, days
    FROM d WHERE look;
  ELSIF TG_OP = 'UPDATE' THEN
    WITH d AS (
      INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
      SELECT user_id, workspace, day, event_type, sum(n)
      FROM (SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date AS day, event_type, 1 AS n
            FROM new_events
            UNION ALL
            SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date, event_type, -1
            FROM old_events) x
      GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0
      RETURNING user_id, workspace, day)
    SELECT array_agg(user_id), array_agg(workspace), array_agg(day) INTO users, spaces, days
    FROM d WHERE look;
  ELSE
    WITH d AS (
      INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
      SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date, event_type, -count(*)
      FROM old_events GROUP BY 1, 2, 3, 4
      RETURNING user_id, workspace, day)
    SELECT array_agg(user_id), array_agg(workspace), array_agg(day) INTO users, spaces, days
    FROM d WHERE look;
  END IF;
  -- The rows of a day stay few (their number does not change the sums); a
  -- day's rows another transaction holds are left to it (SKIP LOCKED).
  IF users IS NOT NULL THEN
    WITH busy AS (
      SELECT c.user_id, c.workspace, c.day
      FROM neotoma.timeline_counts c
      JOIN (SELECT DISTINCT * FROM unnest(users, spaces, days)) AS k(user_id, workspace, day)
        ON k.user_id = c.user_id AND k.workspace = c.workspace AND k.day = c.day
      GROUP BY c.user_id, c.workspace, c.day HAVING count(*) > 8),
    folded AS (
      DELETE FROM neotoma.timeline_counts c
      WHERE c.ctid IN (SELECT x.ctid FROM neotoma.timeline_counts x
                       JOIN busy b ON b.user_id = x.user_id AND b.workspace = x.workspace AND b.day = x.day
                       FOR UPDATE OF x SKIP LOCKED)
      RETURNING c.user_id, c.workspace, c.day, c.event_type, c.events)
    INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
    SELECT user_id, workspace, day, event_type, sum(events) FROM folded
    GROUP BY user_id, workspace, day, event_type HAVING sum(events) <> 0;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER timeline_events_counted_insert AFTER INSERT ON neotoma.timeline_events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_events();
CREATE TRIGGER timeline_events_counted_update AFTER UPDATE ON neotoma.timeline_events
  REFERENCING OLD TABLE AS old_events NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_events();
CREATE TRIGGER timeline_events_counted_delete AFTER DELETE ON neotoma.timeline_events
  REFERENCING OLD TABLE AS old_events
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_events();
CREATE TRIGGER timeline_events_counted_truncate AFTER TRUNCATE ON neotoma.timeline_events
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_events();

-- Rebuilds the count rows from the events (verify(repair => true)): the
-- session's user's, or, for a superuser session without a user, every
-- user's; one statement, as neotoma_private._recount_entities.
CREATE FUNCTION neotoma_private._recount_events() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  WITH scope AS (
    SELECT (SELECT neotoma.current_user_id()) AS user_id,
           (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user) AS everyone),
  cleared AS (
    DELETE FROM neotoma.timeline_counts c USING scope s
    WHERE c.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone))
  INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
  SELECT t.user_id, t.workspace, (t.event_timestamp AT TIME ZONE 'UTC')::date, t.event_type, count(*)
  FROM neotoma.timeline_events t, scope s
  WHERE t.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone)
  GROUP BY 1, 2, 3, 4;
$$;

-- Filled after the triggers exist (they hold off writers until the update
-- commits), so no event is counted twice or missed.
INSERT INTO neotoma.timeline_counts (user_id, workspace, day, event_type, events)
SELECT t.user_id, t.workspace, (t.event_timestamp AT TIME ZONE 'UTC')::date, t.event_type, count(*)
FROM neotoma.timeline_events t GROUP BY 1, 2, 3, 4;
ALTER TABLE neotoma.timeline_counts ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.timeline_counts FORCE ROW LEVEL SECURITY;
CREATE POLICY timeline_counts_own_rows ON neotoma.timeline_counts USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.timeline_counts FROM PUBLIC;
GRANT SELECT ON neotoma.timeline_counts TO neotoma_user;
REVOKE ALL ON FUNCTION neotoma_private._count_events(), neotoma_private._recount_events() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma_private._recount_events() TO neotoma_user;
-- Its statistics are kept current like the other tables', from a sample
-- of 9,000 rows (ANALYZE holds it in the writing backend: 80 MB for 30,000
-- snapshots, 24 MB for 9,000).
CREATE OR REPLACE FUNCTION neotoma_private._refresh_statistics() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, neotoma, pg_temp SET client_min_messages = error
SET default_statistics_target = 30 AS $$
DECLARE
  t regclass;
  n integer := 0;
BEGIN
  FOR t IN
    SELECT c.oid::regclass FROM pg_class c
    WHERE c.oid = ANY (ARRAY['neotoma.sources', 'neotoma.interpretation_runs', 'neotoma.entities',
                             'neotoma.observations', 'neotoma.entity_snapshots', 'neotoma.entity_identifiers',
                             'neotoma.raw_fragments', 'neotoma.relationships', 'neotoma.relationship_observations',
                             'neotoma.timeline_events', 'neotoma.entity_merges', 'neotoma.files',
                             'neotoma.entity_counts', 'neotoma.entity_embeddings',
                             'neotoma.entity_name_trigrams', 'neotoma.embedding_lists', 'neotoma.timeline_counts',
                             'neotoma.word_postings']::regclass[])
      AND pg_relation_size(c.oid) >= 8192::bigint * greatest(2 * c.relpages, 1)
    ORDER BY c.oid
  LOOP
    EXECUTE format('ANALYZE (SKIP_LOCKED) %s', t);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;

-- Semantic search scans compact copies of the embeddings (4 bits a
-- component) from the lists' index and ranks the likest exactly
-- (docs/decisions.md): the column is generated, so every embedding written
-- has it; adding it rewrites the table (23 s for 2,034,610 embeddings).
CREATE FUNCTION neotoma."_embedding_code"(
	"embedding" real[] /* pgrx::Array<f32> */
) RETURNS bytea /* core::option::Option<alloc::vec::Vec<u8>> */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'embedding_code_wrapper';
CREATE FUNCTION neotoma."_code_similarity"(
	"code" bytea, /* &[u8] */
	"query" real[] /* pgrx::Array<f32> */
) RETURNS double precision /* f64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'code_similarity_wrapper';
REVOKE ALL ON FUNCTION neotoma."_embedding_code"(real[]), neotoma."_code_similarity"(bytea, real[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma."_embedding_code"(real[]), neotoma."_code_similarity"(bytea, real[]) TO neotoma_user;
-- Each list's codes are then packed in one row (embedding_list_codes),
-- which a search scores in one loop; an embedding written since its list
-- was packed is not `packed` and is scored from its index, as every
-- embedding is until the user's lists are built or packed again (the
-- gateway's upkeep does it).
ALTER TABLE neotoma.entity_embeddings
  ADD COLUMN code bytea GENERATED ALWAYS AS (neotoma._embedding_code(embedding)) STORED,
  ADD COLUMN packed boolean NOT NULL DEFAULT false;
DROP INDEX neotoma.entity_embeddings_lists;
CREATE INDEX entity_embeddings_lists ON neotoma.entity_embeddings (user_id, model, list_no);
CREATE INDEX entity_embeddings_unpacked ON neotoma.entity_embeddings (user_id, model, list_no)
  INCLUDE (entity_id, entity_type, code) WHERE NOT packed;
CREATE INDEX entity_embeddings_exact ON neotoma.entity_embeddings (user_id, model, list_no)
  WHERE list_no IS NULL OR code IS NULL;
-- Each list's codes packed in one row, written when the lists are built
-- and again by the gateway's upkeep once many embeddings were written to
-- the list since (maintain_embedding_lists): a search reads the lists
-- nearest its query as that many rows and scores their codes in one loop
-- (neotoma._nearest_codes), not as an index entry and a function call a
-- code (docs/decisions.md, "Packed lists"). An embedding written since is
-- not `packed`, and a search scores it from entity_embeddings_unpacked;
-- one changed or deleted since is still in its list's row until the list
-- is packed again, and a search, which compares its candidates'
-- embeddings exactly, finds it changed or gone.
CREATE TABLE neotoma.embedding_list_codes (
  user_id      uuid NOT NULL,
  model        text NOT NULL,
  list_no      integer NOT NULL,
  entity_ids   text[] NOT NULL,
  entity_types text[] NOT NULL,
  -- The codes (each of the same length), in the order of entity_ids.
  codes        bytea NOT NULL,
  PRIMARY KEY (user_id, model, list_no)
);
-- Codes hardly compress: kept out of line as they are.
ALTER TABLE neotoma.embedding_list_codes ALTER COLUMN codes SET STORAGE EXTERNAL;
ALTER TABLE neotoma.embedding_list_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.embedding_list_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY embedding_list_codes_own_rows ON neotoma.embedding_list_codes
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.embedding_list_codes FROM PUBLIC;
GRANT SELECT ON neotoma.embedding_list_codes TO neotoma_user;
-- Packs the codes of user `u`'s lists of model `m` (every list, or those
-- of `only_lists`) into their rows of embedding_list_codes, and marks
-- packed the embeddings whose code their list's row now holds: the update
-- compares list and code again on the row it writes, so one a concurrent
-- write changed stays unpacked. Answers how many it marked.
CREATE FUNCTION neotoma_private._pack_list_codes(u uuid, m text, only_lists integer[]) RETURNS bigint
LANGUAGE sql SET search_path = pg_catalog, neotoma, pg_temp AS $$
  WITH listed AS MATERIALIZED (
    SELECT v.entity_id, v.entity_type, v.list_no, v.code FROM neotoma.entity_embeddings v
    WHERE v.user_id = u AND v.model = m AND v.list_no IS NOT NULL AND v.code IS NOT NULL
      AND (only_lists IS NULL OR v.list_no = ANY (only_lists))),
  emptied AS (
    DELETE FROM neotoma.embedding_list_codes c
    WHERE c.user_id = u AND c.model = m AND (only_lists IS NULL OR c.list_no = ANY (only_lists))
      AND NOT EXISTS (SELECT FROM listed l WHERE l.list_no = c.list_no)),
  packed AS (
    INSERT INTO neotoma.embedding_list_codes AS c (user_id, model, list_no, entity_ids, entity_types, codes)
    SELECT u, m, l.list_no, array_agg(l.entity_id ORDER BY l.entity_id COLLATE "C"),
           array_agg(l.entity_type ORDER BY l.entity_id COLLATE "C"),
           string_agg(l.code, ''::bytea ORDER BY l.entity_id COLLATE "C")
    FROM listed l GROUP BY l.list_no
    ON CONFLICT (user_id, model, list_no) DO UPDATE
      SET entity_ids = EXCLUDED.entity_ids, entity_types = EXCLUDED.entity_types, codes = EXCLUDED.codes),
  marked AS (
    UPDATE neotoma.entity_embeddings v SET packed = true FROM listed l
    WHERE v.user_id = u AND v.model = m AND v.entity_id = l.entity_id AND NOT v.packed
      AND v.list_no = l.list_no AND v.code = l.code
    RETURNING 1)
  SELECT count(*) FROM marked $$;
REVOKE ALL ON FUNCTION neotoma_private._pack_list_codes(uuid, text, integer[]) FROM PUBLIC;
CREATE FUNCTION neotoma."_nearest_codes"(
	"user_id" uuid, /* Option < pgrx :: datum :: Uuid > */
	"model" TEXT, /* Option < & str > */
	"lists" INT[], /* :: std :: option :: Option < Vec < i32 > > */
	"query" real[], /* :: std :: option :: Option < pgrx :: Array < f32 > > */
	"entity_type" TEXT, /* Option < & str > */
	"n" bigint /* Option < i64 > */
) RETURNS TABLE (
	"entity_id" TEXT,  /* String */
	"similarity" double precision  /* f64 */
)
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'nearest_codes_wrapper';
REVOKE ALL ON FUNCTION neotoma."_nearest_codes"(uuid, text, integer[], real[], text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma."_nearest_codes"(uuid, text, integer[], real[], text, bigint) TO neotoma_user;
CREATE OR REPLACE FUNCTION neotoma_private._embedding_listed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  NEW.list_no := neotoma._embedding_list(NEW.user_id, NEW.model, NEW.embedding);
  NEW.packed := false;
  RETURN NEW;
END $$;
CREATE OR REPLACE FUNCTION neotoma_private.maintain_embedding_lists(max_builds integer DEFAULT 1,
                                                         min_embeddings integer DEFAULT 4096) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  c record;
  built jsonb := '[]';
  -- A word's bar to be common (neotoma_core::search::RARE_TERM_ENTITIES).
  common_bar constant integer := 2000;
  posting uuid;
BEGIN
  PERFORM neotoma_private._rerender_past_validity(1000);
  posting := neotoma_private._words_to_post(common_bar);
  IF posting IS NOT NULL THEN
    RETURN jsonb_build_array(jsonb_build_object('user_id', posting,
                                                'words', neotoma_private._post_common_words(posting, common_bar)));
  END IF;
  FOR c IN
    SELECT n.user_id FROM (
      SELECT e.user_id, sum(e.current) AS entities FROM neotoma.entity_counts e GROUP BY e.user_id) n
    LEFT JOIN neotoma.embedding_list_builds b ON b.user_id = n.user_id
    WHERE n.entities >= coalesce(min_embeddings, 4096) AND n.entities >= 2 * coalesce(b.entities, 0)
    ORDER BY n.entities DESC, n.user_id
    LIMIT greatest(coalesce(max_builds, 1), 0)
  LOOP
    built := built || jsonb_build_object('user_id', c.user_id,
                                         'models', neotoma_private._build_user_embedding_lists(c.user_id, min_embeddings));
  END LOOP;
  -- (An update of list_no alone fires no trigger: entity_embeddings_list
  -- runs on the embedding and the model.)
  FOR c IN SELECT DISTINCT l.user_id, l.model FROM neotoma.embedding_lists l ORDER BY 1, 2 LOOP
    UPDATE neotoma.entity_embeddings v SET list_no = neotoma._embedding_list(v.user_id, v.model, v.embedding)
    WHERE v.user_id = c.user_id AND v.model = c.model AND v.list_no IS NULL;
  END LOOP;
  -- Lists that gained 32 embeddings or more since they were packed,
  -- packed again (a search scores those one by one): the 64 that gained
  -- most, so that one round stays short (about 1.5 s at a million
  -- embeddings; each packing waits for writes to its embeddings, and they
  -- for it).
  FOR c IN SELECT p.user_id, p.model, array_agg(p.list_no ORDER BY p.list_no) AS lists
           FROM (SELECT v.user_id, v.model, v.list_no FROM neotoma.entity_embeddings v
                 WHERE NOT v.packed AND v.list_no IS NOT NULL AND v.code IS NOT NULL
                 GROUP BY 1, 2, 3 HAVING count(*) >= 32
                 ORDER BY count(*) DESC, 1, 2, 3 LIMIT 64) p
           GROUP BY 1, 2 ORDER BY 1, 2 LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('neotoma embedding lists ' || c.user_id::text, 0));
    PERFORM neotoma_private._pack_list_codes(c.user_id, c.model, c.lists);
  END LOOP;
  RETURN built;
END $$;

-- Limited tokens (issue 43): read-only, or only some tools, and when each
-- was last used.
ALTER TABLE neotoma.api_tokens
  ADD COLUMN read_only boolean NOT NULL DEFAULT false,
  ADD COLUMN tools text,
  ADD COLUMN workspaces text[],
  ADD COLUMN last_used_at timestamptz;
DROP FUNCTION neotoma.authenticate_token(text);
DROP FUNCTION neotoma_private.authenticate_token(text);
-- The token's id (from 0.12.0) names its context (set_context); a token
-- with a resource (from 0.15.0) is good for that resource only; its limits
-- (from 0.24.0) decide which tools its session lists.
CREATE FUNCTION neotoma_private.authenticate_token(token_hash text)
RETURNS TABLE (user_id uuid, scope text, expires_at timestamptz, id uuid, resource text,
               read_only boolean, tools text, workspaces text[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT t.user_id, t.scope, t.expires_at, t.id, t.resource, t.read_only, t.tools, t.workspaces
  FROM neotoma.api_tokens t
  WHERE t.token_hash = authenticate_token.token_hash AND t.revoked_at IS NULL
    AND (t.expires_at IS NULL OR t.expires_at > now()) $$;
CREATE FUNCTION neotoma.authenticate_token(token_hash text)
RETURNS TABLE (user_id uuid, scope text, expires_at timestamptz, id uuid, resource text,
               read_only boolean, tools text, workspaces text[])
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM neotoma_private.authenticate_token(token_hash) $$;

DROP FUNCTION neotoma.create_api_token(uuid, text, text, text, double precision);
DROP FUNCTION neotoma_private.create_api_token(uuid, text, text, text, double precision);
CREATE FUNCTION neotoma_private.create_api_token(user_id uuid, token_hash text, name text DEFAULT NULL,
                                         scope text DEFAULT 'user', expires_in_seconds double precision DEFAULT NULL,
                                         read_only boolean DEFAULT false, tools text DEFAULT NULL,
                                         workspaces text[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  t neotoma.api_tokens;
BEGIN
  IF expires_in_seconds IS NOT NULL AND NOT expires_in_seconds > 0 THEN
    RAISE EXCEPTION 'expires_in_seconds must be positive';
  END IF;
  -- An operator's token changes what all users share: it cannot be limited.
  IF create_api_token.scope = 'operator' AND (create_api_token.read_only OR create_api_token.tools IS NOT NULL
                                              OR create_api_token.workspaces IS NOT NULL) THEN
    RAISE EXCEPTION 'an operator token cannot be limited (read_only, tools, workspaces)';
  END IF;
  IF cardinality(create_api_token.workspaces) = 0 THEN
    RAISE EXCEPTION 'workspaces: name at least one (NULL: all)';
  END IF;
  INSERT INTO neotoma.api_tokens (user_id, id, token_hash, name, scope, expires_at, read_only, tools, workspaces)
  VALUES (create_api_token.user_id, gen_random_uuid(), create_api_token.token_hash, create_api_token.name,
          create_api_token.scope, now() + expires_in_seconds * interval '1 second',
          coalesce(create_api_token.read_only, false), nullif(btrim(create_api_token.tools), ''),
          (SELECT array_agg(DISTINCT w ORDER BY w) FROM unnest(create_api_token.workspaces) w))
  RETURNING * INTO t;
  PERFORM pg_notify('neotoma_tokens', t.token_hash);
  RETURN jsonb_build_object('id', t.id, 'user_id', t.user_id, 'scope', t.scope,
                            'expires_at', neotoma._iso(t.expires_at), 'read_only', t.read_only, 'tools', t.tools,
                            'workspaces', t.workspaces);
END $$;
CREATE FUNCTION neotoma.create_api_token(user_id uuid, token_hash text, name text DEFAULT NULL,
                                         scope text DEFAULT 'user', expires_in_seconds double precision DEFAULT NULL,
                                         read_only boolean DEFAULT false, tools text DEFAULT NULL,
                                         workspaces text[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.create_api_token(user_id, token_hash, name, scope, expires_in_seconds, read_only, tools,
                                          workspaces) $$;

CREATE OR REPLACE FUNCTION neotoma_private.list_api_tokens() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'user_id', user_id, 'name', name, 'scope', scope,
           'created_at', created_at, 'expires_at', expires_at, 'revoked_at', revoked_at,
           'read_only', read_only, 'tools', tools, 'workspaces', workspaces, 'last_used_at', last_used_at)
           ORDER BY created_at, id), '[]')
  FROM neotoma.api_tokens $$;
CREATE OR REPLACE FUNCTION neotoma.list_api_tokens() RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.list_api_tokens() $$;

-- The gateway says a token was used (at most once a minute per token and
-- gateway, so a read stays a read): `token list` shows when.
CREATE FUNCTION neotoma_private.touch_api_token(token_hash text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  UPDATE neotoma.api_tokens t SET last_used_at = date_trunc('minute', now())
  WHERE t.token_hash = touch_api_token.token_hash
    AND (t.last_used_at IS NULL OR t.last_used_at < date_trunc('minute', now())) $$;
CREATE FUNCTION neotoma.touch_api_token(token_hash text) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.touch_api_token(token_hash) $$;
REVOKE ALL ON FUNCTION neotoma.create_api_token(uuid, text, text, text, double precision, boolean, text, text[]),
  neotoma_private.create_api_token(uuid, text, text, text, double precision, boolean, text, text[]),
  neotoma.touch_api_token(text), neotoma_private.touch_api_token(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.create_api_token(uuid, text, text, text, double precision, boolean, text, text[]),
  neotoma_private.create_api_token(uuid, text, text, text, double precision, boolean, text, text[]) TO neotoma_operator;
REVOKE ALL ON FUNCTION neotoma.authenticate_token(text), neotoma_private.authenticate_token(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.touch_api_token(text), neotoma_private.touch_api_token(text),
  neotoma.authenticate_token(text), neotoma_private.authenticate_token(text) TO neotoma_service;

-- OAuth grants can read only (scope memory:read): their tokens are read-only.
-- An access token and a refresh token for a grant; a grant of `memory:read`
-- (the client asked to read only, or the owner allowed only that) issues
-- read-only tokens, one with `workspace:<name>` scopes tokens limited to
-- those workspaces.
CREATE OR REPLACE FUNCTION neotoma_private._oauth_issue(g neotoma.oauth_grants, access_hash text, access_seconds double precision,
                                             refresh_hash text, refresh_seconds double precision, token_name text)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  INSERT INTO neotoma.api_tokens (user_id, id, token_hash, name, scope, expires_at, resource, grant_id, read_only,
                                  workspaces)
  VALUES (g.user_id, gen_random_uuid(), access_hash, token_name, 'user',
          now() + access_seconds * interval '1 second', g.resource, g.id,
          'memory:read' = ANY (regexp_split_to_array(g.scope, '\s+')),
          -- `workspace:<name>` scopes (the gateway checked the names).
          (SELECT array_agg(DISTINCT substr(s, 11) ORDER BY substr(s, 11))
           FROM regexp_split_to_table(g.scope, '\s+') s WHERE s LIKE 'workspace:%'));
  INSERT INTO neotoma.oauth_refresh_tokens (token_hash, user_id, grant_id, expires_at)
  VALUES (refresh_hash, g.user_id, g.id, now() + refresh_seconds * interval '1 second');
  PERFORM pg_notify('neotoma_tokens', access_hash);
  RETURN jsonb_build_object('user_id', g.user_id, 'scope', g.scope, 'resource', g.resource);
END $$;

-- Who said what (issue 43): each observation keeps the token it was
-- written with; list_observations and retrieve_field_provenance show it
-- (written_with). Existing observations have none.
CREATE FUNCTION neotoma."_calling_token"() RETURNS uuid /* Option < pgrx :: datum :: Uuid > */
STRICT STABLE PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'calling_token_wrapper';
REVOKE ALL ON FUNCTION neotoma._calling_token() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._calling_token() TO neotoma_user;
ALTER TABLE neotoma.observations ADD COLUMN token_id uuid;
ALTER TABLE neotoma.observations ALTER COLUMN token_id SET DEFAULT neotoma._calling_token();
-- What provenance says of the token an observation was written with
-- (`written_with`): its id, and its name (the agent's) when it is one of
-- the session's user's tokens (NULL for another's, or one that no longer
-- exists); NULL for no token. Users cannot read tokens otherwise.
CREATE FUNCTION neotoma_private._written_with(token_id uuid) RETURNS jsonb
LANGUAGE sql STABLE STRICT SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT jsonb_build_object('token_id', _written_with.token_id, 'name', (
    SELECT t.name FROM neotoma.api_tokens t
    WHERE t.user_id = neotoma.current_user_id() AND t.id = _written_with.token_id)) $$;
REVOKE ALL ON FUNCTION neotoma_private._written_with(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma_private._written_with(uuid) TO neotoma_user;

-- Calls a token's limits refused, noted by the gateway (issue 43), in the
-- audit trail.
CREATE TABLE neotoma.denied_calls (
  user_id    uuid        NOT NULL,
  id         bigint      GENERATED ALWAYS AS IDENTITY,
  at         timestamptz NOT NULL DEFAULT now(),
  token_id   uuid,
  action     text        NOT NULL CHECK (length(action) <= 100),
  limit_name text        NOT NULL CHECK (limit_name IN ('read_only', 'tools', 'workspaces')),
  PRIMARY KEY (user_id, id)
);
ALTER TABLE neotoma.denied_calls ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.denied_calls FORCE ROW LEVEL SECURITY;
CREATE POLICY denied_calls_own_rows ON neotoma.denied_calls USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.denied_calls FROM PUBLIC;
GRANT SELECT ON neotoma.denied_calls TO neotoma_user;
-- The gateway's role notes a refusal for the user and token it set
-- (neotoma.user_id, neotoma.token_id): {action, limit}.
CREATE FUNCTION neotoma_private.note_denied_call(args jsonb) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  INSERT INTO neotoma.denied_calls (user_id, token_id, action, limit_name)
  SELECT neotoma.current_user_id(), neotoma._calling_token(), args ->> 'action', args ->> 'limit'
  WHERE neotoma.current_user_id() IS NOT NULL
  RETURNING jsonb_build_object('id', id) $$;
CREATE FUNCTION neotoma.note_denied_call(args jsonb) RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.note_denied_call(args) $$;
REVOKE ALL ON FUNCTION neotoma.note_denied_call(jsonb), neotoma_private.note_denied_call(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.note_denied_call(jsonb), neotoma_private.note_denied_call(jsonb)
  TO neotoma_service;

-- Who did what, when and why: every deletion, restoration, correction,
-- merge, split and erasure, newest last. `user_id` is whose memory it is (the
-- user the acting agent's session or token stands for). Corrections list
-- the fields they set, not the values; erasures their counts.
CREATE OR REPLACE VIEW neotoma.audit_trail WITH (security_invoker = true) AS
SELECT o.user_id, o.observed_at AS at,
       CASE o.kind WHEN 'deletion' THEN 'delete_entity' WHEN 'restoration' THEN 'restore_entity'
                   ELSE 'correct' END AS action,
       'entity'::text AS target_kind, o.entity_id AS target_id, o.entity_type AS target_type,
       CASE WHEN o.kind IN ('deletion', 'restoration') THEN o.fields->>'reason' END AS reason,
       CASE WHEN o.kind = 'correction'
            THEN jsonb_build_object('observation_id', o.id, 'fields',
                   (SELECT coalesce(jsonb_agg(k ORDER BY k), '[]') FROM jsonb_object_keys(o.fields) k))
            ELSE jsonb_build_object('observation_id', o.id) END AS details
FROM neotoma.observations o
WHERE o.kind IN ('deletion', 'restoration', 'correction')
UNION ALL
SELECT ro.user_id, ro.observed_at,
       CASE ro.kind WHEN 'deletion' THEN 'delete_relationship' ELSE 'restore_relationship' END,
       'relationship', ro.relationship_id::text, r.relationship_type, ro.metadata->>'reason',
       jsonb_build_object('observation_id', ro.id, 'source_entity_id', r.source_entity_id,
                          'target_entity_id', r.target_entity_id)
FROM neotoma.relationship_observations ro
JOIN neotoma.relationships r ON r.user_id = ro.user_id AND r.id = ro.relationship_id
WHERE ro.kind IN ('deletion', 'restoration')
UNION ALL
SELECT m.user_id, m.merged_at,
       -- A merge into an entity of another type is how reclassify moves one.
       CASE WHEN t.entity_type = e.entity_type THEN 'merge_entities' ELSE 'reclassify' END,
       'entity', m.from_entity_id, e.entity_type, m.merge_reason,
       jsonb_build_object('merge_id', m.id, 'to_entity_id', m.to_entity_id,
                          'observations_moved', m.observations_moved, 'relationships_moved', m.relationships_moved)
       || CASE WHEN t.entity_type = e.entity_type THEN '{}'::jsonb
               ELSE jsonb_build_object('to_entity_type', t.entity_type) END
FROM neotoma.entity_merges m
JOIN neotoma.entities e ON e.user_id = m.user_id AND e.id = m.from_entity_id
JOIN neotoma.entities t ON t.user_id = m.user_id AND t.id = m.to_entity_id
UNION ALL
SELECT sp.user_id, sp.split_at, 'split_entity', 'entity', sp.from_entity_id, e.entity_type, sp.reason,
       jsonb_build_object('split_id', sp.id, 'to_entity_id', sp.to_entity_id,
                          'created_entity', sp.created_entity, 'observations_moved', sp.observations_moved)
FROM neotoma.entity_splits sp
JOIN neotoma.entities e ON e.user_id = sp.user_id AND e.id = sp.from_entity_id
UNION ALL
SELECT x.user_id, x.erased_at, 'erase', x.target_kind, NULL, NULL, x.reason,
       jsonb_build_object('erasure_id', x.id, 'counts', x.counts)
FROM neotoma.erasures x
UNION ALL
SELECT a.user_id, a.created_at, 'annotate', CASE WHEN a.observation_id IS NULL THEN 'entity' ELSE 'observation' END,
       coalesce(a.observation_id::text, a.entity_id), e.entity_type, NULL,
       jsonb_build_object('annotation_id', a.id, 'entity_id', a.entity_id, 'note', a.note)
FROM neotoma.annotations a
JOIN neotoma.entities e ON e.user_id = a.user_id AND e.id = a.entity_id
UNION ALL
SELECT c.user_id, c.created_at, 'contest', 'observation', c.observation_id::text, o.entity_type, c.reason,
       jsonb_build_object('contest_id', c.id, 'entity_id', o.entity_id)
FROM neotoma.observation_contests c
JOIN neotoma.observations o ON o.user_id = c.user_id AND o.id = c.observation_id
UNION ALL
SELECT d.user_id, d.at, 'denied', 'action', d.action, NULL, d.limit_name,
       jsonb_build_object('limit', d.limit_name, 'token_id', d.token_id)
FROM neotoma.denied_calls d;
COMMENT ON VIEW neotoma.audit_trail IS
  'Every deletion, restoration, correction, merge, reclassification, split, erasure, annotation and contest of the user''s memory, and every call a token''s limits refused (denied): when (at), what (action, target_kind, target_id, target_type), why (reason) and details (ids, corrected field names, erased counts, notes, the limit and token; never erased content).';

-- A common word's entities read from an index alone (sql/word_postings.sql,
-- issue 40): the postings of each user's most common words, kept by
-- triggers on the snapshots, posted by the upkeep's next round.
-- The entities having each of a user's most common words, one btree row
-- each (issue 40). A word more than neotoma_core::search::
-- RARE_TERM_ENTITIES of the user's snapshots have only weighs in a search
-- (sql/queries/search_entities.sql); when a question is one such word,
-- the answer is every entity having it, ranked and counted. Found through
-- the GIN index of words, each of those entities cost a read of its
-- snapshot (29,723 entities of a word in 3 % of a million: 28,420 heap
-- pages); here they are read from the index alone, with the workspace and
-- type a search filters by. (Several common words intersect their GIN
-- bitmaps faster than their postings.)
--
-- Which words: those neotoma.common_lexemes counts (when the user's
-- lists are built) in more than 2,000 of the user's snapshots, posted by
-- the gateway's upkeep (maintain_embedding_lists, the round after the
-- build). From then on the triggers below keep every posted word's rows
-- with the snapshots, in the transaction that writes them; a word grown
-- common since is searched through the GIN index, as before.
CREATE TABLE neotoma.posted_lexemes (
  user_id uuid NOT NULL,
  lexeme  text NOT NULL,
  PRIMARY KEY (user_id, lexeme)
);
CREATE TABLE neotoma.word_postings (
  user_id     uuid NOT NULL,
  lexeme      text NOT NULL,
  entity_id   text NOT NULL,
  workspace   text NOT NULL,
  entity_type text NOT NULL,
  PRIMARY KEY (user_id, lexeme, entity_id) INCLUDE (workspace, entity_type)
);

-- Row triggers on the snapshots: the rows of the posted words a snapshot
-- gained or lost (all of them when its workspace or type changed). A user
-- without posted words (most users) costs one probe.
CREATE FUNCTION neotoma_private._word_postings_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  u uuid := CASE WHEN TG_OP = 'DELETE' THEN OLD.user_id ELSE NEW.user_id END;
  gone text[] := '{}';
  came text[] := '{}';
BEGIN
  IF NOT EXISTS (SELECT FROM neotoma.posted_lexemes k WHERE k.user_id = u) THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    came := tsvector_to_array(NEW.search_vector);
  ELSIF TG_OP = 'DELETE' THEN
    gone := tsvector_to_array(OLD.search_vector);
  ELSIF OLD.workspace IS DISTINCT FROM NEW.workspace OR OLD.entity_type IS DISTINCT FROM NEW.entity_type THEN
    gone := tsvector_to_array(OLD.search_vector);
    came := tsvector_to_array(NEW.search_vector);
  ELSE
    gone := tsvector_to_array(ts_delete(OLD.search_vector, tsvector_to_array(NEW.search_vector)));
    came := tsvector_to_array(ts_delete(NEW.search_vector, tsvector_to_array(OLD.search_vector)));
  END IF;
  IF cardinality(gone) > 0 THEN
    DELETE FROM neotoma.word_postings p
    WHERE p.user_id = u AND p.lexeme = ANY (gone) AND p.entity_id = OLD.entity_id;
  END IF;
  IF cardinality(came) > 0 THEN
    INSERT INTO neotoma.word_postings (user_id, lexeme, entity_id, workspace, entity_type)
    SELECT u, k.lexeme, NEW.entity_id, NEW.workspace, NEW.entity_type
    FROM neotoma.posted_lexemes k WHERE k.user_id = u AND k.lexeme = ANY (came)
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_snapshots_word_postings AFTER INSERT OR DELETE ON neotoma.entity_snapshots
  FOR EACH ROW EXECUTE FUNCTION neotoma_private._word_postings_changed();
CREATE TRIGGER entity_snapshots_word_postings_changed AFTER UPDATE ON neotoma.entity_snapshots
  FOR EACH ROW WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector
                     OR OLD.workspace IS DISTINCT FROM NEW.workspace
                     OR OLD.entity_type IS DISTINCT FROM NEW.entity_type)
  EXECUTE FUNCTION neotoma_private._word_postings_changed();
-- Emptying the snapshots (TRUNCATE, also by CASCADE from entities) empties it.
CREATE FUNCTION neotoma_private._word_postings_truncated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  TRUNCATE neotoma.word_postings;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_snapshots_word_postings_truncated AFTER TRUNCATE ON neotoma.entity_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._word_postings_truncated();

-- Makes user `u`'s posted words those that more than `more_than` of its
-- snapshots have (by neotoma.common_lexemes), writing the rows of the
-- words posted now; answers how many words it posted and dropped. It
-- takes the user's lock exclusively (the one every fold takes shared:
-- extension/src/snapshots.rs, lock_user): no snapshot of the user changes
-- while it reads them, and every write after it sees the words posted.
-- Call it in a transaction that holds no other lock of the user's rows
-- (maintain_embedding_lists gives it a round of its own).
CREATE FUNCTION neotoma_private._post_common_words(u uuid, more_than integer) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  added text[];
  dropped text[];
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('neotoma-user:' || u::text, 0));
  WITH gone AS (
    DELETE FROM neotoma.posted_lexemes k
    WHERE k.user_id = u
      AND NOT EXISTS (SELECT FROM neotoma.common_lexemes c
                      WHERE c.user_id = u AND c.lexeme = k.lexeme AND c.entities > more_than)
    RETURNING k.lexeme)
  SELECT coalesce(array_agg(g.lexeme ORDER BY g.lexeme), '{}') INTO dropped FROM gone g;
  DELETE FROM neotoma.word_postings p WHERE p.user_id = u AND p.lexeme = ANY (dropped);
  WITH came AS (
    INSERT INTO neotoma.posted_lexemes (user_id, lexeme)
    SELECT u, c.lexeme FROM neotoma.common_lexemes c WHERE c.user_id = u AND c.entities > more_than
    ON CONFLICT DO NOTHING
    RETURNING lexeme)
  SELECT coalesce(array_agg(c.lexeme ORDER BY c.lexeme), '{}') INTO added FROM came c;
  IF cardinality(added) > 0 THEN
    -- The snapshots having any of them, by the index of words.
    INSERT INTO neotoma.word_postings (user_id, lexeme, entity_id, workspace, entity_type)
    SELECT s.user_id, l.l, s.entity_id, s.workspace, s.entity_type
    FROM neotoma.entity_snapshots s
    CROSS JOIN LATERAL unnest(tsvector_to_array(s.search_vector)) l(l)
    WHERE s.user_id = u
      AND neotoma._user_words(s.user_id, s.search_vector) OPERATOR(neotoma.@@)
          ((SELECT string_agg(quote_literal(a), ' | ')::tsquery FROM unnest(added) a) && neotoma._user_word(u))
      AND l.l = ANY (added);
  END IF;
  RETURN jsonb_build_object('posted', cardinality(added), 'dropped', cardinality(dropped));
END $$;

-- A user whose posted words are not their common words, those in more
-- than `more_than` of their snapshots (their lists were built since), the
-- one with the most entities first (maintain_embedding_lists).
CREATE FUNCTION neotoma_private._words_to_post(more_than integer) RETURNS uuid
LANGUAGE sql STABLE SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT d.user_id FROM (
    SELECT c.user_id FROM neotoma.common_lexemes c
    WHERE c.entities > more_than
      AND NOT EXISTS (SELECT FROM neotoma.posted_lexemes k WHERE k.user_id = c.user_id AND k.lexeme = c.lexeme)
    UNION
    SELECT k.user_id FROM neotoma.posted_lexemes k
    WHERE NOT EXISTS (SELECT FROM neotoma.common_lexemes c
                      WHERE c.user_id = k.user_id AND c.lexeme = k.lexeme AND c.entities > more_than)) d
  LEFT JOIN (SELECT e.user_id, sum(e.current) AS entities FROM neotoma.entity_counts e GROUP BY e.user_id) n
    ON n.user_id = d.user_id
  ORDER BY n.entities DESC NULLS LAST, d.user_id
  LIMIT 1
$$;
ALTER TABLE neotoma.posted_lexemes ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.posted_lexemes FORCE ROW LEVEL SECURITY;
CREATE POLICY posted_lexemes_own_rows ON neotoma.posted_lexemes
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
ALTER TABLE neotoma.word_postings ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.word_postings FORCE ROW LEVEL SECURITY;
CREATE POLICY word_postings_own_rows ON neotoma.word_postings
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.posted_lexemes, neotoma.word_postings FROM PUBLIC;
GRANT SELECT ON neotoma.posted_lexemes, neotoma.word_postings TO neotoma_user;
REVOKE ALL ON FUNCTION neotoma_private._word_postings_changed(), neotoma_private._word_postings_truncated(),
  neotoma_private._post_common_words(uuid, integer), neotoma_private._words_to_post(integer) FROM PUBLIC;


-- The trigrams of many names, counted with the common lexemes: a typo's
-- common trigrams known without reading their index (sql/embeddings.sql).
CREATE TABLE neotoma.common_name_trigrams (
  user_id uuid   NOT NULL,
  trigram text   NOT NULL,
  names   bigint NOT NULL,
  PRIMARY KEY (user_id, trigram)
);
CREATE FUNCTION neotoma_private._count_common_name_trigrams(u uuid, more_than integer DEFAULT 1000) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  n integer;
BEGIN
  DELETE FROM neotoma.common_name_trigrams c WHERE c.user_id = u;
  INSERT INTO neotoma.common_name_trigrams (user_id, trigram, names)
  SELECT u, t.trigram, count(*) FROM neotoma.entity_name_trigrams t
  WHERE t.user_id = u GROUP BY t.trigram HAVING count(*) > more_than;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
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
  PERFORM neotoma_private._count_common_name_trigrams(u);
  INSERT INTO neotoma.embedding_list_builds (user_id, entities, built_at)
  VALUES (u, (SELECT coalesce(sum(c.current), 0) FROM neotoma.entity_counts c WHERE c.user_id = u), clock_timestamp())
  ON CONFLICT (user_id) DO UPDATE SET entities = EXCLUDED.entities, built_at = EXCLUDED.built_at;
  RETURN built;
END $$;

ALTER TABLE neotoma.common_name_trigrams ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.common_name_trigrams FORCE ROW LEVEL SECURITY;
CREATE POLICY common_name_trigrams_own_rows ON neotoma.common_name_trigrams
  USING (user_id = (SELECT neotoma.current_user_id())) WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.common_name_trigrams FROM PUBLIC;
GRANT SELECT ON neotoma.common_name_trigrams TO neotoma_user;
REVOKE ALL ON FUNCTION neotoma_private._count_common_name_trigrams(uuid, integer) FROM PUBLIC;


-- Valid time (issue 44, docs/design/valid-time.md): observations hold over
-- [valid_from, valid_to), and snapshots are rendered at the instant they
-- are written, true until valid_until.
ALTER TABLE neotoma.observations ADD COLUMN valid_from timestamptz, ADD COLUMN valid_to timestamptz,
  ADD CONSTRAINT observations_valid_interval CHECK (valid_from < valid_to);
CREATE OR REPLACE FUNCTION neotoma_private._observations_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  PERFORM neotoma._apply_observations((
    SELECT jsonb_agg(jsonb_build_object(
             'user_id', n.user_id, 'id', n.id, 'entity_id', n.entity_id, 'entity_type', n.entity_type,
             'source_id', n.source_id, 'observed_at', neotoma._micros(n.observed_at),
             'source_priority', n.source_priority, 'specificity_score', n.specificity_score,
             'fields', n.fields, 'confidence', n.confidence, 'write_order', n.write_order,
             'valid_from', neotoma._micros(n.valid_from), 'valid_to', neotoma._micros(n.valid_to))
           ORDER BY n.user_id, n.entity_id, n.id)::text
    FROM new_observations n WHERE n.kind NOT IN ('deletion', 'restoration')));
  -- Deleted or not: what the latest deletion or restoration of each entity says.
  UPDATE neotoma.entities e
  SET deleted_at = CASE WHEN l.kind = 'deletion' THEN l.observed_at END,
      deleted_reason = CASE WHEN l.kind = 'deletion' THEN l.fields->>'reason' END
  FROM (SELECT DISTINCT ON (o.user_id, o.entity_id) o.user_id, o.entity_id, o.kind, o.observed_at, o.fields
        FROM neotoma.observations o
        WHERE (o.user_id, o.entity_id) IN (SELECT n.user_id, n.entity_id FROM new_observations n
                                           WHERE n.kind IN ('deletion', 'restoration'))
          AND o.kind IN ('deletion', 'restoration')
        ORDER BY o.user_id, o.entity_id, o.observed_at DESC, o.write_order DESC, o.id DESC) l
  WHERE e.user_id = l.user_id AND e.id = l.entity_id;
  RETURN NULL;
END $$;
ALTER TABLE neotoma.entity_snapshots ADD COLUMN valid_until timestamptz, ADD COLUMN valid_values jsonb;
CREATE INDEX entity_snapshots_valid_until ON neotoma.entity_snapshots (valid_until)
  WHERE valid_until IS NOT NULL;
-- Contradictions over valid time (sql/contradictions.sql).
CREATE INDEX entity_snapshots_disagreeing_over_time ON neotoma.entity_snapshots (user_id, entity_id)
  WHERE reducer_state @? '$.timelines.*[*].s ? (@.d == 3)';

-- Renders again the snapshots whose valid time moved on since they were
-- written (the upkeep's maintain_embedding_lists calls it each round).
CREATE FUNCTION neotoma_private."_rerender_past_validity"(
	"max" INT /* i32 */
) RETURNS bigint /* i64 */
STRICT VOLATILE SECURITY DEFINER PARALLEL UNSAFE
SET search_path TO pg_catalog, neotoma, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'rerender_past_validity_wrapper';
REVOKE ALL ON FUNCTION neotoma_private._rerender_past_validity(integer) FROM PUBLIC;
CREATE OR REPLACE FUNCTION neotoma.retrieve_field_history(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_field_history', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_field_history(jsonb) IS
  'One field of an entity over valid time (when it was true in the world): its values as intervals [valid_from, valid_to), earliest first, each with the observation and source it came from. Values stored with valid_from/valid_to succeed each other; a field stored without them holds always.';
REVOKE EXECUTE ON FUNCTION neotoma.retrieve_field_history(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.retrieve_field_history(jsonb) TO neotoma_user;
COMMENT ON FUNCTION neotoma.retrieve_entity_snapshot(jsonb) IS
  'Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was known at that time, `valid_at` for what was true in the world then (values stored with valid_from/valid_to). A merged entity redirects to the entity it was merged into (`redirected_from`). include_contradictions also answers the fields whose observations disagree, as list_contradictions does; include_annotations the notes attached to it (annotate).';
COMMENT ON FUNCTION neotoma.get_entity_snapshot(jsonb) IS
  'Legacy name of neotoma.retrieve_entity_snapshot: Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was known at that time, `valid_at` for what was true in the world then (values stored with valid_from/valid_to). A merged entity redirects to the entity it was merged into (`redirected_from`). include_contradictions also answers the fields whose observations disagree, as list_contradictions does; include_annotations the notes attached to it (annotate).';


-- Valid time of relationships (issue 44): assertions hold over
-- [valid_from, valid_to); a relationship over the union of its assertions'
-- intervals (every relationship before: always, the column's default).
ALTER TABLE neotoma.relationships ADD COLUMN valid_during tstzmultirange NOT NULL DEFAULT '{(,)}';
ALTER TABLE neotoma.relationship_observations ADD COLUMN valid_from timestamptz, ADD COLUMN valid_to timestamptz,
  ADD CONSTRAINT relationship_observations_valid_interval CHECK (valid_from < valid_to);
CREATE FUNCTION neotoma._valid_during(during tstzmultirange) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN during <> '{(,)}' THEN
    coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                'valid_from', neotoma._iso(lower(x)), 'valid_to', neotoma._iso(upper(x)))) ORDER BY lower(x) NULLS FIRST)
              FROM unnest(during) x), '[]') END $$;
REVOKE EXECUTE ON FUNCTION neotoma._valid_during(tstzmultirange) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._valid_during(tstzmultirange) TO neotoma_user;
-- Whether an assertion of relationship `id` holds over an interval: its
-- metadata at an instant is then reduced from the assertions valid then
-- (the stored snapshot folds them all, the metadata at any instant of a
-- relationship whose assertions all hold always).
CREATE FUNCTION neotoma._relationship_timed(user_id uuid, id uuid) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT EXISTS (SELECT FROM neotoma.relationship_observations o
                 WHERE o.user_id = $1 AND o.relationship_id = $2 AND o.kind = 'assertion'
                   AND (o.valid_from IS NOT NULL OR o.valid_to IS NOT NULL)) $$;
REVOKE EXECUTE ON FUNCTION neotoma._relationship_timed(uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._relationship_timed(uuid, uuid) TO neotoma_user;
CREATE OR REPLACE VIEW neotoma.relationship_overview WITH (security_invoker = true) AS
SELECT r.user_id, r.id AS relationship_id, r.relationship_type,
       r.source_entity_id, se.entity_type AS source_entity_type, se.canonical_name AS source_name,
       r.target_entity_id, te.entity_type AS target_entity_type, te.canonical_name AS target_name,
       r.snapshot AS metadata, r.observation_count, r.last_observation_at, r.created_at,
       se.workspace AS source_workspace, te.workspace AS target_workspace, r.valid_during
FROM neotoma.relationships r
JOIN neotoma.entities se ON se.user_id = r.user_id AND se.id = r.source_entity_id
JOIN neotoma.entities te ON te.user_id = r.user_id AND te.id = r.target_entity_id
WHERE r.merged_into IS NULL AND r.deleted_at IS NULL AND se.deleted_at IS NULL AND te.deleted_at IS NULL
  AND r.valid_during @> now();
COMMENT ON VIEW neotoma.relationship_overview IS
  'Current relationships (not re-keyed by a merge, not deleted, between entities that are not deleted, holding now in valid time) with the type and name of both entities, the reduced metadata and when the relationship holds (valid_during).';


-- Export leaves a relationship's valid_during out (its text depends on the
-- session's settings) and import recomputes it from the assertions.
CREATE OR REPLACE FUNCTION neotoma.export_lines() RETURNS SETOF jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT x.line FROM (
    SELECT 0 AS n, w.name AS k, jsonb_build_object('table', 'workspaces', 'row', to_jsonb(w) - 'user_id') AS line
    FROM neotoma.workspaces w WHERE w.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 1, s.id::text, jsonb_build_object('table', 'sources', 'row', to_jsonb(s) - 'user_id'
             || jsonb_build_object('file', translate(encode(f.content, 'base64'), E'\n', '')))
    FROM neotoma.sources s LEFT JOIN neotoma.files f ON f.user_id = s.user_id AND f.source_id = s.id
    WHERE s.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 2, r.id::text, jsonb_build_object('table', 'interpretation_runs', 'row', to_jsonb(r) - 'user_id')
    FROM neotoma.interpretation_runs r WHERE r.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 3, c.id::text, jsonb_build_object('table', 'entity_schemas', 'row', to_jsonb(c) - 'user_id')
    FROM neotoma.entity_schemas c WHERE c.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 4, e.id, jsonb_build_object('table', 'entities', 'row', to_jsonb(e) - 'user_id')
    FROM neotoma.entities e WHERE e.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 5, sp.id::text, jsonb_build_object('table', 'entity_splits', 'row', to_jsonb(sp) - 'user_id')
    FROM neotoma.entity_splits sp WHERE sp.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 6, m.observation_id::text, jsonb_build_object('table', 'observation_moves', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.observation_moves m WHERE m.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 7, o.id::text, jsonb_build_object('table', 'observations', 'row', to_jsonb(o) - 'user_id')
    FROM neotoma.observations o WHERE o.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 8, f.id::text, jsonb_build_object('table', 'raw_fragments', 'row', to_jsonb(f) - 'user_id')
    FROM neotoma.raw_fragments f WHERE f.user_id = neotoma.current_user_id()
    UNION ALL
    -- (Without valid_during, which an import recomputes from the
    -- assertions: a multirange's text depends on the session's settings.)
    SELECT 9, r.id::text, jsonb_build_object('table', 'relationships', 'row', to_jsonb(r) - 'user_id' - 'valid_during')
    FROM neotoma.relationships r WHERE r.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 10, o.id::text, jsonb_build_object('table', 'relationship_observations', 'row', to_jsonb(o) - 'user_id')
    FROM neotoma.relationship_observations o WHERE o.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 11, m.id::text, jsonb_build_object('table', 'entity_merges', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.entity_merges m WHERE m.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 12, x.id::text, jsonb_build_object('table', 'erasures', 'row', to_jsonb(x) - 'user_id')
    FROM neotoma.erasures x WHERE x.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 13, a.id::text, jsonb_build_object('table', 'annotations', 'row', to_jsonb(a) - 'user_id')
    FROM neotoma.annotations a WHERE a.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 14, c.id::text, jsonb_build_object('table', 'observation_contests', 'row', to_jsonb(c) - 'user_id')
    FROM neotoma.observation_contests c WHERE c.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 15, lpad(g.id::text, 20, '0'), jsonb_build_object('table', 'graph_ids', 'row', to_jsonb(g) - 'user_id')
    FROM neotoma.graph_ids g WHERE g.user_id = neotoma.current_user_id()
    UNION ALL
    SELECT 16, m.variant, jsonb_build_object('table', 'entity_type_mappings', 'row', to_jsonb(m) - 'user_id')
    FROM neotoma.entity_type_mappings m WHERE m.user_id = neotoma.current_user_id()
  ) x ORDER BY x.n, x.k
$$;
CREATE OR REPLACE FUNCTION neotoma_private.import_lines(lines jsonb[]) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  u uuid := neotoma.current_user_id();
  -- In reference order: a batch writes each table's rows in one statement.
  tables text[] := ARRAY['workspaces', 'sources', 'interpretation_runs', 'entity_schemas', 'entities', 'entity_splits',
                         'observation_moves', 'observations', 'raw_fragments', 'relationships',
                         'relationship_observations', 'entity_merges', 'erasures', 'annotations',
                         'observation_contests', 'graph_ids', 'entity_type_mappings'];
  t text;
  n bigint;
  moved text[];
  bad jsonb;
  bad_at bigint;
  problem text;
  counts jsonb := '{}';
BEGIN
  IF u IS NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'USER_ID_REQUIRED',
      'message', 'import acts for the session''s user: set neotoma.user_id', 'details', '{}'::jsonb));
  END IF;
  SELECT l INTO bad FROM unnest(lines) l
  WHERE jsonb_typeof(l->'row') IS DISTINCT FROM 'object' OR (l->>'table') IS NULL OR NOT (l->>'table' = ANY (tables))
     OR (l->'row' ? 'workspace' AND NOT coalesce(l->'row'->>'workspace' ~ '^[a-z0-9][a-z0-9_-]{0,62}$', false))
  LIMIT 1;
  IF bad IS NOT NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'VALIDATION_ERROR',
      'message', format('each line must be {"table": one of %s, "row": {…}}, a row''s workspace a workspace name: unknown table or bad row in %L', array_to_string(tables, ', '), left(bad::text, 100)),
      'details', jsonb_build_object('line', left(bad::text, 200))));
  END IF;
  -- A schema is imported only if register_schema would have accepted it:
  -- one that cannot be read would break the user's every use of its type.
  SELECT u.line_at, neotoma._schema_row_problem(u.l->'row') INTO bad_at, problem
  FROM unnest(lines) WITH ORDINALITY u(l, line_at)
  WHERE u.l->>'table' = 'entity_schemas' AND neotoma._schema_row_problem(u.l->'row') IS NOT NULL
  ORDER BY u.line_at LIMIT 1;
  IF problem IS NOT NULL THEN
    PERFORM neotoma._raise(jsonb_build_object('code', 'VALIDATION_ERROR',
      'message', format('line %s of the import is an entity schema that cannot be used: %s', bad_at, problem),
      'details', jsonb_build_object('line', bad_at, 'table', 'entity_schemas')));
  END IF;
  FOREACH t IN ARRAY tables LOOP
    -- Rows exported before workspaces existed are in `default`; observations
    -- exported before write orders existed keep 0 (folded as they were);
    -- a relationship holds always until its assertions say otherwise
    -- (below). The row is read once, in FROM: `(f(…)).*` calls f once per
    -- column.
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT r.*
                    FROM unnest($2) l, LATERAL jsonb_populate_record(jsonb_populate_record(
                           jsonb_populate_record(NULL::neotoma.%1$I,
                                                 ''{"workspace": "default", "write_order": 0, "valid_during": "{(,)}"}''),
                           (l->''row'') - ''valid_during''), jsonb_build_object(''user_id'', $1)) r
                    WHERE l->>''table'' = %2$L ON CONFLICT DO NOTHING', t, t)
      USING u, lines;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF t = 'sources' THEN
      INSERT INTO neotoma.files (user_id, source_id, content)
      SELECT u, (l->'row'->>'id')::uuid, decode(l->'row'->>'file', 'base64') FROM unnest(lines) l
      WHERE l->>'table' = 'sources' AND l->'row'->>'file' IS NOT NULL
      ON CONFLICT DO NOTHING;
    END IF;
    -- When this batch's relationships hold: the union of their assertions'
    -- intervals (what create_relationship keeps, and verify() checks).
    IF t = 'relationship_observations' AND n > 0 THEN
      UPDATE neotoma.relationships r
      SET valid_during = coalesce((SELECT range_agg(tstzrange(o.valid_from, o.valid_to))
                                   FROM neotoma.relationship_observations o
                                   WHERE o.user_id = u AND o.relationship_id = r.id AND o.kind = 'assertion'), '{(,)}')
      WHERE r.user_id = u AND r.id IN (SELECT (l->'row'->>'relationship_id')::uuid FROM unnest(lines) l
                                       WHERE l->>'table' = 'relationship_observations');
    END IF;
    IF n > 0 THEN
      counts := counts || jsonb_build_object(t, n);
    END IF;
  END LOOP;
  -- A moved observation counts for the entity its split moved it to (its
  -- copy, imported too), not for the one it names: the entities of this
  -- batch's moved observations, and of the observations this batch's moves
  -- name, folded again from all their observations.
  SELECT array_agg(DISTINCT o.entity_id ORDER BY o.entity_id) INTO moved
  FROM neotoma.observation_moves m
  JOIN neotoma.observations o ON o.user_id = m.user_id AND o.id = m.observation_id
  WHERE m.user_id = u AND m.observation_id IN (
    SELECT (l->'row'->>'id')::uuid FROM unnest(lines) l WHERE l->>'table' = 'observations'
    UNION ALL
    SELECT (l->'row'->>'observation_id')::uuid FROM unnest(lines) l WHERE l->>'table' = 'observation_moves');
  IF moved IS NOT NULL THEN
    PERFORM neotoma_private._recompute_targets(u, moved);
  END IF;
  -- Observations written here from now on come after the imported ones.
  -- (This batch's lines only, here and below: reading all of the user's
  -- rows on every batch made an import grow with the square of its size.)
  SELECT max((l->'row'->>'write_order')::bigint) INTO n FROM unnest(lines) l
  WHERE l->>'table' = 'observations';
  IF n > (SELECT last_value FROM neotoma.observation_write_order) THEN
    PERFORM setval('neotoma.observation_write_order', n);
  END IF;
  -- Every workspace the batch's entities and sources name is one of the
  -- user's (a file may hold them without its workspaces lines).
  INSERT INTO neotoma.workspaces (user_id, name)
  SELECT DISTINCT u, l->'row'->>'workspace' FROM unnest(lines) l
  WHERE l->>'table' IN ('entities', 'sources') AND l->'row'->>'workspace' <> 'default'
  ON CONFLICT DO NOTHING;
  RETURN counts;
END $$;


SELECT neotoma_private.grant_platform_roles();
