-- 0.21.0 -> 0.22.0: contradictions listed from an index (issue 40). Each
-- field's reducer state keeps whether its observations give two or more
-- values and come from two or more sources ("d"); the index
-- entity_snapshots_disagreeing holds the entities with such a field, and
-- list_contradictions reads its candidates there. States folded before
-- have no such bits: every snapshot whose stored state differs from the
-- fold of its observations is folded again (neotoma.verify(true), as a
-- repair does), so the index holds every candidate when the update ends
-- (about as long as a verify(): 111 s for 415,000 entities on a 2-core
-- machine).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

CREATE INDEX entity_snapshots_disagreeing ON neotoma.entity_snapshots (user_id, entity_id)
  WHERE reducer_state @? '$.fields.* ? (@.d == 3)';

SELECT neotoma.verify(true) IS NOT NULL;

SELECT neotoma_private.grant_platform_roles();
