-- Entities and what is known of them: observations (immutable), the
-- snapshots the reducer folds from them, identifiers, raw fragments, merges.

-- Entities: the things observations are about. The id is derived from
-- (user, type, normalised identity); a merged entity keeps its row and points
-- at the entity it was merged into. A deleted entity keeps its row too:
-- deleted_at and deleted_reason come from its latest deletion or restoration
-- observation (set by the observation trigger; verify() checks them).
CREATE TABLE neotoma.entities (
  user_id        uuid        NOT NULL,
  id             text        NOT NULL,
  entity_type    text        NOT NULL,
  canonical_name text        NOT NULL,
  identity_key   text        NOT NULL,
  merged_into    text,
  merged_at      timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  deleted_at     timestamptz,
  deleted_reason text,
  -- The workspace it belongs to, for ever (docs/design/workspaces.md):
  -- its identity is resolved there, and reads answer it from there.
  workspace      text        NOT NULL DEFAULT 'default',
  PRIMARY KEY (user_id, id)
);
CREATE INDEX entities_type ON neotoma.entities (user_id, entity_type);
CREATE INDEX entities_merged_into ON neotoma.entities (user_id, merged_into) WHERE merged_into IS NOT NULL;
CREATE INDEX entities_deleted ON neotoma.entities (user_id, id) WHERE deleted_at IS NOT NULL;

-- Observations: immutable facts one source gave about one entity.
-- The order the database writes observations in: at one instant (one
-- transaction's observed_at, two stores given the same time) the later
-- write wins (neotoma_core::reducer). Observations written before 0.16.0
-- keep 0, which folds them as before.
CREATE SEQUENCE neotoma.observation_write_order;

CREATE TABLE neotoma.observations (
  user_id               uuid        NOT NULL,
  id                    uuid        NOT NULL,
  entity_id             text        NOT NULL,
  entity_type           text        NOT NULL,
  schema_version        text        NOT NULL,
  source_id             uuid        NOT NULL,
  interpretation_run_id uuid,
  -- deletion and restoration carry no fields of the entity (`reason` only):
  -- they decide whether it is deleted, and the reducer leaves them out.
  kind                  text        NOT NULL DEFAULT 'store' CHECK (kind IN ('store', 'correction', 'interpretation', 'migration', 'deletion', 'restoration')),
  observed_at           timestamptz NOT NULL,
  specificity_score     double precision NOT NULL DEFAULT 0,
  source_priority       integer     NOT NULL DEFAULT 100,
  fields                jsonb       NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  -- The confidence rating its caller gave (admiralty code, e.g. B2; see
  -- neotoma_core::confidence); NULL: its kind's default (A1 for a
  -- correction, F3 otherwise). Contests lower it (observation_contests).
  confidence            text        CHECK (confidence ~ '^[A-F][1-6]$'),
  write_order           bigint      NOT NULL DEFAULT nextval('neotoma.observation_write_order'),
  -- The token it was written with (0.24.0; neotoma._calling_token: the
  -- gateway's neotoma.token_id, NULL over SQL and stdio): the agent, for
  -- provenance (list_observations' written_with).
  token_id              uuid        DEFAULT neotoma._calling_token(),
  -- When in the world its fields hold: [valid_from, valid_to), either end
  -- open (NULL: unbounded); both NULL, always (0.24.0; docs/design/valid-time.md).
  valid_from            timestamptz,
  valid_to              timestamptz,
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, entity_id) REFERENCES neotoma.entities (user_id, id),
  FOREIGN KEY (user_id, source_id) REFERENCES neotoma.sources (user_id, id),
  FOREIGN KEY (user_id, interpretation_run_id) REFERENCES neotoma.interpretation_runs (user_id, id),
  CONSTRAINT observations_valid_interval CHECK (valid_from < valid_to)
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
-- Its workspace (a copy of its entity's) and the indexes of listings are
-- added by workspaces.sql, after the columns search.sql adds.
-- A snapshot row is a few kB of JSON, compressed when stored: with lz4
-- where the server has it (much cheaper to write and read than pglz).
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    ALTER TABLE neotoma.entity_snapshots
      ALTER COLUMN snapshot SET COMPRESSION lz4, ALTER COLUMN provenance SET COMPRESSION lz4,
      ALTER COLUMN field_provenance SET COMPRESSION lz4, ALTER COLUMN reducer_state SET COMPRESSION lz4;
  END IF;
END $$;

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

CREATE TRIGGER observations_append_only BEFORE UPDATE OR DELETE ON neotoma.observations
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_change();

-- Snapshots follow observations: every statement that inserts observations
-- folds them into their entities' snapshots (and identifiers, and timeline
-- events) before it ends. Derived data is written as the extension's owner
-- (SECURITY DEFINER): users insert observations, never snapshots. The rows
-- folded are exactly the statement's new rows, which row level security
-- already checked on insert.
CREATE FUNCTION neotoma_private._observations_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  PERFORM neotoma._apply_observations((
    SELECT jsonb_agg(jsonb_build_object(
             'user_id', n.user_id, 'id', n.id, 'entity_id', n.entity_id, 'entity_type', n.entity_type,
             'source_id', n.source_id, 'observed_at', neotoma._micros(n.observed_at),
             'source_priority', n.source_priority, 'specificity_score', n.specificity_score,
             'fields', n.fields, 'confidence', n.confidence, 'write_order', n.write_order,
             'valid_from', neotoma._micros(n.valid_from), 'valid_to', neotoma._micros(n.valid_to))
           ORDER BY n.user_id, n.entity_id, n.id)::text
    FROM new_observations n WHERE n.kind NOT IN ('deletion', 'restoration')));
  -- Deleted or not: what the latest deletion or restoration of each entity says.
  UPDATE neotoma.entities e
  SET deleted_at = CASE WHEN l.kind = 'deletion' THEN l.observed_at END,
      deleted_reason = CASE WHEN l.kind = 'deletion' THEN l.fields->>'reason' END
  FROM (SELECT DISTINCT ON (o.user_id, o.entity_id) o.user_id, o.entity_id, o.kind, o.observed_at, o.fields
        FROM neotoma.observations o
        WHERE (o.user_id, o.entity_id) IN (SELECT n.user_id, n.entity_id FROM new_observations n
                                           WHERE n.kind IN ('deletion', 'restoration'))
          AND o.kind IN ('deletion', 'restoration')
        ORDER BY o.user_id, o.entity_id, o.observed_at DESC, o.write_order DESC, o.id DESC) l
  WHERE e.user_id = l.user_id AND e.id = l.entity_id;
  RETURN NULL;
END $$;
-- A store folds its own observations and writes them with their snapshots
-- in one statement, during which neotoma._store_folding() is true (only the
-- extension's code sets it, for that statement); every other insert is
-- folded here.
CREATE TRIGGER observations_reduce AFTER INSERT ON neotoma.observations
  REFERENCING NEW TABLE AS new_observations
  FOR EACH STATEMENT WHEN (NOT neotoma._store_folding())
  EXECUTE FUNCTION neotoma_private._observations_inserted();
