-- Annotations: notes a person or an agent attaches to an entity or to one
-- of its observations (annotate), beside the truth model: no snapshot, no
-- value, no provenance changes. They go with what they annotate: erasing
-- the entity or the observation removes them (foreign keys, cascading).
CREATE TABLE neotoma.annotations (
  user_id        uuid        NOT NULL,
  id             uuid        NOT NULL,
  entity_id      text        NOT NULL,
  observation_id uuid,
  note           text        NOT NULL CHECK (length(note) BETWEEN 1 AND 10000),
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, entity_id) REFERENCES neotoma.entities (user_id, id) ON DELETE CASCADE,
  FOREIGN KEY (user_id, observation_id) REFERENCES neotoma.observations (user_id, id) ON DELETE CASCADE
);
CREATE INDEX annotations_entity ON neotoma.annotations (user_id, entity_id, created_at, id);
CREATE INDEX annotations_observation ON neotoma.annotations (user_id, observation_id) WHERE observation_id IS NOT NULL;
COMMENT ON TABLE neotoma.annotations IS
  'Notes attached to an entity or one of its observations (annotate); they change no snapshot or provenance.';
