-- list_contradictions' candidates come from the index of entities with a
-- field given two or more values by two or more sources (0.22.0: each
-- field's reducer state keeps it, "d" = 3): one source changing its mind
-- is not one until another source gives any of its values; a merged
-- entity's observations count for its target; deleted entities, other
-- types and other workspaces are not listed; pages in id order. As an
-- ordinary role; verify() clean.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '58000000-0000-0000-0000-00000000000a';

-- One source, two phones for Bea: no contradiction yet.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Bea", "email": "bea@c.example", "phone": "1"},
                                    {"entity_type": "person", "name": "Bea", "email": "bea@c.example", "phone": "2"}]}')
       IS NOT NULL AS bea_one_source;
SELECT id AS bea FROM neotoma.entities WHERE identity_key = 'email=bea@c.example' \gset
SELECT jsonb_array_length(neotoma.list_contradictions('{}')->'contradictions') AS listed;
-- Another source gives the phone the snapshot has: two values, two sources.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Bea", "email": "bea@c.example", "phone": "2"}]}')
       IS NOT NULL AS bea_second_source;
SELECT c->>'entity_id' = :'bea' AS is_bea, c->>'field' AS field, jsonb_path_query_array(c, '$.values[*].value') AS competing
FROM jsonb_array_elements(neotoma.list_contradictions('{}')->'contradictions') c;

-- Cy (one phone) is merged into Di (another phone, another source): Di is
-- listed with both, Cy is not.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Cy", "email": "cy@c.example", "phone": "3"}]}') IS NOT NULL AS cy;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Di", "email": "di@c.example", "phone": "4"}]}') IS NOT NULL AS di;
SELECT id AS cy FROM neotoma.entities WHERE identity_key = 'email=cy@c.example' \gset
SELECT id AS di FROM neotoma.entities WHERE identity_key = 'email=di@c.example' \gset
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'cy', 'to_entity_id', :'di')) ? 'merged_at' AS merged;
SELECT c->>'entity_id' = :'di' AS is_di, c->>'field' AS field
FROM jsonb_array_elements(neotoma.list_contradictions(jsonb_build_object('entity_id', :'di'))->'contradictions') c
ORDER BY 2;
SELECT array_agg(CASE c->>'entity_id' WHEN :'bea' THEN 'bea' WHEN :'di' THEN 'di' ELSE c->>'entity_id' END
                 || '.' || (c->>'field') ORDER BY c->>'entity_id', c->>'field') AS listed
FROM jsonb_array_elements(neotoma.list_contradictions('{}')->'contradictions') c;

-- Eve disagrees too, then is deleted: no longer listed; restored: again.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Eve", "email": "eve@c.example", "phone": "5"}]}') IS NOT NULL AS eve;
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Eve", "email": "eve@c.example", "phone": "6"}]}') IS NOT NULL AS eve_again;
SELECT id AS eve FROM neotoma.entities WHERE identity_key = 'email=eve@c.example' \gset
SELECT (neotoma.list_contradictions('{}')->>'entities_checked')::int AS checked_with_eve;
SELECT neotoma.delete_entity(jsonb_build_object('entity_id', :'eve')) ? 'deleted_at' AS deleted;
SELECT (neotoma.list_contradictions('{}')->>'entities_checked')::int AS checked_without_eve;
SELECT neotoma.restore_entity(jsonb_build_object('entity_id', :'eve')) IS NOT NULL AS restored;
SELECT (neotoma.list_contradictions('{}')->>'entities_checked')::int AS checked_with_eve_again;

-- Pages of one entity, in id order; a type with none; another workspace.
SELECT r->'has_more' AS more, r->'entities_checked' AS checked
FROM neotoma.list_contradictions('{"limit": 1}') r;
SELECT r->'has_more' AS more, r->'entities_checked' AS checked
FROM neotoma.list_contradictions('{"limit": 1, "offset": 2}') r;
SELECT (SELECT array_agg(r->'contradictions'->0->>'entity_id' ORDER BY o)
        FROM generate_series(0, 2) o,
             neotoma.list_contradictions(jsonb_build_object('limit', 1, 'offset', o)) r)
     = (SELECT array_agg(DISTINCT c->>'entity_id' ORDER BY c->>'entity_id')
        FROM jsonb_array_elements(neotoma.list_contradictions('{"limit": 100}')->'contradictions') c)
       AS pages_in_id_order;
SELECT (neotoma.list_contradictions('{"entity_type": "task"}')->>'entities_checked')::int AS tasks_checked;
SELECT neotoma.store('{"workspace": "side", "entities": [{"entity_type": "person", "name": "Flo", "email": "flo@c.example", "phone": "7"}]}') IS NOT NULL AS flo;
SELECT neotoma.store('{"workspace": "side", "entities": [{"entity_type": "person", "name": "Flo", "email": "flo@c.example", "phone": "8"}]}') IS NOT NULL AS flo_again;
SELECT (neotoma.list_contradictions('{}')->>'entities_checked')::int AS checked_in_default,
       (neotoma.list_contradictions('{"workspace": "side"}')->>'entities_checked')::int AS checked_in_side;

-- The index holds exactly the snapshots whose fold disagrees (Cy's own
-- snapshot agrees: its observations are Di's now).
SELECT count(*) AS disagreeing_snapshots FROM neotoma.entity_snapshots
WHERE reducer_state @? '$.fields.* ? (@.d == 3)';
SELECT (neotoma.verify())->'ok' AS verified;
ROLLBACK;
