-- A canonical description of everything the extension installed: one line
-- per object with every property that could differ between a fresh install
-- and an upgraded one. Two databases are equal when their descriptions are.
\pset format unaligned
\pset tuples_only on
WITH acl(oid, kind, text) AS (
  SELECT c.oid, 'rel', (SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(c.relacl) a) FROM pg_class c
  UNION ALL
  SELECT p.oid, 'fn', (SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(p.proacl) a) FROM pg_proc p
)
SELECT line FROM (
  SELECT 'extension ' || extname || ' ' || extversion AS line FROM pg_extension WHERE extname = 'neotoma'
  UNION ALL
  SELECT format('schema %s owner=%s acl=%s comment=%s', n.nspname, pg_get_userbyid(n.nspowner),
                (SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(n.nspacl) a),
                obj_description(n.oid, 'pg_namespace'))
  FROM pg_namespace n WHERE n.nspname IN ('neotoma', 'neotoma_private')
  UNION ALL
  SELECT format('function %s returns %s lang=%s volatile=%s strict=%s secdef=%s parallel=%s leakproof=%s config=%s acl=%s bin=%s src=%s comment=%s',
                p.oid::regprocedure, pg_get_function_result(p.oid), l.lanname, p.provolatile, p.proisstrict,
                p.prosecdef, p.proparallel, p.proleakproof, p.proconfig, acl.text, p.probin, md5(p.prosrc),
                md5(obj_description(p.oid, 'pg_proc')))
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang JOIN acl ON acl.oid = p.oid AND acl.kind = 'fn'
  WHERE p.pronamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
  UNION ALL
  SELECT format('relation %s kind=%s rls=%s force_rls=%s options=%s acl=%s comment=%s', c.relname, c.relkind,
                c.relrowsecurity, c.relforcerowsecurity, c.reloptions, acl.text, obj_description(c.oid, 'pg_class'))
  FROM pg_class c JOIN acl ON acl.oid = c.oid AND acl.kind = 'rel'
  WHERE c.relnamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
  UNION ALL
  SELECT format('column %s.%s #%s %s notnull=%s default=%s compression=%s', c.relname, a.attname, a.attnum,
                format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid),
                nullif(a.attcompression, ''))
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  WHERE c.relnamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace) AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT format('constraint %s.%s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
  FROM pg_constraint WHERE connamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
  UNION ALL
  SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE c.relnamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace)
  UNION ALL
  SELECT format('policy %s.%s cmd=%s permissive=%s roles=%s using=%s check=%s', tablename, policyname, cmd,
                permissive, roles, qual, with_check)
  FROM pg_policies WHERE schemaname IN ('neotoma', 'neotoma_private')
  UNION ALL
  SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  WHERE c.relnamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace) AND NOT t.tgisinternal
  UNION ALL
  SELECT format('view %s %s', c.relname, md5(pg_get_viewdef(c.oid))) FROM pg_class c
  WHERE c.relnamespace IN ('neotoma'::regnamespace, 'neotoma_private'::regnamespace) AND c.relkind = 'v'
  UNION ALL
  SELECT format('member %s of %s', pg_get_userbyid(m.member), pg_get_userbyid(m.roleid)) FROM pg_auth_members m
  WHERE pg_get_userbyid(m.roleid) LIKE 'neotoma\_%' AND pg_get_userbyid(m.member) LIKE 'neotoma\_%'
  UNION ALL
  SELECT format('parameter %s acl=%s', parname, paracl) FROM pg_parameter_acl WHERE parname LIKE 'neotoma.%'
  UNION ALL
  SELECT format('depends %s', pg_describe_object(d.classid, d.objid, d.objsubid))
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
  WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = 'neotoma' AND d.deptype = 'e'
  UNION ALL
  SELECT format('global schema %s %s active=%s %s', entity_type, schema_version, active, md5(definition::text))
  FROM neotoma.entity_schemas WHERE user_id = neotoma.global_user_id()
  UNION ALL
  SELECT format('signing keys: %s usable', count(*)) FROM neotoma.signing_keys WHERE revoked_at IS NULL
) d ORDER BY line;
