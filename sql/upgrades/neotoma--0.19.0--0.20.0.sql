-- 0.19.0 -> 0.20.0: the gateway reads no table or catalog itself (issue
-- 41): neotoma.gateway_handshake() answers the installed version and the
-- role's privileges, neotoma.file_content() a file's bytes, and
-- neotoma.recompute_snapshots() folds an imported memory again; an import
-- reads only its batch, not all of the user's rows, after each batch (no
-- table changes).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

CREATE FUNCTION neotoma.gateway_handshake() RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object(
    'extension_version', (SELECT extversion FROM pg_extension WHERE extname = 'neotoma'),
    'operator', pg_has_role('neotoma_operator', 'USAGE'),
    'token_context', has_parameter_privilege('neotoma.token_id', 'SET')) $$;

CREATE FUNCTION neotoma.file_content(source_id uuid) RETURNS bytea
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT f.content FROM neotoma.files f
  WHERE f.user_id = neotoma.current_user_id() AND f.source_id = file_content.source_id $$;

CREATE FUNCTION neotoma.recompute_snapshots(after text, how_many integer) RETURNS text[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE ids text[];
BEGIN
  SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}') INTO ids FROM (
    SELECT e.id FROM neotoma.entities e
    WHERE e.user_id = neotoma.current_user_id() AND (after IS NULL OR e.id > after)
    ORDER BY e.id LIMIT greatest(how_many, 0)) x;
  IF cardinality(ids) > 0 THEN
    PERFORM neotoma_private._recompute(neotoma.current_user_id(), ids);
  END IF;
  RETURN ids;
END $$;

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
    EXECUTE format('INSERT INTO neotoma.%1$I SELECT (jsonb_populate_record(NULL::neotoma.%1$I,
                      ''{"workspace": "default", "write_order": 0}'' || (l->''row'') - ''file''
                      || jsonb_build_object(''user_id'', $1))).*
                    FROM unnest($2) l WHERE l->>''table'' = %2$L ON CONFLICT DO NOTHING', t, t)
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

REVOKE EXECUTE ON FUNCTION neotoma.gateway_handshake(), neotoma.file_content(uuid),
  neotoma.recompute_snapshots(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.gateway_handshake(), neotoma.file_content(uuid),
  neotoma.recompute_snapshots(text, integer) TO neotoma_user;

-- Supabase-style platform roles get what neotoma_user has, as at install.
SELECT neotoma_private.grant_platform_roles();
