-- What the tool sets of other graph servers keep besides Neotoma's own data
-- (docs/tool-sets.md).

-- Integer ids of the graph servers that number what they show (GraphMem):
-- one per entity, text observation and relation of a user, given the first
-- time it is shown, in order per user (the same calls give the same ids).
-- `ref` is the entity's id, or the relationship's; `detail` a relation's
-- type, or the SHA-256 of an observation's text (never the text: erasing
-- an entity leaves nothing of it here). `key` (SHA-256 of kind, ref and
-- detail) makes each thing one id.
CREATE TABLE neotoma.graph_ids (
  user_id uuid   NOT NULL,
  id      bigint NOT NULL CHECK (id > 0),
  kind    text   NOT NULL CHECK (kind IN ('entity', 'observation', 'relation')),
  ref     text   NOT NULL,
  detail  text   NOT NULL DEFAULT '',
  key     text   NOT NULL,
  PRIMARY KEY (user_id, id),
  UNIQUE (user_id, key)
);
CREATE INDEX graph_ids_ref ON neotoma.graph_ids (user_id, ref);
-- The graph tools' pages (read_graph): a workspace's live entities in order
-- of creation, read in index order from the cursor on, not sorted whole.
CREATE INDEX entities_live_created ON neotoma.entities (user_id, workspace, created_at, id)
  WHERE merged_into IS NULL AND deleted_at IS NULL;
COMMENT ON TABLE neotoma.graph_ids IS
  'Stable integer ids of entities, observations and relations, as the graphmem tool set shows them.';

-- Entity type canonicalization (GraphMem's entity_type_mappings): a
-- variant, folded to lower case, and its canonical type. The global rows
-- (user_id = neotoma.global_user_id()) every user reads; a user's own rows
-- come first for that user. Users write their own rows; only operators the
-- global ones.
CREATE TABLE neotoma.entity_type_mappings (
  user_id   uuid NOT NULL,
  variant   text NOT NULL CHECK (variant = lower(btrim(variant)) AND variant <> ''),
  canonical text NOT NULL CHECK (btrim(canonical) <> '' AND length(canonical) <= 200),
  PRIMARY KEY (user_id, variant)
);
COMMENT ON TABLE neotoma.entity_type_mappings IS
  'Entity type variants and their canonical types (graphmem tool set): global rows, and each user''s own.';
INSERT INTO neotoma.entity_type_mappings (user_id, variant, canonical)
SELECT neotoma.global_user_id(), v, c
FROM (VALUES
  ('project', 'Project'), ('workspace', 'Project'), ('context', 'Project'), ('repo', 'Project'),
  ('repository', 'Project'), ('codebase', 'Project'),
  ('task', 'Task'), ('todo', 'Task'),
  ('issue', 'Issue'), ('bug', 'Issue'), ('problem', 'Issue'),
  ('error', 'Error'), ('exception', 'Error'),
  ('solution', 'PossibleSolution'), ('workaround', 'PossibleSolution'), ('fix', 'PossibleSolution'),
  ('possiblesolution', 'PossibleSolution'), ('possible solution', 'PossibleSolution'),
  ('service', 'Service'),
  ('component', 'Component'), ('widget', 'Component'),
  ('person', 'Person'), ('people', 'Person'), ('human', 'Person'),
  ('organization', 'Organization'), ('organisation', 'Organization'), ('org', 'Organization'),
  ('company', 'Organization'),
  ('technology', 'Technology'), ('tool', 'Technology'), ('library', 'Technology'), ('framework', 'Technology'),
  ('document', 'Document'), ('doc', 'Document'), ('file', 'Document'),
  ('decision', 'Decision'), ('concept', 'Concept'), ('idea', 'Concept')
) AS m(v, c);

ALTER TABLE neotoma.entity_type_mappings ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.entity_type_mappings FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_type_mappings_visible ON neotoma.entity_type_mappings FOR SELECT
  USING (user_id IN (neotoma.global_user_id(), (SELECT neotoma.current_user_id())));
CREATE POLICY entity_type_mappings_own ON neotoma.entity_type_mappings
  USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
CREATE POLICY entity_type_mappings_global ON neotoma.entity_type_mappings
  USING (user_id = neotoma.global_user_id() AND (SELECT neotoma.session_is_operator()))
  WITH CHECK (user_id = neotoma.global_user_id() AND (SELECT neotoma.session_is_operator()));
CREATE TRIGGER entity_type_mappings_shared BEFORE INSERT OR UPDATE OR DELETE ON neotoma.entity_type_mappings
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_shared_write();
