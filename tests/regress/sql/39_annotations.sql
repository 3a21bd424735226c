-- annotate: a note on an entity or an observation changes no snapshot and
-- no provenance; the same note again is the same annotation; the snapshot
-- answers them when asked; the audit trail lists them; a merged entity's go
-- with it; erasing the entity removes them; isolation (as a non-superuser);
-- bad input; verify() clean.
\ir include/setup.sql
BEGIN;
\set SHOW_CONTEXT never
SET ROLE neotoma_regress_agent;
SET neotoma.user_id = '39000000-0000-0000-0000-00000000000a';

SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ann Lee", "email": "ann@example.com", "phone": "+1 555 0100"}]}') IS NOT NULL AS stored;
SELECT id AS ann FROM neotoma.entities WHERE identity_key = 'email=ann@example.com' \gset
SELECT id AS obs FROM neotoma.observations WHERE entity_id = :'ann' \gset
CREATE TEMP TABLE before AS SELECT snapshot, provenance FROM neotoma.entity_snapshots WHERE entity_id = :'ann';

SELECT r->>'entity_id' = :'ann' AS on_ann, r->'observation_id' AS observation, r->>'note' AS note
FROM neotoma.annotate(jsonb_build_object('entity_id', :'ann', 'note', '  Met at the 2026 conference. ')) r;
SELECT r->>'entity_id' = :'ann' AS on_ann, r->>'observation_id' = :'obs' AS on_obs
FROM neotoma.annotate(jsonb_build_object('observation_id', :'obs', 'note', 'The phone was read off a business card.')) r;
-- The same note again: the same annotation, nothing new.
SELECT (neotoma.annotate(jsonb_build_object('entity_id', :'ann', 'note', 'Met at the 2026 conference.'))->>'annotation_id')
     = (neotoma.annotate(jsonb_build_object('entity_id', :'ann', 'note', 'Met at the 2026 conference.'))->>'annotation_id') AS same_id,
       (SELECT count(*) FROM neotoma.annotations) AS annotations;
-- Nothing of the truth model moved.
SELECT (SELECT snapshot = b.snapshot AND provenance = b.provenance FROM neotoma.entity_snapshots WHERE entity_id = :'ann') AS unchanged
FROM before b;
SELECT jsonb_path_query_array(r, '$.annotations[*].note') AS notes, r ? 'annotations' AS asked
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'ann', 'include_annotations', true)) r;
SELECT r ? 'annotations' AS without_asking FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'ann')) r;
SELECT action, target_kind, details->>'note' AS note FROM neotoma.audit_trail WHERE action = 'annotate' ORDER BY at, target_kind;

-- A merged entity's notes go with it.
SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "A. Lee", "email": "a.lee@example.com"}]}') IS NOT NULL AS stored;
SELECT id AS alee FROM neotoma.entities WHERE identity_key = 'email=a.lee@example.com' \gset
SELECT neotoma.annotate(jsonb_build_object('entity_id', :'alee', 'note', 'Same person as Ann?')) IS NOT NULL AS annotated;
SELECT neotoma.merge_entities(jsonb_build_object('from_entity_id', :'alee', 'to_entity_id', :'ann')) IS NOT NULL AS merged;
SELECT jsonb_array_length(r->'annotations') AS notes
FROM neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', :'ann', 'include_annotations', true)) r;
-- Annotating a merged entity annotates where it went.
SELECT r->>'entity_id' = :'ann' AS redirected FROM neotoma.annotate(jsonb_build_object('entity_id', :'alee', 'note', 'Merged.')) r;

-- Another user can neither annotate nor read them.
SET neotoma.user_id = '39000000-0000-0000-0000-00000000000b';
SELECT error_code(try_action('annotate', jsonb_build_object('entity_id', :'ann', 'note', 'x'))) AS on_entity,
       error_code(try_action('annotate', jsonb_build_object('observation_id', :'obs', 'note', 'x'))) AS on_observation,
       (SELECT count(*) FROM neotoma.annotations) AS visible,
       (SELECT count(*) FROM neotoma.audit_trail WHERE action = 'annotate') AS audited;
SET neotoma.user_id = '39000000-0000-0000-0000-00000000000a';

-- Bad input.
SELECT error_code(try_action('annotate', args)) AS code, try_action('annotate', args)->'error'->'details'->>'field' AS field
FROM (VALUES (jsonb_build_object('entity_id', :'ann', 'note', '  ')),
             (jsonb_build_object('entity_id', :'ann', 'note', repeat('x', 10001))),
             ('{"note": "to nothing"}'::jsonb),
             ('{"entity_id": "nope", "note": "x"}'),
             ('{"observation_id": "nope", "note": "x"}'),
             ('{"observation_id": "00000000-0000-0000-0000-000000000001", "note": "x"}'),
             (jsonb_build_object('entity_id', :'alee', 'observation_id', :'obs', 'note', 'x')),
             (jsonb_build_object('entity_id', :'ann', 'note', 'x', 'extra', 1))) t(args);

-- Erasing the entity removes its notes with it.
SELECT (neotoma.verify())->'ok' AS clean;
SELECT neotoma.erase(jsonb_build_object('entity_id', :'ann', 'confirm', true)) IS NOT NULL AS erased;
SELECT count(*) AS left_of_ann FROM neotoma.annotations WHERE entity_id = :'ann';
ROLLBACK;
