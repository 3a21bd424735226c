-- 0.21.0 -> 0.22.0: contradictions listed from an index (issue 40). Each
-- field's reducer state keeps whether its observations give two or more
-- values and come from two or more sources ("d"); the index
-- entity_snapshots_disagreeing holds the entities with such a field, and
-- list_contradictions reads its candidates there. States folded before
-- have no such bits: every snapshot whose stored state differs from the
-- fold of its observations is folded again (neotoma.verify(true), as a
-- repair does), so the index holds every candidate when the update ends
-- (about as long as a verify(): 111 s for 415,000 entities on a 2-core
-- machine). The upkeep's maintain_embedding_lists also places in their
-- nearest list the embeddings a build left in none (stored while it ran).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

CREATE INDEX entity_snapshots_disagreeing ON neotoma.entity_snapshots (user_id, entity_id)
  WHERE reducer_state @? '$.fields.* ? (@.d == 3)';

SELECT neotoma.verify(true) IS NOT NULL;

-- For the gateway's background upkeep (neotoma_service): builds the lists
-- of at most `max_builds` users whose entities (neotoma.entity_counts)
-- reached `min_embeddings` and at least doubled since their lists were
-- last built (or never were), those with the most entities first; then
-- places in their nearest list the embeddings that are in none although
-- their user has lists (stored while a build ran, after what it read: every
-- search reads them all, 5,645 of 50,200 in one benchmark). Answers what
-- it built.
CREATE OR REPLACE FUNCTION neotoma_private.maintain_embedding_lists(max_builds integer DEFAULT 1,
                                                         min_embeddings integer DEFAULT 4096) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  c record;
  built jsonb := '[]';
BEGIN
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
  RETURN built;
END $$;

SELECT neotoma_private.grant_platform_roles();
