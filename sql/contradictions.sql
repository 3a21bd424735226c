-- Contradictions, for analysts: every field where observations of one
-- entity disagree (two or more distinct values from two or more sources),
-- with the value the reducer chose and why (neotoma._contradictions, the
-- same as list_contradictions answers). Row level security applies to the
-- reader: a user sees their own.
CREATE VIEW neotoma.contradictions WITH (security_invoker = true) AS
SELECT * FROM neotoma._contradictions();
COMMENT ON VIEW neotoma.contradictions IS
  'Fields where observations of one entity disagree: competing_values [{value, observations}], the chosen value (the snapshot''s), its strategy and tie_breaker, the reason in words, and whether a correction resolved it.';

-- The entities with a field given two or more values by two or more sources
-- (each field's reducer state says so: "d": 3, neotoma_core::reducer::
-- Differs), only those: list_contradictions reads its page of candidates
-- here in id order, not every observation of the user (2.95 s at 200,000
-- entities). The predicate is written the same way where it is read
-- (actions/contradictions.rs), so the planner knows the index serves it.
CREATE INDEX entity_snapshots_disagreeing ON neotoma.entity_snapshots (user_id, entity_id)
  WHERE reducer_state @? '$.fields.* ? (@.d == 3)';
-- And those whose values over valid time disagree where they hold together
-- (a stretch of a field's timeline with "d": 3; docs/design/valid-time.md).
CREATE INDEX entity_snapshots_disagreeing_over_time ON neotoma.entity_snapshots (user_id, entity_id)
  WHERE reducer_state @? '$.timelines.*[*].s ? (@.d == 3)';
