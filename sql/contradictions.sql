-- Contradictions, for analysts: every field where observations of one
-- entity disagree (two or more distinct values from two or more sources),
-- with the value the reducer chose and why (neotoma._contradictions, the
-- same as list_contradictions answers). Row level security applies to the
-- reader: a user sees their own.
CREATE VIEW neotoma.contradictions WITH (security_invoker = true) AS
SELECT * FROM neotoma._contradictions();
COMMENT ON VIEW neotoma.contradictions IS
  'Fields where observations of one entity disagree: competing_values [{value, observations}], the chosen value (the snapshot''s), its strategy and tie_breaker, the reason in words, and whether a correction resolved it.';
