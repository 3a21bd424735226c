-- Workspaces (docs/design/workspaces.md): a user's memory divided by name.
-- An entity belongs to one workspace for ever (entities.workspace), a
-- source to the one it was stored in (sources.workspace); rows derived
-- from an entity carry a copy of its workspace, so listings of one
-- workspace read an index in order. Workspaces organise one user's data:
-- row level security stays per user.

-- After search.sql's columns, so that a fresh install numbers the columns
-- as an updated database does.
ALTER TABLE neotoma.entity_snapshots ADD COLUMN workspace text NOT NULL DEFAULT 'default';
-- retrieve_entities, most recently observed first: its pages in index
-- order, of one type or of all, in one workspace.
CREATE INDEX entity_snapshots_recent ON neotoma.entity_snapshots
  (user_id, workspace, entity_type, last_observation_at DESC NULLS LAST, entity_id);
CREATE INDEX entity_snapshots_recent_any ON neotoma.entity_snapshots
  (user_id, workspace, last_observation_at DESC NULLS LAST, entity_id);

-- The workspaces a user has written to or chosen (set_context); `default`
-- needs no row. A read naming a workspace that is neither answers
-- WORKSPACE_NOT_FOUND: a typo must not quietly answer nothing.
CREATE TABLE neotoma.workspaces (
  user_id    uuid        NOT NULL,
  name       text        NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, name)
);
COMMENT ON TABLE neotoma.workspaces IS
  'The workspaces of each user besides default: created by the first write to one, or by set_context.';

-- The workspace an action without `workspace` uses (set_context): one per
-- token of the user (token_id), and one for the user (token_id NULL). In
-- the database, so it holds across stateless requests and gateways. No
-- foreign key to the token: on a router's partition the tokens are the
-- router's (docs/scale-out.md); revoking a token deletes its context.
CREATE TABLE neotoma.contexts (
  user_id           uuid        NOT NULL,
  token_id          uuid,
  workspace         text        NOT NULL CHECK (workspace ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  -- The project entity the context was set from, if it was.
  project_entity_id text,
  set_at            timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX contexts_level ON neotoma.contexts (user_id, token_id) NULLS NOT DISTINCT;
COMMENT ON TABLE neotoma.contexts IS
  'The default workspace of each user (token_id NULL) and of each of their tokens (set_context).';
