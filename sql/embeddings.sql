-- Semantic search: each entity's embeddings of its text (type, name and
-- fields: neotoma._embedding_text), one per model. The server's model
-- (neotoma.embedding_model, the built-in potion-base-8M by default) embeds
-- in the transaction that writes the snapshot, by the triggers below, so an
-- entity is found by meaning at once. A gateway's remote provider
-- (--embeddings-url) embeds later: neotoma.pending_embeddings lists what it
-- has not embedded, neotoma.put_embeddings writes what it has. A snapshot's
-- text changing drops every model's embedding of it. An entity has no row
-- of the server's model while none is installed or when the model knows no
-- word of it; neotoma.verify() checks those rows against the snapshots and
-- verify(true) writes the missing (e.g. after the model was installed).
-- Real arrays: Debian's Postgres 15 has no pgvector; queries compare them
-- with neotoma._cosine.
CREATE TABLE neotoma.entity_embeddings (
  user_id     uuid NOT NULL,
  entity_id   text NOT NULL,
  entity_type text NOT NULL,
  model       text NOT NULL,
  embedding   real[] NOT NULL,
  -- The list it falls in (embedding_lists, below); NULL while the user has
  -- no lists of the model.
  list_no     integer,
  -- Its compact copy (4 bits a component: neotoma._embedding_code; NULL
  -- past 3,072 components), which a search scans from the index below.
  code        bytea GENERATED ALWAYS AS (neotoma._embedding_code(embedding)) STORED,
  -- Whether its list's row of packed codes (embedding_list_codes, below)
  -- holds this code; false from when it is written until its list is
  -- packed again.
  packed      boolean NOT NULL DEFAULT false,
  PRIMARY KEY (user_id, entity_id, model)
);
-- A list's embeddings (packing them).
CREATE INDEX entity_embeddings_lists ON neotoma.entity_embeddings (user_id, model, list_no);
-- The codes of those written since their list was packed, read from the
-- index alone (an eighth of the bytes of the embeddings, which a search
-- then reads only for the best few): a search scores them one by one.
CREATE INDEX entity_embeddings_unpacked ON neotoma.entity_embeddings (user_id, model, list_no)
  INCLUDE (entity_id, entity_type, code) WHERE NOT packed;
-- Those a search compares exactly whatever their codes say: in no list
-- (read all) or without a code (read by list). Few once a user has lists
-- of a model that has codes, and found without reading the others.
CREATE INDEX entity_embeddings_exact ON neotoma.entity_embeddings (user_id, model, list_no)
  WHERE list_no IS NULL OR code IS NULL;

-- A snapshot written or changed: every embedding of it dropped, the server
-- model's recomputed (when it can be); a snapshot deleted: its embeddings
-- too.
CREATE FUNCTION neotoma_private._embedding_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  v real[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM neotoma.entity_embeddings e WHERE e.user_id = OLD.user_id AND e.entity_id = OLD.entity_id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM neotoma.entity_embeddings e WHERE e.user_id = NEW.user_id AND e.entity_id = NEW.entity_id;
  END IF;
  v := neotoma._entity_embedding(NEW.entity_type, NEW.snapshot);
  IF v IS NOT NULL THEN
    INSERT INTO neotoma.entity_embeddings (user_id, entity_id, entity_type, model, embedding)
    VALUES (NEW.user_id, NEW.entity_id, NEW.entity_type, neotoma._embedding_model(), v)
    ON CONFLICT (user_id, entity_id, model) DO UPDATE
      SET entity_type = EXCLUDED.entity_type, embedding = EXCLUDED.embedding;
  END IF;
  RETURN NULL;
END $$;
CREATE FUNCTION neotoma_private._embeddings_truncated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  TRUNCATE neotoma.entity_embeddings;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_snapshots_embedding AFTER INSERT OR DELETE ON neotoma.entity_snapshots
  FOR EACH ROW EXECUTE FUNCTION neotoma_private._embedding_changed();
CREATE TRIGGER entity_snapshots_embedding_changed AFTER UPDATE ON neotoma.entity_snapshots
  FOR EACH ROW WHEN (OLD.snapshot IS DISTINCT FROM NEW.snapshot OR OLD.entity_type IS DISTINCT FROM NEW.entity_type)
  EXECUTE FUNCTION neotoma_private._embedding_changed();
CREATE TRIGGER entity_snapshots_embeddings_truncated AFTER TRUNCATE ON neotoma.entity_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._embeddings_truncated();

-- For a gateway's remote embeddings provider (neotoma_service only: it
-- serves every user). The entities without an embedding by `model`, with
-- the text to embed, in key order, at most `max_rows` (1–1,000), leaving out
-- the `skip` keys ('<user id> <entity id>': texts the provider refused).
CREATE FUNCTION neotoma_private.pending_embeddings(model text, max_rows integer DEFAULT 64, skip text[] DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', p.user_id, 'entity_id', p.entity_id, 'text', p.text)
                            ORDER BY p.user_id, p.entity_id), '[]')
  FROM (SELECT s.user_id, s.entity_id, neotoma._embedding_text(s.entity_type, s.snapshot) AS text
        FROM neotoma.entity_snapshots s
        WHERE NOT EXISTS (SELECT FROM neotoma.entity_embeddings v
                          WHERE v.user_id = s.user_id AND v.entity_id = s.entity_id AND v.model = $1)
          AND NOT (s.user_id::text || ' ' || s.entity_id) = ANY (coalesce($3, '{}'))
        ORDER BY s.user_id, s.entity_id
        LIMIT greatest(1, least(coalesce($2, 64), 1000))) p
$$;
CREATE FUNCTION neotoma.pending_embeddings(model text, max_rows integer DEFAULT 64, skip text[] DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.pending_embeddings(model, max_rows, skip) $$;

-- The same for the entities one transaction changed, as a notification on
-- neotoma_changes names it ('<user id> <xid>'): those of its entries in the
-- change feed without an embedding by `model`, in key order, at most
-- `max_rows`. Reads a transaction's entries, not every snapshot.
CREATE FUNCTION neotoma_private.pending_embeddings_of(model text, user_id uuid, xid xid8, max_rows integer DEFAULT 64,
                                              skip text[] DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', s.user_id, 'entity_id', s.entity_id,
                                               'text', neotoma._embedding_text(s.entity_type, s.snapshot))
                            ORDER BY s.entity_id), '[]')
  FROM (SELECT DISTINCT c.entity_id FROM neotoma.changes c
        WHERE c.user_id = $2 AND c.xid = $3 AND c.kind = 'entity'
          AND NOT EXISTS (SELECT FROM neotoma.entity_embeddings v
                          WHERE v.user_id = $2 AND v.entity_id = c.entity_id AND v.model = $1)
          AND NOT ($2::text || ' ' || c.entity_id) = ANY (coalesce($5, '{}'))
        ORDER BY c.entity_id
        LIMIT greatest(1, least(coalesce($4, 64), 1000))) c
  JOIN neotoma.entity_snapshots s ON s.user_id = $2 AND s.entity_id = c.entity_id
$$;
CREATE FUNCTION neotoma.pending_embeddings_of(model text, user_id uuid, xid xid8, max_rows integer DEFAULT 64,
                                              skip text[] DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.pending_embeddings_of(model, user_id, xid, max_rows, skip) $$;

-- Writes the embeddings a remote provider computed by `model`: `rows` is
-- [{user_id, entity_id, text, embedding: [numbers]}], each written only if
-- the entity's text is still `text` (read with its snapshot locked, so a
-- change committing meanwhile leaves it pending rather than stale). Returns
-- how many were written.
CREATE FUNCTION neotoma_private.put_embeddings(model text, rows jsonb) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
#variable_conflict use_column
DECLARE
  written integer;
BEGIN
  IF model IS NULL OR model !~ '^[[:print:]]{1,200}$' OR model = neotoma._embedding_model() THEN
    RAISE EXCEPTION 'put_embeddings: a model name of 1 to 200 printable characters, not the server''s own';
  END IF;
  IF jsonb_typeof(rows) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'put_embeddings: rows must be an array';
  END IF;
  WITH r AS (
    SELECT (x->>'user_id')::uuid AS user_id, x->>'entity_id' AS entity_id, x->>'text' AS text,
           ARRAY(SELECT e::real FROM jsonb_array_elements_text(x->'embedding') e) AS embedding
    FROM jsonb_array_elements(rows) x
    WHERE jsonb_typeof(x->'embedding') = 'array'),
  current AS (
    SELECT s.user_id, s.entity_id, s.entity_type, r.embedding
    FROM r JOIN neotoma.entity_snapshots s ON s.user_id = r.user_id AND s.entity_id = r.entity_id
    WHERE neotoma._embedding_text(s.entity_type, s.snapshot) = r.text
      AND cardinality(r.embedding) BETWEEN 1 AND 4096
    FOR SHARE OF s),
  ins AS (
    INSERT INTO neotoma.entity_embeddings (user_id, entity_id, entity_type, model, embedding)
    SELECT c.user_id, c.entity_id, c.entity_type, put_embeddings.model, c.embedding FROM current c
    ON CONFLICT (user_id, entity_id, model) DO UPDATE
      SET entity_type = EXCLUDED.entity_type, embedding = EXCLUDED.embedding
    RETURNING 1)
  SELECT count(*) INTO written FROM ins;
  RETURN written;
END $$;
CREATE FUNCTION neotoma.put_embeddings(model text, rows jsonb) RETURNS integer
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.put_embeddings(model, rows) $$;

-- Drops every embedding by `model` (not the server's own, which the
-- triggers keep): the rows of a remote model no gateway uses any more
-- (changing --embeddings-model starts a new set). Returns how many went.
-- For operators.
CREATE FUNCTION neotoma_private.drop_embeddings(model text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  dropped bigint;
BEGIN
  IF model IS NULL OR model = neotoma._embedding_model() THEN
    RAISE EXCEPTION 'drop_embeddings: the server''s own model''s embeddings are kept with the snapshots: name another';
  END IF;
  DELETE FROM neotoma.entity_embeddings v WHERE v.model = drop_embeddings.model;
  GET DIAGNOSTICS dropped = ROW_COUNT;
  RETURN dropped;
END $$;
CREATE FUNCTION neotoma.drop_embeddings(model text) RETURNS bigint
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.drop_embeddings(model) $$;

-- Semantic search at scale (docs/decisions.md): once a user has many
-- embeddings by a model, they fall into about √n lists, each around a
-- centroid (spherical k-means over a sample: neotoma_embed::lists), and a
-- semantic search compares its query with the centroids and reads only the
-- embeddings of the nearest (neotoma.semantic_probes of them): their codes
-- from the lists' index, the likest then ranked exactly. An embedding written later falls in its nearest list at once
-- (the trigger below); neotoma.index_embeddings() builds a user's lists
-- anew, and the MCP gateway rebuilds them in the background whenever a
-- user's entities have doubled since (maintain_embedding_lists). `build`
-- stamps one build: a backend's kept centroids are renewed when it changes.
CREATE TABLE neotoma.embedding_lists (
  user_id  uuid NOT NULL,
  model    text NOT NULL,
  list_no  integer NOT NULL,
  centroid real[] NOT NULL,
  build    bigint NOT NULL,
  PRIMARY KEY (user_id, model, list_no)
);
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

-- When each user's lists were last built, and how many entities they had.
CREATE TABLE neotoma.embedding_list_builds (
  user_id  uuid PRIMARY KEY,
  entities bigint NOT NULL,
  built_at timestamptz NOT NULL
);
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

-- The same for the trigrams of names: a search of a word no entity has (a
-- typo) compares names by the word's rare trigrams, those in at most
-- RARE_TERM_ENTITIES names, and read each trigram's index up to that many
-- rows to tell (a few milliseconds a typo at 300,000 entities). The
-- trigrams of more than 1,000 of a user's names, counted with the lexemes,
-- tell it beforehand: a trigram here with more names than that is common
-- without reading (search_entities.sql, rare_grams); as for lexemes, one
-- grown common since is read, and the next build renews the counts.
CREATE TABLE neotoma.common_name_trigrams (
  user_id uuid   NOT NULL,
  trigram text   NOT NULL,
  names   bigint NOT NULL,
  PRIMARY KEY (user_id, trigram)
);
-- Counts the names of user `u` having each trigram (entity_name_trigrams)
-- and keeps the trigrams of more than `more_than`; answers how many.
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

-- Builds every model's lists of user `u` (see index_embeddings), counts
-- the user's common lexemes and name trigrams, and records the build.
CREATE FUNCTION neotoma_private._build_user_embedding_lists(u uuid, min_embeddings integer) RETURNS jsonb
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

CREATE FUNCTION neotoma_private._embedding_listed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  NEW.list_no := neotoma._embedding_list(NEW.user_id, NEW.model, NEW.embedding);
  NEW.packed := false;
  RETURN NEW;
END $$;
CREATE TRIGGER entity_embeddings_list BEFORE INSERT OR UPDATE OF embedding, model ON neotoma.entity_embeddings
  FOR EACH ROW EXECUTE FUNCTION neotoma_private._embedding_listed();

-- Builds the session user's lists anew, for every model they have
-- embeddings by; with fewer than `min_embeddings` of a model, it has no
-- lists (every search reads them all). Answers [{model, embeddings, lists}].
CREATE FUNCTION neotoma_private.index_embeddings(min_embeddings integer DEFAULT 4096) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  u uuid := neotoma.current_user_id();
BEGIN
  IF u IS NULL THEN
    RAISE EXCEPTION 'index_embeddings: no user is established for this session';
  END IF;
  RETURN neotoma_private._build_user_embedding_lists(u, min_embeddings);
END $$;
CREATE FUNCTION neotoma.index_embeddings(min_embeddings integer DEFAULT 4096) RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.index_embeddings(min_embeddings) $$;

-- For the gateway's background upkeep (neotoma_service): builds the lists
-- of at most `max_builds` users whose entities (neotoma.entity_counts)
-- reached `min_embeddings` and at least doubled since their lists were
-- last built (or never were), those with the most entities first; then
-- places in their nearest list the embeddings that are in none although
-- their user has lists (stored while a build ran, after what it read: every
-- search reads them all, 5,645 of 50,200 in one benchmark), and packs
-- again (64 at most) the lists that gained 32 embeddings or more since
-- they were packed. Answers what it built. A round that finds a user whose
-- common words are not those posted (sql/word_postings.sql: a build
-- counted them since) posts them and does nothing else: it waits for the
-- user's writes and they for it, so it holds no other lock and ends soon.
-- Every round first renders again the snapshots whose valid time moved on
-- since they were written (sql/valid_time.sql), at most 1,000.
CREATE FUNCTION neotoma_private.maintain_embedding_lists(max_builds integer DEFAULT 1,
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
CREATE FUNCTION neotoma.maintain_embedding_lists(max_builds integer DEFAULT 1, min_embeddings integer DEFAULT 4096)
RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.maintain_embedding_lists(max_builds, min_embeddings) $$;
