-- neotoma_router 0.1.0 -> 0.2.0: operator-wide reads over every partition
-- (docs/scale-out.md). call_on_all runs an action on each partition and
-- answers what each said; the library combines them (product analytics:
-- each partition's counters, summed, then the value made of them).
-- call_everywhere is made of it (the same loop was in both).
\echo Use "CREATE EXTENSION neotoma_router" or "ALTER EXTENSION neotoma_router UPDATE" to load this file. \quit

-- [{partition, answer}] in partition order, each answer the envelope
-- (SERVICE_UNAVAILABLE for a partition that could not answer). SECURITY
-- DEFINER as call: the caller chooses neither the partitions nor whether it
-- acts as an operator.
CREATE FUNCTION neotoma_router.call_on_all(user_id uuid, settings jsonb, action text, args text) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p integer;
  answers jsonb := '[]';
BEGIN
  FOR p IN SELECT number FROM neotoma_router.partitions ORDER BY number LOOP
    answers := answers || jsonb_build_object('partition', p, 'answer',
      neotoma_router.run_or_refuse(p, user_id, settings, action, args)::jsonb);
  END LOOP;
  RETURN answers;
END $$;
REVOKE ALL ON FUNCTION neotoma_router.call_on_all(uuid, jsonb, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma_router.call_on_all(uuid, jsonb, text, text) TO neotoma_service;

-- An operator's change of a global schema on every partition: theirs when
-- they all answer alike; otherwise SERVICE_UNAVAILABLE, with what each
-- answered (as 0.1.0's, its loop now call_on_all's).
CREATE OR REPLACE FUNCTION neotoma_router.call_everywhere(user_id uuid, settings jsonb, action text, args text)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  answers jsonb := neotoma_router.call_on_all(user_id, settings, action, args);
BEGIN
  IF (SELECT count(DISTINCT a->'answer') FROM jsonb_array_elements(answers) a) = 1 THEN
    RETURN answers->0->>'answer';
  END IF;
  RETURN jsonb_build_object('error', jsonb_build_object(
    'code', 'SERVICE_UNAVAILABLE',
    'message', 'partially applied: the partitions answered differently (one unreachable, or '
               'already changed): see details.partitions, and retry once they are all reachable',
    'details', jsonb_build_object('partitions', answers, 'retryable', true)))::text;
END $$;
