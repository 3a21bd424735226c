-- A library serves a database at its own version and at the release before
-- it, so that an update can roll (docs/upgrades.md); at any older version
-- every action answers SERVICE_UNAVAILABLE naming the command to run, and
-- nothing is written. Its own database, installed at the oldest release.
\set regress_db :DBNAME
CREATE DATABASE neotoma_regress_versions;
\c neotoma_regress_versions
SET client_min_messages = warning;
CREATE EXTENSION neotoma VERSION '0.1.0';
RESET client_min_messages;
CREATE FUNCTION pg_temp.stored() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN CASE WHEN neotoma.store('{"user_id": "a0000000-0000-0000-0000-00000000000a",
                         "entities": [{"entity_type": "person", "name": "Served Once", "email": "served@example.com"}]}')
                   ->'entities'->0->>'entity_id' LIKE 'ent_%' THEN 'stored' END;
EXCEPTION WHEN OTHERS THEN
  DECLARE detail text;
  BEGIN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN (detail::jsonb->>'code') || CASE WHEN detail::jsonb->>'message' LIKE '%run ALTER EXTENSION neotoma UPDATE%'
                                            THEN ': run ALTER EXTENSION neotoma UPDATE' ELSE ': ' || (detail::jsonb->>'message') END;
  END;
END $$;
SELECT pg_temp.stored() AS at_the_oldest_release;
SELECT count(*) AS entities_written FROM neotoma.entities;
-- The release before the library's: the newest version below it that the
-- upgrade scripts reach.
SELECT p.target AS previous
FROM pg_extension_update_paths('neotoma') p, pg_available_extensions a
WHERE a.name = 'neotoma' AND p.source = '0.1.0' AND p.path IS NOT NULL
  AND string_to_array(p.target, '.')::int[] < string_to_array(a.default_version, '.')::int[]
ORDER BY string_to_array(p.target, '.')::int[] DESC LIMIT 1 \gset
SET client_min_messages = warning;
ALTER EXTENSION neotoma UPDATE TO :'previous';
RESET client_min_messages;
SELECT pg_temp.stored() AS at_the_previous_release;
SELECT count(*) AS entities FROM neotoma.entities;
SET client_min_messages = warning;
ALTER EXTENSION neotoma UPDATE;
RESET client_min_messages;
SELECT pg_temp.stored() AS at_the_current_version,
       (SELECT extversion FROM pg_extension WHERE extname = 'neotoma') = (SELECT default_version FROM pg_available_extensions WHERE name = 'neotoma') AS current,
       neotoma.verify()->'ok' AS verified;
\c :regress_db
DROP DATABASE neotoma_regress_versions;
