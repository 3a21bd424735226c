-- Runs last in CREATE EXTENSION neotoma, after the Rust functions exist.

-- Creates one SQL function per action of the catalog (and per legacy alias):
--   neotoma.<action>(args jsonb DEFAULT '{}') RETURNS jsonb
-- Each calls the Rust dispatcher and turns an error result into a raised
-- NT001 error carrying the envelope, so the whole action is one transaction.
CREATE FUNCTION neotoma._install_action_functions() RETURNS integer
LANGUAGE plpgsql AS $install$
DECLARE
  a jsonb;
  fn text;
  n integer := 0;
BEGIN
  FOR a IN SELECT value FROM jsonb_array_elements(neotoma.action_catalog()->'actions') LOOP
    FOR fn IN SELECT a->>'name' UNION ALL SELECT jsonb_array_elements_text(a->'aliases') LOOP
      EXECUTE format($f$
        CREATE OR REPLACE FUNCTION neotoma.%I(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
        LANGUAGE plpgsql VOLATILE AS $body$
        DECLARE r jsonb := neotoma._invoke(%L, args);
        BEGIN
          IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
          RETURN r->'ok';
        END $body$$f$, fn, fn);
      EXECUTE format('COMMENT ON FUNCTION neotoma.%I(jsonb) IS %L', fn,
        CASE WHEN fn = a->>'name' THEN a->>'description'
             ELSE format('Legacy name of neotoma.%s: %s', a->>'name', a->>'description') END);
      n := n + 1;
    END LOOP;
  END LOOP;
  RETURN n;
END $install$;

SELECT neotoma._install_action_functions();

-- The seeded entity schemas (global, active).
INSERT INTO neotoma.entity_schemas (user_id, id, entity_type, schema_version, description, definition, active)
SELECT neotoma.global_user_id(), (s->>'id')::uuid, s->>'entity_type', s->>'schema_version',
       s->>'description', s->'definition', true
FROM jsonb_array_elements(neotoma._builtin_schemas()) AS s;

-- Snapshots follow observations: every statement that inserts observations
-- folds them into their entities' snapshots (and identifiers) before it ends.
CREATE FUNCTION neotoma._observations_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM neotoma._apply_observations((
    SELECT jsonb_agg(jsonb_build_object(
             'user_id', n.user_id, 'id', n.id, 'entity_id', n.entity_id,
             'source_id', n.source_id, 'observed_at', neotoma._micros(n.observed_at),
             'source_priority', n.source_priority, 'specificity_score', n.specificity_score,
             'fields', n.fields)
           ORDER BY n.user_id, n.entity_id, n.id)
    FROM new_observations n));
  RETURN NULL;
END $$;
CREATE TRIGGER observations_reduce AFTER INSERT ON neotoma.observations
  REFERENCING NEW TABLE AS new_observations
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma._observations_inserted();

-- Everyone may use the schema; row level security decides which rows.
GRANT USAGE ON SCHEMA neotoma TO PUBLIC;
GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA neotoma TO PUBLIC;
REVOKE ALL ON neotoma.api_tokens FROM PUBLIC;
GRANT UPDATE, DELETE ON neotoma.entities, neotoma.entity_snapshots, neotoma.entity_identifiers,
  neotoma.interpretation_runs, neotoma.raw_fragments, neotoma.entity_schemas, neotoma.relationships,
  neotoma.timeline_events, neotoma.schema_recommendations TO PUBLIC;

COMMENT ON SCHEMA neotoma IS
  'Neotoma: a memory for AI agents. One function per action (neotoma.<action>(jsonb)); '
  'see neotoma.action_catalog().';
