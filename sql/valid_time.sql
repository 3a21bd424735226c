-- Valid time (docs/design/valid-time.md): observations hold over
-- [valid_from, valid_to) (entities.sql), and a snapshot is rendered at the
-- instant it is written, true until `valid_until`: the first instant after
-- it at which some field's value stops or starts holding (NULL: none
-- ahead); `valid_values` has the values of its fields that hold over valid
-- time, compact ({field: [[from, to, value, rating], …]}, microseconds;
-- NULL when every field holds always), which a listing with valid_at reads
-- instead of the reducer's state. A read of one entity renders it again once that instant has
-- passed, and neotoma.rerender_past_validity() renders again the stored
-- snapshots past it (the gateway's upkeep calls it). After search_grams.sql's
-- column, so that a fresh install numbers the columns as an updated
-- database does.
ALTER TABLE neotoma.entity_snapshots ADD COLUMN valid_until timestamptz, ADD COLUMN valid_values jsonb;
CREATE INDEX entity_snapshots_valid_until ON neotoma.entity_snapshots (valid_until)
  WHERE valid_until IS NOT NULL;
