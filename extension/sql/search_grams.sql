-- What search finds in scripts written without spaces between words
-- (Chinese, Japanese, Thai…): the character pairs of a snapshot's text
-- (neotoma._text_grams), so a word inside a sentence is found by the pairs
-- it is made of. Beside search_vector, which has the words of the other
-- scripts. After workspaces.sql's column, so that a fresh install numbers
-- the columns as an updated database does.
ALTER TABLE neotoma.entity_snapshots
  ADD COLUMN search_grams tsvector GENERATED ALWAYS AS (array_to_tsvector(neotoma._text_grams(snapshot::text))) STORED;
CREATE INDEX entity_snapshots_search_grams ON neotoma.entity_snapshots USING gin (search_grams neotoma.tsvector_rls_ops);
