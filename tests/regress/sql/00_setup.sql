-- The setup every test includes first (include/setup.sql): installs the
-- extension in the fresh regression database unless it is there, the helper
-- try_action() that runs an action and answers its result, or its SQLSTATE
-- and error envelope when it fails, error_code(), and the roles the tests
-- act as.
\ir include/setup.sql

SELECT extname FROM pg_extension WHERE extname = 'neotoma';
SELECT error_code(try_action('get_version', '{"bogus": 1}')) AS try_action_catches,
       error_code(try_action('get_version')) IS NULL AS try_action_answers;
SELECT r.rolname, r.rolsuper, r.rolbypassrls, pg_has_role(r.oid, 'neotoma_service', 'MEMBER') AS service,
       pg_has_role(r.oid, 'neotoma_operator', 'MEMBER') AS operator
FROM pg_roles r WHERE r.rolname IN ('neotoma_regress_agent', 'neotoma_regress_operator') ORDER BY 1;

-- Including it again changes nothing and says nothing.
\ir include/setup.sql
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'neotoma';
