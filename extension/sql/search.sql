-- Search (retrieve_entities with `search`): what each snapshot is found by,
-- kept with it by Postgres (generated columns), so an entity is findable by
-- its new text in the transaction that stored it.
-- search_vector: every string and number of the snapshot as `simple` words
-- (exact, any language) and as `english` stems, its name or title weighted A.
-- name_trigrams: the trigrams of its name or title (neotoma._name_trigrams,
-- as pg_trgm makes them), for names with typos.
ALTER TABLE neotoma.entity_snapshots
  ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('pg_catalog.simple', coalesce(snapshot->>'name', snapshot->>'title', '')), 'A')
    || jsonb_to_tsvector('pg_catalog.simple', snapshot, '["string", "numeric"]')
    || jsonb_to_tsvector('pg_catalog.english', snapshot, '["string"]')) STORED,
  ADD COLUMN name_trigrams tsvector GENERATED ALWAYS AS (
    array_to_tsvector(neotoma._name_trigrams(coalesce(snapshot->>'name', snapshot->>'title', '')))) STORED;
CREATE INDEX entity_snapshots_search ON neotoma.entity_snapshots USING gin (search_vector);
CREATE INDEX entity_snapshots_name_trigrams ON neotoma.entity_snapshots USING gin (name_trigrams);
