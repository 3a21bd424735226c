-- Neotoma: the truth model's tables, installed by CREATE EXTENSION neotoma
-- (the schema `neotoma` itself comes from the control file).
--
-- Rules (see docs/architecture.md):
--  * every table has user_id; primary and unique keys lead with it;
--  * row level security is enabled and forced on every table: a session sees
--    the rows of neotoma.current_user_id() only (superusers bypass RLS); the
--    policies, grants and roles are in finalize.sql, once the Rust functions
--    they use exist;
--  * sources and observations are append-only; snapshots are derived data.

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
CREATE FUNCTION neotoma._micros(ts timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT (extract(epoch FROM ts) * 1000000)::bigint $$;
CREATE FUNCTION neotoma._from_micros(us bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  -- Whole days and the microseconds of the last day, so that no product
  -- exceeds a double's exact range (interval * bigint multiplies in floating
  -- point and rounds microseconds away from 2255 on).
  SELECT ('1970-01-01'::timestamp + make_interval(days => (us / 86400000000)::int,
                                                 secs => (us % 86400000000) / 1000000.0)) AT TIME ZONE 'UTC' $$;
CREATE FUNCTION neotoma._iso(ts timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') $$;

-- Source material: what was stored, content-addressed per user.
CREATE TABLE neotoma.sources (
  user_id          uuid        NOT NULL,
  id               uuid        NOT NULL,
  content_hash     text        NOT NULL,
  source_type      text        NOT NULL CHECK (source_type IN ('structured', 'file', 'correction', 'relationship', 'migration')),
  mime_type        text,
  original_filename text,
  file_size        bigint,
  storage_path     text,
  content          jsonb,
  source_priority  integer     NOT NULL DEFAULT 100,
  provenance       jsonb       NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  UNIQUE (user_id, content_hash)
);

-- Interpretation runs: how observations were obtained from a source
-- (structured input is a run of the `structured` interpreter).
CREATE TABLE neotoma.interpretation_runs (
  user_id              uuid        NOT NULL,
  id                   uuid        NOT NULL,
  source_id            uuid        NOT NULL,
  interpreter          text        NOT NULL,
  config               jsonb       NOT NULL DEFAULT '{}',
  status               text        NOT NULL CHECK (status IN ('running', 'pending', 'completed', 'failed', 'skipped')),
  entities_created     integer     NOT NULL DEFAULT 0,
  observations_created integer     NOT NULL DEFAULT 0,
  unknown_fields_count integer     NOT NULL DEFAULT 0,
  error                jsonb,
  started_at           timestamptz NOT NULL DEFAULT now(),
  finished_at          timestamptz,
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, source_id) REFERENCES neotoma.sources (user_id, id)
);
CREATE INDEX interpretation_runs_source ON neotoma.interpretation_runs (user_id, source_id);

-- Entities: the things observations are about. The id is derived from
-- (user, type, normalised identity); a merged entity keeps its row and points
-- at the entity it was merged into.
CREATE TABLE neotoma.entities (
  user_id        uuid        NOT NULL,
  id             text        NOT NULL,
  entity_type    text        NOT NULL,
  canonical_name text        NOT NULL,
  identity_key   text        NOT NULL,
  merged_into    text,
  merged_at      timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id)
);
CREATE INDEX entities_type ON neotoma.entities (user_id, entity_type);
CREATE INDEX entities_merged_into ON neotoma.entities (user_id, merged_into) WHERE merged_into IS NOT NULL;

-- Observations: immutable facts one source gave about one entity.
CREATE TABLE neotoma.observations (
  user_id               uuid        NOT NULL,
  id                    uuid        NOT NULL,
  entity_id             text        NOT NULL,
  entity_type           text        NOT NULL,
  schema_version        text        NOT NULL,
  source_id             uuid        NOT NULL,
  interpretation_run_id uuid,
  kind                  text        NOT NULL DEFAULT 'store' CHECK (kind IN ('store', 'correction', 'interpretation', 'migration')),
  observed_at           timestamptz NOT NULL,
  specificity_score     double precision NOT NULL DEFAULT 0,
  source_priority       integer     NOT NULL DEFAULT 100,
  fields                jsonb       NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, entity_id) REFERENCES neotoma.entities (user_id, id),
  FOREIGN KEY (user_id, source_id) REFERENCES neotoma.sources (user_id, id),
  FOREIGN KEY (user_id, interpretation_run_id) REFERENCES neotoma.interpretation_runs (user_id, id)
);
CREATE INDEX observations_entity ON neotoma.observations (user_id, entity_id, observed_at DESC, id);
CREATE INDEX observations_source ON neotoma.observations (user_id, source_id);

-- Entity snapshots: the reducer's output, maintained by a trigger on
-- observations and reproducible from them (neotoma.verify()).
CREATE TABLE neotoma.entity_snapshots (
  user_id             uuid        NOT NULL,
  entity_id           text        NOT NULL,
  entity_type         text        NOT NULL,
  schema_version      text        NOT NULL,
  snapshot            jsonb       NOT NULL,
  provenance          jsonb       NOT NULL,
  field_provenance    jsonb       NOT NULL,
  reducer_state       jsonb       NOT NULL,
  observation_count   bigint      NOT NULL,
  last_observation_at timestamptz,
  computed_at         timestamptz,
  PRIMARY KEY (user_id, entity_id),
  FOREIGN KEY (user_id, entity_id) REFERENCES neotoma.entities (user_id, id)
);

-- Normalised identifiers of each entity (its identity fields' values in the
-- current snapshot), for retrieve_entity_by_identifier.
CREATE TABLE neotoma.entity_identifiers (
  user_id   uuid NOT NULL,
  entity_id text NOT NULL,
  field     text NOT NULL,
  value     text NOT NULL,
  PRIMARY KEY (user_id, entity_id, field, value),
  FOREIGN KEY (user_id, entity_id) REFERENCES neotoma.entities (user_id, id)
);
CREATE INDEX entity_identifiers_value ON neotoma.entity_identifiers (user_id, value);

-- Fields a source gave that the entity's schema does not have: kept, never
-- dropped, ready to be promoted into the schema.
CREATE TABLE neotoma.raw_fragments (
  user_id                 uuid        NOT NULL,
  id                      uuid        NOT NULL,
  source_id               uuid        NOT NULL,
  entity_id               text,
  observation_id          uuid,
  interpretation_run_id   uuid,
  entity_type             text        NOT NULL,
  fragment_key            text        NOT NULL,
  fragment_value          jsonb       NOT NULL,
  inferred_type           text        NOT NULL,
  migrated_at             timestamptz,
  migrated_observation_id uuid,
  created_at              timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, source_id) REFERENCES neotoma.sources (user_id, id)
);
CREATE INDEX raw_fragments_key ON neotoma.raw_fragments (user_id, entity_type, fragment_key);
CREATE INDEX raw_fragments_entity ON neotoma.raw_fragments (user_id, entity_id);

-- The schema registry: versioned entity schemas, global (user_id = nil UUID)
-- or user-specific; at most one active version per (scope, entity type).
CREATE TABLE neotoma.entity_schemas (
  user_id        uuid        NOT NULL,
  id             uuid        NOT NULL,
  entity_type    text        NOT NULL,
  schema_version text        NOT NULL,
  description    text        NOT NULL DEFAULT '',
  definition     jsonb       NOT NULL,
  active         boolean     NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  UNIQUE (user_id, entity_type, schema_version)
);
CREATE UNIQUE INDEX entity_schemas_one_active ON neotoma.entity_schemas (user_id, entity_type) WHERE active;

-- Relationships: typed, directed links between entities. Each assertion is a
-- relationship observation; the relationship's snapshot reduces their
-- metadata like an entity snapshot. The id is derived from (user, type,
-- source entity, target entity). When an endpoint is merged, the relationship
-- is re-keyed onto the merge target and keeps a pointer to its new id.
CREATE TABLE neotoma.relationships (
  user_id             uuid        NOT NULL,
  id                  uuid        NOT NULL,
  relationship_type   text        NOT NULL CHECK (relationship_type IN
                        ('PART_OF', 'CORRECTS', 'REFERS_TO', 'SETTLES', 'DUPLICATE_OF', 'DEPENDS_ON', 'SUPERSEDES')),
  source_entity_id    text        NOT NULL,
  target_entity_id    text        NOT NULL,
  snapshot            jsonb       NOT NULL DEFAULT '{}',
  provenance          jsonb       NOT NULL DEFAULT '{}',
  reducer_state       jsonb       NOT NULL DEFAULT '{}',
  observation_count   bigint      NOT NULL DEFAULT 0,
  last_observation_at timestamptz,
  merged_into         uuid,
  created_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  UNIQUE (user_id, relationship_type, source_entity_id, target_entity_id),
  FOREIGN KEY (user_id, source_entity_id) REFERENCES neotoma.entities (user_id, id),
  FOREIGN KEY (user_id, target_entity_id) REFERENCES neotoma.entities (user_id, id)
);
CREATE INDEX relationships_from ON neotoma.relationships (user_id, source_entity_id, relationship_type) WHERE merged_into IS NULL;
CREATE INDEX relationships_to ON neotoma.relationships (user_id, target_entity_id, relationship_type) WHERE merged_into IS NULL;

CREATE TABLE neotoma.relationship_observations (
  user_id           uuid        NOT NULL,
  id                uuid        NOT NULL,
  relationship_id   uuid        NOT NULL,
  source_id         uuid        NOT NULL,
  observed_at       timestamptz NOT NULL,
  source_priority   integer     NOT NULL DEFAULT 100,
  specificity_score double precision NOT NULL DEFAULT 1,
  metadata          jsonb       NOT NULL DEFAULT '{}',
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, relationship_id) REFERENCES neotoma.relationships (user_id, id),
  FOREIGN KEY (user_id, source_id) REFERENCES neotoma.sources (user_id, id)
);
CREATE INDEX relationship_observations_relationship ON neotoma.relationship_observations (user_id, relationship_id);

-- Timeline events: derived from the date fields of entity snapshots (one per
-- entity and date field), maintained with the snapshots and reproducible from
-- them (neotoma.verify()).
CREATE TABLE neotoma.timeline_events (
  user_id         uuid        NOT NULL,
  id              uuid        NOT NULL,
  event_type      text        NOT NULL,
  event_timestamp timestamptz NOT NULL,
  source_id       uuid        NOT NULL,
  entity_id       text        NOT NULL,
  entity_ids      text[]      NOT NULL,
  source_field    text        NOT NULL,
  observation_id  uuid        NOT NULL,
  properties      jsonb       NOT NULL DEFAULT '{}',
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, entity_id) REFERENCES neotoma.entities (user_id, id)
);
CREATE INDEX timeline_events_time ON neotoma.timeline_events (user_id, event_timestamp DESC, id);
CREATE INDEX timeline_events_entity ON neotoma.timeline_events (user_id, entity_id);
CREATE INDEX timeline_events_source ON neotoma.timeline_events (user_id, source_id);

-- The merge log: who was merged into whom, when and why. Observations are
-- never rewritten, so the pre-merge history stays reconstructable.
CREATE TABLE neotoma.entity_merges (
  user_id              uuid        NOT NULL,
  id                   uuid        NOT NULL,
  from_entity_id       text        NOT NULL,
  to_entity_id         text        NOT NULL,
  merge_reason         text,
  observations_moved   bigint      NOT NULL,
  relationships_moved  bigint      NOT NULL,
  from_snapshot        jsonb,
  merged_at            timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, from_entity_id) REFERENCES neotoma.entities (user_id, id),
  FOREIGN KEY (user_id, to_entity_id) REFERENCES neotoma.entities (user_id, id)
);

-- File bytes, stored once per user and content hash (the source row holds
-- the metadata: MIME type, name, size, storage path).
CREATE TABLE neotoma.files (
  user_id   uuid  NOT NULL,
  source_id uuid  NOT NULL,
  content   bytea NOT NULL,
  PRIMARY KEY (user_id, source_id),
  FOREIGN KEY (user_id, source_id) REFERENCES neotoma.sources (user_id, id)
);

-- Keys that sign file URLs (global: user_id is the nil UUID). Rotating adds a
-- key; URLs signed with a retired key stay valid until they expire, unless it
-- was revoked. Only the SECURITY DEFINER functions below read this table.
CREATE TABLE neotoma.signing_keys (
  user_id    uuid        NOT NULL,
  id         uuid        NOT NULL,
  secret     bytea       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  retired_at timestamptz,
  revoked_at timestamptz,
  PRIMARY KEY (user_id, id)
);

-- Schema recommendations: fields raw_fragments suggest (pending, from
-- analyze_schema_candidates) and fields promoted automatically (auto_applied,
-- with the evidence).
CREATE TABLE neotoma.schema_recommendations (
  user_id          uuid        NOT NULL,
  id               uuid        NOT NULL,
  entity_type      text        NOT NULL,
  fields           jsonb       NOT NULL,
  source           text        NOT NULL CHECK (source IN ('raw_fragments', 'agent', 'inference')),
  confidence_score double precision NOT NULL,
  reasoning        text,
  evidence         jsonb       NOT NULL DEFAULT '{}',
  status           text        NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'applied', 'auto_applied')),
  schema_version   text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id)
);
CREATE INDEX schema_recommendations_type ON neotoma.schema_recommendations (user_id, entity_type, status);

-- Bearer tokens of the MCP gateway's HTTP transport, stored hashed (SHA-256
-- of the token), each with a scope ('user': the user's own data;
-- 'operator': also what all users share) and an optional expiry. Nobody
-- reads this table directly: the SECURITY DEFINER functions below are the
-- only way in (authenticate_token for the gateway's role, the rest for
-- operators). Creating or revoking a token notifies every gateway
-- (channel neotoma_tokens, payload the token's hash) so caches forget it.
CREATE TABLE neotoma.api_tokens (
  user_id    uuid        NOT NULL,
  id         uuid        NOT NULL,
  token_hash text        NOT NULL,
  name       text,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  scope      text        NOT NULL DEFAULT 'user' CHECK (scope IN ('user', 'operator')),
  expires_at timestamptz,
  PRIMARY KEY (user_id, id)
);
-- Authentication looks tokens up by hash before any user is known.
CREATE UNIQUE INDEX api_tokens_hash ON neotoma.api_tokens (token_hash);

CREATE FUNCTION neotoma.authenticate_token(token_hash text)
RETURNS TABLE (user_id uuid, scope text, expires_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT t.user_id, t.scope, t.expires_at FROM neotoma.api_tokens t
  WHERE t.token_hash = authenticate_token.token_hash AND t.revoked_at IS NULL
    AND (t.expires_at IS NULL OR t.expires_at > now()) $$;

CREATE FUNCTION neotoma.create_api_token(user_id uuid, token_hash text, name text DEFAULT NULL,
                                         scope text DEFAULT 'user', expires_in_seconds double precision DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  t neotoma.api_tokens;
BEGIN
  IF expires_in_seconds IS NOT NULL AND NOT expires_in_seconds > 0 THEN
    RAISE EXCEPTION 'expires_in_seconds must be positive';
  END IF;
  INSERT INTO neotoma.api_tokens (user_id, id, token_hash, name, scope, expires_at)
  VALUES (create_api_token.user_id, gen_random_uuid(), create_api_token.token_hash, create_api_token.name,
          create_api_token.scope, now() + expires_in_seconds * interval '1 second')
  RETURNING * INTO t;
  PERFORM pg_notify('neotoma_tokens', t.token_hash);
  RETURN jsonb_build_object('id', t.id, 'user_id', t.user_id, 'scope', t.scope,
                            'expires_at', neotoma._iso(t.expires_at));
END $$;

CREATE FUNCTION neotoma.revoke_api_token(token_id uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  h text;
BEGIN
  UPDATE neotoma.api_tokens SET revoked_at = now()
  WHERE id = revoke_api_token.token_id AND revoked_at IS NULL
  RETURNING token_hash INTO h;
  IF h IS NULL THEN
    RETURN false;
  END IF;
  PERFORM pg_notify('neotoma_tokens', h);
  RETURN true;
END $$;

CREATE FUNCTION neotoma.list_api_tokens() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'user_id', user_id, 'name', name, 'scope', scope,
           'created_at', created_at, 'expires_at', expires_at, 'revoked_at', revoked_at)
           ORDER BY created_at, id), '[]')
  FROM neotoma.api_tokens $$;

-- One row per user and acyclic relationship type, updated by every write
-- that checks for cycles: the row lock serialises those checks, and under
-- REPEATABLE READ a concurrent one fails instead of closing a cycle.
CREATE TABLE neotoma.graph_write_locks (
  user_id           uuid   NOT NULL,
  relationship_type text   NOT NULL,
  writes            bigint NOT NULL,
  PRIMARY KEY (user_id, relationship_type)
);

-- Sources and observations are append-only.
CREATE FUNCTION neotoma._refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM neotoma._raise(jsonb_build_object(
    'code', 'VALIDATION_ERROR',
    'message', format('%s is append-only: %s is not allowed', TG_TABLE_NAME, TG_OP),
    'details', jsonb_build_object('table', TG_TABLE_NAME, 'operation', TG_OP)));
  RETURN NULL;
END $$;
CREATE TRIGGER observations_append_only BEFORE UPDATE OR DELETE ON neotoma.observations
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_change();
CREATE TRIGGER sources_append_only BEFORE UPDATE OR DELETE ON neotoma.sources
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_change();
CREATE TRIGGER relationship_observations_append_only BEFORE UPDATE OR DELETE ON neotoma.relationship_observations
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_change();
