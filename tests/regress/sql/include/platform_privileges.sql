\set ECHO none
-- pg_temp.privileges(role): every privilege a role has on Neotoma's
-- functions, tables, columns, schemas and settings, one line each (for
-- 51_supabase, which compares roles by them).
CREATE FUNCTION pg_temp.privileges(r name) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT 'function ' || p.oid::regprocedure FROM pg_proc p
  WHERE p.pronamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
    AND has_function_privilege(r, p.oid, 'EXECUTE')
  UNION ALL
  SELECT format('table %s %s', c.oid::regclass, m) FROM pg_class c,
         unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) m
  WHERE c.relnamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
    AND c.relkind IN ('r', 'v', 'p') AND has_table_privilege(r, c.oid, m)
  UNION ALL
  SELECT format('column %s.%s %s', c.oid::regclass, a.attname, m) FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped,
       unnest(ARRAY['SELECT', 'INSERT', 'UPDATE']) m
  WHERE c.relnamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
    AND c.relkind IN ('r', 'v', 'p') AND has_column_privilege(r, c.oid, a.attnum, m)
  UNION ALL
  SELECT 'schema ' || n FROM unnest(ARRAY['neotoma', 'neotoma_private']) n
  WHERE has_schema_privilege(r, n, 'USAGE')
  UNION ALL
  SELECT 'set ' || p FROM unnest(ARRAY['neotoma.user_id', 'neotoma.token_id', 'neotoma.operator']) p
  WHERE has_parameter_privilege(r, p, 'SET') $$;
\set ECHO all
