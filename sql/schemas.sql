-- The schema registry: versioned entity schemas (global or per user), the
-- seeded ones, and the recommendations raw fragments suggest.

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

-- The seeded entity schemas (global, active).
INSERT INTO neotoma.entity_schemas (user_id, id, entity_type, schema_version, description, definition, active)
SELECT neotoma.global_user_id(), (s->>'id')::uuid, s->>'entity_type', s->>'schema_version',
       s->>'description', s->'definition', true
FROM jsonb_array_elements(neotoma._builtin_schemas()) AS s;

-- Schemas: everyone reads the global ones and their own; a user writes only
-- its own variants; the global ones (what every user relies on) only an
-- operator writes.
ALTER TABLE neotoma.entity_schemas ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.entity_schemas FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_schemas_visible ON neotoma.entity_schemas FOR SELECT
  USING (user_id IN (neotoma.global_user_id(), (SELECT neotoma.current_user_id())));
CREATE POLICY entity_schemas_own ON neotoma.entity_schemas
  USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
CREATE POLICY entity_schemas_global ON neotoma.entity_schemas
  USING (user_id = neotoma.global_user_id() AND (SELECT neotoma.session_is_operator()))
  WITH CHECK (user_id = neotoma.global_user_id() AND (SELECT neotoma.session_is_operator()));
CREATE TRIGGER entity_schemas_shared BEFORE INSERT OR UPDATE OR DELETE ON neotoma.entity_schemas
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_shared_write();
