-- 0.16.0 -> 0.17.0: semantic search at scale (docs/decisions.md, "Semantic
-- search at scale"): a user's embeddings fall into lists around centroids,
-- and a semantic search reads only the lists nearest its query.
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

-- The list each embedding falls in (none until the user's lists are built).
ALTER TABLE neotoma.entity_embeddings ADD COLUMN list_no integer;
CREATE INDEX entity_embeddings_lists ON neotoma.entity_embeddings (user_id, model, list_no);

CREATE FUNCTION neotoma."_embedding_list"("user_id" uuid, "model" TEXT, "embedding" real[]) RETURNS INT
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'embedding_list_wrapper';
CREATE FUNCTION neotoma_private."_build_embedding_lists"("user_id" uuid, "model" TEXT, "min_embeddings" INT)
RETURNS jsonb
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, neotoma, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', 'build_embedding_lists_wrapper';

-- Semantic search at scale (docs/decisions.md): once a user has many
-- embeddings by a model, they fall into about √n lists, each around a
-- centroid (spherical k-means over a sample: neotoma_embed::lists), and a
-- semantic search compares its query with the centroids and reads only the
-- embeddings of the nearest (neotoma.semantic_probes of them), ranked
-- exactly. An embedding written later falls in its nearest list at once
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
-- When each user's lists were last built, and how many entities they had.
CREATE TABLE neotoma.embedding_list_builds (
  user_id  uuid PRIMARY KEY,
  entities bigint NOT NULL,
  built_at timestamptz NOT NULL
);
-- Builds every model's lists of user `u` (see index_embeddings) and
-- records the build.
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
  INSERT INTO neotoma.embedding_list_builds (user_id, entities, built_at)
  VALUES (u, (SELECT coalesce(sum(c.current), 0) FROM neotoma.entity_counts c WHERE c.user_id = u), clock_timestamp())
  ON CONFLICT (user_id) DO UPDATE SET entities = EXCLUDED.entities, built_at = EXCLUDED.built_at;
  RETURN built;
END $$;

CREATE FUNCTION neotoma_private._embedding_listed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  NEW.list_no := neotoma._embedding_list(NEW.user_id, NEW.model, NEW.embedding);
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
-- last built (or never were), those with the most entities first. Answers
-- what it built.
CREATE FUNCTION neotoma_private.maintain_embedding_lists(max_builds integer DEFAULT 1,
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
  RETURN built;
END $$;
CREATE FUNCTION neotoma.maintain_embedding_lists(max_builds integer DEFAULT 1, min_embeddings integer DEFAULT 4096)
RETURNS jsonb
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.maintain_embedding_lists(max_builds, min_embeddings) $$;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['embedding_lists', 'embedding_list_builds'] LOOP
    EXECUTE format('ALTER TABLE neotoma.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE neotoma.%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY %I ON neotoma.%I USING (user_id = (SELECT neotoma.current_user_id())) '
                   'WITH CHECK (user_id = (SELECT neotoma.current_user_id()))', t || '_own_rows', t);
    EXECUTE format('GRANT SELECT ON neotoma.%I TO neotoma_user', t);
  END LOOP;
END $$;
REVOKE EXECUTE ON FUNCTION neotoma."_embedding_list"(uuid, text, real[]),
  neotoma_private."_build_embedding_lists"(uuid, text, integer),
  neotoma_private._build_user_embedding_lists(uuid, integer), neotoma_private._embedding_listed(),
  neotoma_private.index_embeddings(integer), neotoma.index_embeddings(integer),
  neotoma_private.maintain_embedding_lists(integer, integer), neotoma.maintain_embedding_lists(integer, integer)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma."_embedding_list"(uuid, text, real[]), neotoma.index_embeddings(integer),
  neotoma_private.index_embeddings(integer) TO neotoma_user;
GRANT EXECUTE ON FUNCTION neotoma.maintain_embedding_lists(integer, integer),
  neotoma_private.maintain_embedding_lists(integer, integer) TO neotoma_service;

-- The statistics keep up with the lists too.
CREATE OR REPLACE FUNCTION neotoma_private._refresh_statistics() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, neotoma, pg_temp SET client_min_messages = error AS $$
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
                             'neotoma.entity_name_trigrams', 'neotoma.embedding_lists']::regclass[])
      AND pg_relation_size(c.oid) >= 8192::bigint * greatest(2 * c.relpages, 1)
    ORDER BY c.oid
  LOOP
    EXECUTE format('ANALYZE (SKIP_LOCKED) %s', t);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;

-- Supabase-style platform roles get what neotoma_user has, as at install.
SELECT neotoma_private.grant_platform_roles();
