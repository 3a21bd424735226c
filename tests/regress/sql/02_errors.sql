-- Errors are raised with SQLSTATE NT001 and the envelope as JSON detail.
\ir include/setup.sql

SELECT try_action('get_version', '{"bogus": 1}');
SELECT try_action('get_current_time', '[]');
SELECT try_action('get_version', '"text"');

-- The message reads "CODE: message" for psql users.
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT neotoma.get_version('{"bogus": 1}');

-- Unknown actions through the dispatcher answer an envelope, not a crash.
SELECT neotoma._invoke('no_such_action', '{}');
SELECT neotoma._invoke('get_version', '{}') ? 'ok' AS ok;

-- An error inside a transaction aborts it: nothing half-written survives.
BEGIN;
CREATE TABLE scratch (x int);
INSERT INTO scratch VALUES (1);
SELECT neotoma.get_version('{"bogus": 1}');
COMMIT;
SELECT to_regclass('scratch') AS scratch_after_failed_transaction;
