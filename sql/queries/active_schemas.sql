-- The active schemas of the types $2 (of every type when $2 is null) that
-- user $1 uses: the user's own variant of a type, else the global one. Each
-- row names its schema (scope user, id, and the row version xmin; a
-- definition never changes under one) so that a backend parses each
-- definition once (registry.rs).
SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', user_id, 'id', id, 'version', xmin::text,
                                             'global', global) ORDER BY entity_type), '[]')
FROM (SELECT DISTINCT ON (entity_type) entity_type, user_id, id, xmin,
             user_id = neotoma.global_user_id() AS global
      FROM neotoma.entity_schemas
      WHERE active AND user_id IN ($1::uuid, neotoma.global_user_id())
        AND ($2 IS NULL OR entity_type = ANY($2))
      ORDER BY entity_type, user_id = neotoma.global_user_id()) s
