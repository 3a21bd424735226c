# shellcheck shell=bash
# Sourced by the peer suites' run scripts. peer_database NAME: in the cluster
# NEOTOMA_TEST_PG points at (a superuser libpq string, as scripts/test sets
# it), a fresh database NAME with the extension; prints the DSN the gateway
# uses, as the non-superuser role neotoma_app (an operator, like the embedded
# default), so that row level security applies as it does for users.
peer_database() {
  local name=$1
  PGOPTIONS="-c client_min_messages=warning" psql "$NEOTOMA_TEST_PG dbname=postgres" -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
DROP DATABASE IF EXISTS $name WITH (FORCE);
CREATE DATABASE $name;
SELECT 'CREATE ROLE neotoma_app LOGIN NOSUPERUSER NOBYPASSRLS'
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'neotoma_app') \gexec
SQL
  PGOPTIONS="-c client_min_messages=warning" psql "$NEOTOMA_TEST_PG dbname=$name" -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE EXTENSION neotoma;
GRANT neotoma_operator TO neotoma_app;
SQL
  echo "${NEOTOMA_TEST_PG/user=postgres/user=neotoma_app} dbname=$name"
}
