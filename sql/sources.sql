-- Source material and how it was interpreted.

-- Source material: what was stored, content-addressed per user.
CREATE TABLE neotoma.sources (
  user_id          uuid        NOT NULL,
  id               uuid        NOT NULL,
  content_hash     text        NOT NULL,
  source_type      text        NOT NULL CHECK (source_type IN ('structured', 'file', 'correction', 'relationship', 'migration', 'lifecycle')),
  mime_type        text,
  original_filename text,
  file_size        bigint,
  storage_path     text,
  content          jsonb,
  source_priority  integer     NOT NULL DEFAULT 100,
  provenance       jsonb       NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now(),
  -- Set when erase removed its content (it still fed other entities).
  erased_at        timestamptz,
  -- The confidence rating store was given (admiralty code): what is
  -- observed from this source, now or by a later interpretation, has it.
  confidence       text        CHECK (confidence ~ '^[A-F][1-6]$'),
  -- The workspace it was stored in: the same content stored in two
  -- workspaces is two sources (docs/design/workspaces.md).
  workspace        text        NOT NULL DEFAULT 'default',
  PRIMARY KEY (user_id, id),
  UNIQUE (user_id, workspace, content_hash)
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

CREATE TRIGGER sources_append_only BEFORE UPDATE OR DELETE ON neotoma.sources
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_change();
