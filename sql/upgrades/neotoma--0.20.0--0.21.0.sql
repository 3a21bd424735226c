-- 0.20.0 -> 0.21.0: an import folds once (issue 40): import_lines folds
-- again the entities whose observations a split moved, so the snapshots are
-- the fold of the imported observations when it returns, and neotoma-mcp
-- import no longer recomputes every snapshot afterwards; each imported row
-- is read once, not once per column (no table changes).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

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
    -- exported before write orders existed keep 0 (folded as they were).
    -- The row is read once, in FROM: `(f(…)).*` calls f once per column.
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT r.*
                    FROM unnest($2) l, LATERAL jsonb_populate_record(jsonb_populate_record(
                           jsonb_populate_record(NULL::neotoma.%1$I, ''{"workspace": "default", "write_order": 0}''),
                           l->''row''), jsonb_build_object(''user_id'', $1)) r
                    WHERE l->>''table'' = %2$L ON CONFLICT DO NOTHING', t, t)
      USING u, lines;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF t = 'sources' THEN
      INSERT INTO neotoma.files (user_id, source_id, content)
      SELECT u, (l->'row'->>'id')::uuid, decode(l->'row'->>'file', 'base64') FROM unnest(lines) l
      WHERE l->>'table' = 'sources' AND l->'row'->>'file' IS NOT NULL
      ON CONFLICT DO NOTHING;
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
