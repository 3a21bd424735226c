-- How many entities each user has of each type, so that retrieve_entities
-- answers its total in constant time, exactly. Rows are deltas (+1 for an
-- entity created, -1 from `current` for one merged away), appended by the
-- triggers below, so concurrent writers never wait on a shared counter;
-- when a (user, type) has collected more than 32 rows, a writer (one in 16,
-- at random) folds the rows no other transaction holds into one. The count
-- is the sum.
-- verify() checks the sums against the entities.
CREATE TABLE neotoma.entity_counts (
  user_id     uuid   NOT NULL,
  entity_type text   NOT NULL,
  current     bigint NOT NULL,  -- entities neither merged into another nor deleted
  total       bigint NOT NULL,  -- every entity not deleted, merged ones included
  workspace   text   NOT NULL DEFAULT 'default'  -- the entities' (counted per workspace)
);
CREATE INDEX entity_counts_type ON neotoma.entity_counts (user_id, entity_type);

-- Trigger body: the deltas of a statement's inserted, updated (merged or
-- unmerged) or deleted entities, then the fold of the (user, type) pairs
-- it touched that have many rows; truncated entities (maintenance, with
-- every table that refers to them) leave no counts. Runs as the extension's owner: users
-- read the counts, never write them.
CREATE FUNCTION neotoma_private._count_entities() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
DECLARE
  users uuid[];
  types text[];
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE neotoma.entity_counts;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
      SELECT user_id, entity_type, workspace, count(*) FILTER (WHERE merged_into IS NULL AND deleted_at IS NULL),
             count(*) FILTER (WHERE deleted_at IS NULL)
      FROM new_entities GROUP BY user_id, entity_type, workspace
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  ELSIF TG_OP = 'UPDATE' THEN
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
      SELECT n.user_id, n.entity_type, n.workspace,
             sum((n.merged_into IS NULL AND n.deleted_at IS NULL)::int - (o.merged_into IS NULL AND o.deleted_at IS NULL)::int),
             sum((n.deleted_at IS NULL)::int - (o.deleted_at IS NULL)::int)
      FROM old_entities o JOIN new_entities n ON n.user_id = o.user_id AND n.id = o.id
      WHERE (n.merged_into IS NULL) <> (o.merged_into IS NULL) OR (n.deleted_at IS NULL) <> (o.deleted_at IS NULL)
      GROUP BY n.user_id, n.entity_type, n.workspace
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  ELSE
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
      SELECT user_id, entity_type, workspace, -count(*) FILTER (WHERE merged_into IS NULL AND deleted_at IS NULL),
             -count(*) FILTER (WHERE deleted_at IS NULL)
      FROM old_entities GROUP BY user_id, entity_type, workspace
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  END IF;
  -- Looking for (user, type) pairs with many rows costs more than the
  -- deltas themselves, so one statement in 16, at random, looks: the rows
  -- of a pair stay few (their number does not change the sum).
  IF users IS NOT NULL AND random() < 0.0625 THEN
    WITH busy AS (
      SELECT c.user_id, c.entity_type
      FROM neotoma.entity_counts c
      JOIN unnest(users, types) AS t(user_id, entity_type)
        ON t.user_id = c.user_id AND t.entity_type = c.entity_type
      GROUP BY c.user_id, c.entity_type HAVING count(*) > 32),
    folded AS (
      DELETE FROM neotoma.entity_counts c
      WHERE c.ctid IN (SELECT x.ctid FROM neotoma.entity_counts x
                       JOIN busy b ON b.user_id = x.user_id AND b.entity_type = x.entity_type
                       FOR UPDATE OF x SKIP LOCKED)
      RETURNING c.user_id, c.entity_type, c.workspace, c.current, c.total)
    INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
    SELECT user_id, entity_type, workspace, sum(current), sum(total) FROM folded
    GROUP BY user_id, entity_type, workspace;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER entities_counted_insert AFTER INSERT ON neotoma.entities
  REFERENCING NEW TABLE AS new_entities
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_entities();
CREATE TRIGGER entities_counted_update AFTER UPDATE ON neotoma.entities
  REFERENCING OLD TABLE AS old_entities NEW TABLE AS new_entities
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_entities();
CREATE TRIGGER entities_counted_delete AFTER DELETE ON neotoma.entities
  REFERENCING OLD TABLE AS old_entities
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_entities();
CREATE TRIGGER entities_counted_truncate AFTER TRUNCATE ON neotoma.entities
  FOR EACH STATEMENT EXECUTE FUNCTION neotoma_private._count_entities();

-- Rebuilds the count rows from the entities (verify(repair => true)): the
-- session's user's, or, for a superuser session without a user, every
-- user's. The filter is explicit: the function runs as the extension's
-- owner, usually a superuser, whom row level security does not restrict.
-- One statement, so the rows it deletes and the entities it counts are seen
-- at the same moment: a writer committing in between adds its delta after.
CREATE FUNCTION neotoma_private._recount_entities() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  WITH scope AS (
    SELECT (SELECT neotoma.current_user_id()) AS user_id,
           (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user) AS everyone),
  cleared AS (
    DELETE FROM neotoma.entity_counts c USING scope s
    WHERE c.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone))
  INSERT INTO neotoma.entity_counts (user_id, entity_type, workspace, current, total)
  SELECT e.user_id, e.entity_type, e.workspace, count(*) FILTER (WHERE e.merged_into IS NULL AND e.deleted_at IS NULL),
         count(*) FILTER (WHERE e.deleted_at IS NULL)
  FROM neotoma.entities e, scope s
  WHERE e.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone)
  GROUP BY e.user_id, e.entity_type, e.workspace;
$$;
