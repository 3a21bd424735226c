-- neotoma 0.4.0 -> 0.5.0: a store folds its own observations and writes them
-- with their snapshots in one statement; the observation trigger folds
-- every other insert (its WHEN asks neotoma._store_folding(), which only the
-- extension's code makes true, for that statement).
\echo Use "ALTER EXTENSION neotoma UPDATE TO '0.5.0'" to load this file. \quit

CREATE FUNCTION neotoma."_store_folding"() RETURNS bool
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'store_folding_wrapper';
REVOKE EXECUTE ON FUNCTION neotoma._store_folding() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma._store_folding() TO neotoma_user;

DROP TRIGGER observations_reduce ON neotoma.observations;
CREATE TRIGGER observations_reduce AFTER INSERT ON neotoma.observations
  REFERENCING NEW TABLE AS new_observations
  FOR EACH STATEMENT WHEN (NOT neotoma._store_folding())
  EXECUTE FUNCTION neotoma._observations_inserted();
