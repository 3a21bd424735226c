-- neotoma 0.4.0 -> 0.5.0: a store folds its own observations and writes them
-- with their snapshots in one statement; the observation trigger folds
-- every other insert (its WHEN asks neotoma._store_folding(), which only the
-- extension's code makes true, for that statement). The deprecated record
-- actions of the earlier specification: update_record, retrieve_records,
-- delete_record; get_product_analytics, for operators.
-- neotoma._recount_entities() rebuilds the session's user's
-- counts only (it rebuilt every user's: it runs as the owner, usually a
-- superuser, whom row level security does not restrict).
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

CREATE OR REPLACE FUNCTION neotoma.update_record(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('update_record', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.update_record(jsonb) IS
  'Deprecated (earlier specification): sets the properties of a record (an entity: `id`) by corrections, one per property. Use correct.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_records(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_records', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_records(jsonb) IS
  'Deprecated (earlier specification): entities as records, filtered by `type`, `properties` and keyword `search` terms. Use retrieve_entities.';

CREATE OR REPLACE FUNCTION neotoma.delete_record(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('delete_record', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.delete_record(jsonb) IS
  'Deprecated (earlier specification): clears every property of a record (an entity) by corrections; its history stays. Use correct.';
CREATE OR REPLACE FUNCTION neotoma.get_product_analytics(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_product_analytics', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_product_analytics(jsonb) IS
  'Product metrics computed from the memory itself, across users, for operators only: activation (e.g. activation_first_upload_rate), retention (day_1_retention, week_1_retention, month_1_retention), usage (daily_active_users, weekly_active_users, avg_uploads_per_user_per_week), the signup → upload → extraction → entity → timeline funnel, and weekly cohorts, over time_range (default the last 30 days). Aggregates only. Returns {metric_type, metric_name, value (a number or [{date, value}]), time_range, metadata}.';
REVOKE EXECUTE ON FUNCTION neotoma.get_product_analytics(jsonb), neotoma.update_record(jsonb),
  neotoma.retrieve_records(jsonb), neotoma.delete_record(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.get_product_analytics(jsonb), neotoma.update_record(jsonb),
  neotoma.retrieve_records(jsonb), neotoma.delete_record(jsonb) TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma._recount_entities() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  WITH scope AS (
    SELECT (SELECT neotoma.current_user_id()) AS user_id,
           (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user) AS everyone),
  cleared AS (
    DELETE FROM neotoma.entity_counts c USING scope s
    WHERE c.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone))
  INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
  SELECT e.user_id, e.entity_type, count(*) FILTER (WHERE e.merged_into IS NULL), count(*)
  FROM neotoma.entities e, scope s
  WHERE e.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone)
  GROUP BY e.user_id, e.entity_type;
$$;
