-- neotoma_router 0.1.0 -> 0.2.0: operator-wide reads over every partition
-- (docs/scale-out.md). call_on_all runs an action on each partition and
-- answers what each said; the library combines them (product analytics:
-- each partition's counters, summed, then the value made of them).
-- call_everywhere is made of it (the same loop was in both). A gateway
-- hears each partition's changes (subscriptions, a remote embeddings
-- provider's worker): partition_connections names where, partition_number
-- which partition a user's feed is on, and the embeddings worker reads and
-- writes each partition's pending embeddings here.
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

-- Each partition's connection string without its user and password
-- ([{partition, connection}] in order), for a gateway's listening
-- connections: it connects there as its own login (DATABASE_URL's user and
-- password), which needs no grant (it only LISTENs and reads snapshot
-- bounds); the router's own login, which may act for any user there, stays
-- the router's.
CREATE FUNCTION neotoma_router.partition_connections() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('partition', p.number, 'connection', btrim(
           CASE WHEN p.connection ~* '^postgres(ql)?://'
                THEN regexp_replace(regexp_replace(regexp_replace(p.connection,
                       '^(postgres(ql)?://)[^@/?]*@', '\1', 'i'), '(?<=[?&])(user|password)=[^&]*(&|$)', '', 'gi'),
                       '[?&]$', '')
                ELSE regexp_replace(p.connection,
                                    '(^|\s)(user|password)\s*=\s*(''([^''\\]|\\.)*''|\S*)', '\1', 'gi')
           END)) ORDER BY p.number), '[]')
  FROM neotoma_router.partitions p $$;

-- The partition a user's calls run on, as a number from 0 (NULL while the
-- router has none): PL/Proxy's modular mapping of partition_of.
CREATE FUNCTION neotoma_router.partition_number(user_id uuid) RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT abs(neotoma_router.partition_of($1) % (SELECT count(*) FROM neotoma_router.partitions))::integer $$;

-- A remote embeddings provider's worker on a router (neotoma.pending_embeddings,
-- pending_embeddings_of and put_embeddings on one server), on the partition
-- whose changes it heard of.
CREATE FUNCTION neotoma_router.pending_embeddings_on(route integer, model text, max_rows integer, skip text[])
RETURNS jsonb
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON route;
  SELECT neotoma.pending_embeddings(model, max_rows, skip) AS pending_embeddings_on;
$$;
CREATE FUNCTION neotoma_router.pending_embeddings_of_on(route integer, model text, user_id uuid, xid text,
                                                        max_rows integer, skip text[]) RETURNS jsonb
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON route;
  SELECT neotoma.pending_embeddings_of(model, user_id, xid::xid8, max_rows, skip) AS pending_embeddings_of_on;
$$;
CREATE FUNCTION neotoma_router.put_embeddings_on(route integer, model text, rows jsonb) RETURNS integer
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON route;
  SELECT neotoma.put_embeddings(model, rows) AS put_embeddings_on;
$$;
-- A partition number that is not one of the router's would wrap around
-- (modular mapping): refused.
CREATE FUNCTION neotoma_router.known_partition(partition integer) RETURNS integer
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT EXISTS (SELECT FROM neotoma_router.partitions p WHERE p.number = known_partition.partition) THEN
    RAISE EXCEPTION 'this router has no partition %', partition;
  END IF;
  RETURN partition;
END $$;
CREATE FUNCTION neotoma_router.pending_embeddings(partition integer, model text, max_rows integer, skip text[])
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_router.pending_embeddings_on(neotoma_router.known_partition($1), $2, $3, $4) $$;
CREATE FUNCTION neotoma_router.pending_embeddings_of(partition integer, model text, user_id uuid, xid text,
                                                     max_rows integer, skip text[]) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_router.pending_embeddings_of_on(neotoma_router.known_partition($1), $2, $3, $4, $5, $6) $$;
CREATE FUNCTION neotoma_router.put_embeddings(partition integer, model text, rows jsonb) RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_router.put_embeddings_on(neotoma_router.known_partition($1), $2, $3) $$;

REVOKE ALL ON FUNCTION neotoma_router.partition_connections(), neotoma_router.partition_number(uuid),
  neotoma_router.pending_embeddings_on(integer, text, integer, text[]),
  neotoma_router.pending_embeddings_of_on(integer, text, uuid, text, integer, text[]),
  neotoma_router.put_embeddings_on(integer, text, jsonb), neotoma_router.known_partition(integer),
  neotoma_router.pending_embeddings(integer, text, integer, text[]),
  neotoma_router.pending_embeddings_of(integer, text, uuid, text, integer, text[]),
  neotoma_router.put_embeddings(integer, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma_router.partition_connections(), neotoma_router.partition_number(uuid),
  neotoma_router.pending_embeddings(integer, text, integer, text[]),
  neotoma_router.pending_embeddings_of(integer, text, uuid, text, integer, text[]),
  neotoma_router.put_embeddings(integer, text, jsonb) TO neotoma_service;
