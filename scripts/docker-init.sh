#!/bin/sh
# The image's first start (docker-entrypoint-initdb.d): the extension in the
# database it creates, and the gateway's login role when a password is given.
set -e
psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "${POSTGRES_DB:-$POSTGRES_USER}" -c "CREATE EXTENSION IF NOT EXISTS neotoma"
if [ -n "${NEOTOMA_APP_PASSWORD:-}" ]; then
  psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "${POSTGRES_DB:-$POSTGRES_USER}" \
    -v pw="$NEOTOMA_APP_PASSWORD" <<'SQL'
CREATE ROLE neotoma_app LOGIN PASSWORD :'pw';
GRANT neotoma_service TO neotoma_app;
SQL
fi
