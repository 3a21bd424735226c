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
