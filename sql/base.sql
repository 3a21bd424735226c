-- Installed first by CREATE EXTENSION neotoma (the schema `neotoma` itself
-- comes from the control file): what every other file uses.
--
-- The DDL is one file per concern (docs/architecture.md):
--   base.sql          errors, time and id helpers, the append-only guard
--   sources.sql       source material and interpretation runs
--   entities.sql      entities, observations, snapshots, identifiers,
--                     raw_fragments, merges; the trigger that folds
--   counts.sql        entities per user and type, for totals in constant time
--   schemas.sql       the schema registry and recommendations
--   graph.sql         relationships and their observations
--   timeline.sql      timeline events
--   files.sql         file bytes and the keys that sign their URLs
--   tokens.sql        the gateway's bearer tokens
--   actions.sql       one SQL function per action (generated, checked in)
--   views.sql         views for analysts
--   statistics.sql    planner statistics that keep up with growth
--   lifecycle.sql     deletion, erasure, the change feed and its notifications
--   search.sql        what each snapshot is found by (full text, name trigrams)
--   security.sql      row level security, roles and grants (installed last)
-- Rules:
--  * every table has user_id; primary and unique keys lead with it;
--  * row level security is enabled and forced on every table (security.sql):
--    a session sees the rows of neotoma.current_user_id() only (superusers
--    bypass RLS);
--  * sources and observations are append-only; snapshots are derived data.
-- SECURITY DEFINER functions (those that run as the extension's owner:
-- triggers writing derived data, tokens, signing keys, embeddings for the
-- gateway) live in neotoma_private, a schema no API should expose (on
-- Supabase, leave it out of PostgREST's schemas), each with a pinned
-- search_path. Those callers name in `neotoma` keep a SECURITY INVOKER
-- wrapper there, granted to the same roles (security.sql).
CREATE SCHEMA neotoma_private;
COMMENT ON SCHEMA neotoma_private IS
  'Neotoma''s SECURITY DEFINER functions: not for an API to expose; call them through schema neotoma.';

-- Raises a Neotoma action error: SQLSTATE NT001, message "CODE: message",
-- detail = the envelope body {code, message, details} as JSON.
CREATE FUNCTION neotoma._raise(err jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING
    ERRCODE = 'NT001',
    MESSAGE = format('%s: %s', err->>'code', err->>'message'),
    DETAIL = err::text,
    HINT = 'The detail is the Neotoma error envelope {code, message, details} as JSON.';
END $$;

-- The nil UUID stands for "every user" in the schema registry (global schemas).
CREATE FUNCTION neotoma.global_user_id() RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT '00000000-0000-0000-0000-000000000000'::uuid $$;

-- Timestamps cross the Rust boundary as microseconds since the epoch (exact)
-- and leave in responses as ISO 8601 UTC text.
-- (An interval's epoch, not the timestamp's: extract from a timestamptz is
-- only STABLE, and a body more volatile than its function is not inlined.)
CREATE FUNCTION neotoma._micros(ts timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (extract(epoch FROM ts - '1970-01-01 00:00:00+00'::timestamptz) * 1000000)::bigint $$;
CREATE FUNCTION neotoma._from_micros(us bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  -- Whole days and the microseconds of the last day, so that no product
  -- exceeds a double's exact range (interval * bigint multiplies in floating
  -- point and rounds microseconds away from 2255 on).
  SELECT ('1970-01-01'::timestamp + make_interval(days => (us / 86400000000)::int,
                                                 secs => (us % 86400000000) / 1000000.0)) AT TIME ZONE 'UTC' $$;
-- STABLE, as to_char is: a body more volatile than its function is not
-- inlined, and a SQL function that is not inlined is parsed and planned on
-- every statement that calls it (a third of a snapshot read).
CREATE FUNCTION neotoma._iso(ts timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') $$;

-- Sources and observations are append-only (the triggers are with their
-- tables). Erasure (GDPR) alone removes them: neotoma._erasing() is true
-- only while the extension's erase runs.
CREATE FUNCTION neotoma._refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF neotoma._erasing() THEN
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  END IF;
  PERFORM neotoma._raise(jsonb_build_object(
    'code', 'VALIDATION_ERROR',
    'message', format('%s is append-only: %s is not allowed', TG_TABLE_NAME, TG_OP),
    'details', jsonb_build_object('table', TG_TABLE_NAME, 'operation', TG_OP)));
  RETURN NULL;
END $$;

-- Rows every user shares (user_id = the nil UUID: global schemas, entity
-- type mappings) are written by operators only. Row level security says so
-- for ordinary roles; this trigger says it also to roles that bypass row
-- level security (Supabase's service_role), which fire triggers all the same.
CREATE FUNCTION neotoma._refuse_shared_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF ((TG_OP <> 'INSERT' AND OLD.user_id = neotoma.global_user_id())
      OR (TG_OP <> 'DELETE' AND NEW.user_id = neotoma.global_user_id()))
     AND NOT neotoma.session_is_operator() THEN
    PERFORM neotoma._raise(jsonb_build_object(
      'code', 'FORBIDDEN',
      'message', format('only an operator changes what all users share (the global rows of %s)', TG_TABLE_NAME),
      'details', jsonb_build_object('table', TG_TABLE_NAME, 'operation', TG_OP)));
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
