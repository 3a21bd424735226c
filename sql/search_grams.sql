-- What search finds in scripts written without spaces between words
-- (Chinese, Japanese, Thai…): the character pairs of a snapshot's text
-- (neotoma._text_grams), so a word inside a sentence is found by the pairs
-- it is made of. Beside search_vector, which has the words of the other
-- scripts. After workspaces.sql's column, so that a fresh install numbers
-- the columns as an updated database does.
ALTER TABLE neotoma.entity_snapshots
  ADD COLUMN search_grams tsvector GENERATED ALWAYS AS (array_to_tsvector(neotoma._text_grams(snapshot::text))) STORED;
CREATE INDEX entity_snapshots_search_grams ON neotoma.entity_snapshots
  USING gin (neotoma._user_words(user_id, search_grams) neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);

-- Partial identifier lookups (retrieve_entity_by_identifier, when no value
-- equals the identifier) look for the values that contain the identifier's
-- form: the runs of three characters of each value (neotoma._value_grams),
-- kept beside it, narrow them to those having every run of the form, and
-- LIKE decides. A column, not an index over the expression: under row level
-- security only a leakproof condition may use an index, and the functions
-- that compute the runs are not marked so (neotoma.@@ over a column is).
ALTER TABLE neotoma.entity_identifiers
  ADD COLUMN value_grams tsvector GENERATED ALWAYS AS (array_to_tsvector(neotoma._value_grams(value))) STORED;
-- A pending list of 64 kB, not 4 MB: a lookup reads the whole list, which
-- until a vacuum merged it made one take 23 ms instead of 0.9 at 2,500
-- persons; stores cost the same (fastupdate off cost them 0.5 ms each).
CREATE INDEX entity_identifiers_grams ON neotoma.entity_identifiers USING gin (value_grams neotoma.tsvector_rls_ops)
  WITH (gin_pending_list_limit = 64);
