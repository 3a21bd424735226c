-- Planner statistics that keep up with the memory's growth (see
-- extension/src/statistics.rs): after each write action, the tables that
-- have at least doubled since their statistics were taken (or never had
-- any) are analysed, which also renews every backend's kept plans over
-- them. SKIP_LOCKED: a table another transaction is analysing is left to it.
-- A sample of 9,000 rows (statistics target 30, not 100): ANALYZE holds its
-- sample in the writing backend, and 30,000 snapshots took 80 MB of it
-- (24 MB now) and 1.6 s of a store (0.7 s); autovacuum's later ANALYZE
-- takes the full sample. Runs as the tables' owner; answers how many tables
-- it analysed.
CREATE FUNCTION neotoma_private._refresh_statistics() RETURNS integer
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
