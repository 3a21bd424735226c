-- Relationships between entities and the observations asserting them.

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
  -- From its latest deletion or restoration observation (delete_relationship
  -- sets them; verify() checks them).
  deleted_at          timestamptz,
  deleted_reason      text,
  -- When it holds in the world: the union of its assertions' valid times
  -- ([valid_from, valid_to), unbounded without them). Reads answer what
  -- holds at their valid_at (default now); verify() checks it.
  valid_during        tstzmultirange NOT NULL DEFAULT '{(,)}',
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
  -- Deletions and restorations carry only a reason; the reducer folds
  -- assertions alone.
  kind              text        NOT NULL DEFAULT 'assertion' CHECK (kind IN ('assertion', 'deletion', 'restoration')),
  -- An assertion's valid time, [valid_from, valid_to) (either end open:
  -- unbounded; neither: always).
  valid_from        timestamptz,
  valid_to          timestamptz,
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, relationship_id) REFERENCES neotoma.relationships (user_id, id),
  FOREIGN KEY (user_id, source_id) REFERENCES neotoma.sources (user_id, id),
  CONSTRAINT relationship_observations_valid_interval CHECK (valid_from < valid_to)
);
CREATE INDEX relationship_observations_relationship ON neotoma.relationship_observations (user_id, relationship_id);
-- The relationships a source observed (a source's neighborhood, erasing a
-- source) without reading all of the user's.
CREATE INDEX relationship_observations_source ON neotoma.relationship_observations (user_id, source_id);

-- One row per user and acyclic relationship type, updated by every write
-- that checks for cycles: the row lock serialises those checks, and under
-- REPEATABLE READ a concurrent one fails instead of closing a cycle.
CREATE TABLE neotoma.graph_write_locks (
  user_id           uuid   NOT NULL,
  relationship_type text   NOT NULL,
  writes            bigint NOT NULL,
  PRIMARY KEY (user_id, relationship_type)
);
-- A relationship's valid time as answers show it: null while it holds
-- always, else its stretches [{valid_from, valid_to}], earliest first (an
-- end left out: unbounded).
CREATE FUNCTION neotoma._valid_during(during tstzmultirange) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN during <> '{(,)}' THEN
    coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                'valid_from', neotoma._iso(lower(x)), 'valid_to', neotoma._iso(upper(x)))) ORDER BY lower(x) NULLS FIRST)
              FROM unnest(during) x), '[]') END $$;
-- Whether an assertion of relationship `id` holds over an interval: its
-- metadata at an instant is then reduced from the assertions valid then
-- (the stored snapshot folds them all, the metadata at any instant of a
-- relationship whose assertions all hold always).
CREATE FUNCTION neotoma._relationship_timed(user_id uuid, id uuid) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT EXISTS (SELECT FROM neotoma.relationship_observations o
                 WHERE o.user_id = $1 AND o.relationship_id = $2 AND o.kind = 'assertion'
                   AND (o.valid_from IS NOT NULL OR o.valid_to IS NOT NULL)) $$;
CREATE TRIGGER relationship_observations_append_only BEFORE UPDATE OR DELETE ON neotoma.relationship_observations
  FOR EACH ROW EXECUTE FUNCTION neotoma._refuse_change();

-- Entities (not merged away, not deleted) that no live relationship links
-- to another such entity, across every user: the gateway exports the count
-- as neotoma_graph_orphan_nodes_total. A number only, for the gateway's role.
CREATE FUNCTION neotoma_private.graph_orphan_count() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT count(*) FROM neotoma.entities e
  WHERE e.merged_into IS NULL AND e.deleted_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM neotoma.relationships r
                    JOIN neotoma.entities o ON o.user_id = r.user_id AND o.id = r.target_entity_id
                    WHERE r.user_id = e.user_id AND r.source_entity_id = e.id AND r.merged_into IS NULL AND r.deleted_at IS NULL
                      AND o.deleted_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM neotoma.relationships r
                    JOIN neotoma.entities o ON o.user_id = r.user_id AND o.id = r.source_entity_id
                    WHERE r.user_id = e.user_id AND r.target_entity_id = e.id AND r.merged_into IS NULL AND r.deleted_at IS NULL
                      AND o.deleted_at IS NULL)
$$;
CREATE FUNCTION neotoma.graph_orphan_count() RETURNS bigint
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_private.graph_orphan_count() $$;
