-- neotoma_router 0.1.0 -> 0.2.0: operator-wide reads over every partition
-- (docs/scale-out.md). call_on_all runs an action on each partition and
-- answers what each said; the library combines them (product analytics:
-- each partition's counters, summed, then the value made of them).
-- call_everywhere is made of it (the same loop was in both). A gateway
-- hears each partition's changes (subscriptions, a remote embeddings
-- provider's worker): partition_connections names where, partition_number
-- which partition a user's feed is on, and the embeddings worker reads and
-- writes each partition's pending embeddings here. Read replicas: each
-- partition may have one (set_replicas), which read-only actions use when
-- the caller asks (neotoma.replica_reads: fresh, waiting until the replica
-- has what the partition had when the call began; stale, as it is).
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

-- Read replicas (Postgres streaming replication of a partition: docs/scale-out.md).
-- A second PL/Proxy cluster, one replica per partition in the same order
-- (a partition without one is read on itself), used by read-only actions
-- only when the caller asks (the library's routing, neotoma.replica_reads).
CREATE TABLE neotoma_router.replicas (
  number     integer PRIMARY KEY REFERENCES neotoma_router.partitions,
  connection text NOT NULL
);
REVOKE ALL ON neotoma_router.replicas FROM PUBLIC;
CREATE SERVER neotoma_replicas FOREIGN DATA WRAPPER plproxy
  OPTIONS (modular_mapping '1', p0 'dbname=neotoma_router_has_no_replicas');

-- Sets the replicas (a superuser's: the connection strings may carry
-- passwords), one per partition in order, NULL for a partition that has
-- none (read on the partition itself). The router's user mapping of
-- neotoma_replicas says who connects (the replicas are copies of the
-- partitions: the same login).
CREATE FUNCTION neotoma_router.set_replicas(connections text[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  n integer;
  partitions integer := (SELECT count(*) FROM neotoma_router.partitions);
  had integer[];
  options text[] := '{}';
BEGIN
  IF partitions = 0 THEN
    RAISE EXCEPTION 'set the partitions first (neotoma_router.set_partitions)';
  END IF;
  PERFORM neotoma_router.refuse_secrets(connections);
  IF coalesce(cardinality(connections), 0) <> partitions THEN
    RAISE EXCEPTION 'this router has % partitions: give one replica each (NULL for none), not %',
      partitions, coalesce(cardinality(connections), 0);
  END IF;
  SELECT array_agg(o.n) INTO had
  FROM pg_catalog.pg_foreign_server fs, unnest(fs.srvoptions) opt,
       LATERAL (SELECT substring(opt FROM '^p([0-9]+)=')::integer AS n) o
  WHERE fs.srvname = 'neotoma_replicas' AND o.n IS NOT NULL;
  DELETE FROM neotoma_router.replicas;
  FOR n IN 0 .. partitions - 1 LOOP
    IF connections[n + 1] IS NOT NULL THEN
      INSERT INTO neotoma_router.replicas (number, connection) VALUES (n, connections[n + 1]);
    END IF;
    options := options || format('%s p%s %L', CASE WHEN n = ANY (had) THEN 'SET' ELSE 'ADD' END, n,
      coalesce(connections[n + 1], (SELECT p.connection FROM neotoma_router.partitions p WHERE p.number = n)));
  END LOOP;
  EXECUTE format('ALTER SERVER neotoma_replicas OPTIONS (%s)', array_to_string(options, ', '));
END $$;

-- Where partition `route`'s WAL is now: every transaction committed there
-- before is below it.
CREATE FUNCTION neotoma_router.wal_position(route integer) RETURNS pg_lsn
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON route;
  SELECT pg_catalog.pg_current_wal_insert_lsn() AS wal_position;
$$;
-- How far the replica of partition `route` has replayed (NULL: it is not
-- in recovery, the partition itself).
CREATE FUNCTION neotoma_router.replica_replayed(route integer) RETURNS pg_lsn
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_replicas';
  RUN ON route;
  SELECT pg_catalog.pg_last_wal_replay_lsn() AS replica_replayed;
$$;
CREATE FUNCTION neotoma_router.run_on_replica(route integer, user_id uuid, as_operator boolean, settings jsonb,
                                              action text, args text) RETURNS text
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_replicas';
  RUN ON route;
  SELECT neotoma.routed(user_id, as_operator, settings, action, args)::text AS run_on_replica;
$$;

-- A read-only action on the replica of the user's partition, as call runs
-- it on the partition. fresh: first waits, up to 2 s, until the replica has
-- replayed what the partition had when the call began (so it sees every
-- write committed before, anyone's), else answers SERVICE_UNAVAILABLE
-- (retryable); not fresh: reads the replica as it is. Without replicas,
-- the partition answers.
CREATE FUNCTION neotoma_router.call_replica(user_id uuid, settings jsonb, action text, args text, fresh boolean)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  route integer := neotoma_router.partition_of(user_id);
  position pg_lsn;
  replayed pg_lsn;
  deadline timestamptz := clock_timestamp() + interval '2 seconds';
  refused text;
BEGIN
  IF route IS NULL OR NOT EXISTS (SELECT FROM neotoma_router.replicas) THEN
    RETURN neotoma_router.call(user_id, settings, action, args);
  END IF;
  IF user_id IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock_shared(1852797549, hashtext(user_id::text));
    IF EXISTS (SELECT FROM neotoma_router.moves m WHERE m.user_id = call_replica.user_id) THEN
      RETURN neotoma_router.call(user_id, settings, action, args);  -- its refusal
    END IF;
  END IF;
  BEGIN
    IF fresh THEN
      position := neotoma_router.wal_position(route);
      LOOP
        replayed := neotoma_router.replica_replayed(route);
        EXIT WHEN replayed IS NULL OR replayed >= position;
        IF clock_timestamp() >= deadline THEN
          RETURN jsonb_build_object('error', jsonb_build_object(
            'code', 'SERVICE_UNAVAILABLE',
            'message', format('the replica is %s bytes behind its partition: retry, or read from the partition '
                              '(neotoma.replica_reads = off)', position - replayed),
            'details', jsonb_build_object('retryable', true, 'retry_after_seconds', 1)))::text;
        END IF;
        PERFORM pg_sleep(0.005);
      END LOOP;
    END IF;
    RETURN neotoma_router.run_on_replica(route, user_id, neotoma_router.caller_is_operator(), settings, action, args);
  EXCEPTION WHEN OTHERS THEN
    RETURN jsonb_build_object('error', jsonb_build_object(
      'code', 'SERVICE_UNAVAILABLE', 'message', format('a replica could not answer: %s', SQLERRM),
      'details', jsonb_build_object('route', route, 'retryable', true)))::text;
  END;
END $$;
REVOKE ALL ON FUNCTION neotoma_router.set_replicas(text[]), neotoma_router.wal_position(integer),
  neotoma_router.replica_replayed(integer),
  neotoma_router.run_on_replica(integer, uuid, boolean, jsonb, text, text),
  neotoma_router.call_replica(uuid, jsonb, text, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma_router.call_replica(uuid, jsonb, text, text, boolean) TO neotoma_service;

-- Each partition, reachable or not, and its replica when it has one (a
-- gateway's /readyz): [{partition, ready, extension_version | error,
-- replica: {ready, replaying, lag_bytes | error}}], in order. lag_bytes:
-- how much of the partition's WAL the replica has not replayed yet.
CREATE OR REPLACE FUNCTION neotoma_router.partitions_status() RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  states jsonb := '[]';
  s jsonb;
  replica jsonb;
  position pg_lsn;
  replayed pg_lsn;
BEGIN
  FOR s IN SELECT e.s - 'shared_state' FROM jsonb_array_elements(neotoma_router.partition_states()) e(s) LOOP
    IF EXISTS (SELECT FROM neotoma_router.replicas r WHERE r.number = (s->>'partition')::integer) THEN
      BEGIN
        replayed := neotoma_router.replica_replayed((s->>'partition')::integer);
        replica := jsonb_build_object('ready', true, 'replaying', replayed IS NOT NULL);
        BEGIN
          position := neotoma_router.wal_position((s->>'partition')::integer);
          replica := replica || jsonb_build_object('lag_bytes',
            CASE WHEN replayed IS NOT NULL THEN greatest(position - replayed, 0) END);
        EXCEPTION WHEN OTHERS THEN
          NULL;  -- the partition is down: its own state says so
        END;
      EXCEPTION WHEN OTHERS THEN
        replica := jsonb_build_object('ready', false, 'error', SQLERRM);
      END;
      s := s || jsonb_build_object('replica', replica);
    END IF;
    states := states || s;
  END LOOP;
  RETURN states;
END $$;

-- The partitions' keys that sign file URLs, rotated on every partition (an
-- operator's neotoma.rotate_signing_key on the router runs it): each
-- partition's new key.
CREATE FUNCTION neotoma_router.rotate_signing_keys(revoke_previous boolean) RETURNS SETOF uuid
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON ALL;
  SELECT neotoma.rotate_signing_key(revoke_previous) AS rotate_signing_keys;
$$;
REVOKE ALL ON FUNCTION neotoma_router.rotate_signing_keys(boolean) FROM PUBLIC;

-- The entities linked to nothing, on every partition (a gateway's
-- /metrics: neotoma_graph_orphan_nodes_total), added up.
CREATE FUNCTION neotoma_router.graph_orphan_counts() RETURNS SETOF bigint
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON ALL;
  SELECT neotoma.graph_orphan_count() AS graph_orphan_counts;
$$;
CREATE FUNCTION neotoma_router.graph_orphan_count() RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(sum(n), 0)::bigint FROM neotoma_router.graph_orphan_counts() n $$;
REVOKE ALL ON FUNCTION neotoma_router.graph_orphan_counts(), neotoma_router.graph_orphan_count() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma_router.graph_orphan_count() TO neotoma_service;

-- A connection string of the router's clusters never carries a password:
-- the servers' options are readable by every role (pg_foreign_server), so
-- a password there would let any caller log in as the router's login, which
-- may act for any user. Passwords go in the user mappings, which only
-- their owners and superusers read.
CREATE FUNCTION neotoma_router.refuse_secrets(connections text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  c text;
BEGIN
  FOREACH c IN ARRAY coalesce(connections, '{}') LOOP
    IF c ~* 'pass(word)?\s*=|pass%|password' OR c ~* '^postgres(ql)?://[^/@]*:[^/@]*@' THEN
      RAISE EXCEPTION 'a connection string of the router carries no password (the servers'' options are readable by every role)'
        USING HINT = 'put it in the user mapping: CREATE USER MAPPING FOR PUBLIC SERVER neotoma_partitions OPTIONS (user ''…'', password ''…'')';
    END IF;
  END LOOP;
END $$;
REVOKE ALL ON FUNCTION neotoma_router.refuse_secrets(text[]) FROM PUBLIC;

-- set_partitions as in 0.1.0, refusing connection strings with a password.
CREATE OR REPLACE FUNCTION neotoma_router.set_partitions(connections text[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  old integer[] := ARRAY(SELECT number FROM neotoma_router.partitions ORDER BY number);
  n integer;
  options text[] := '{}';
BEGIN
  PERFORM neotoma_router.refuse_secrets(connections);
  IF coalesce(cardinality(connections), 0) = 0 THEN
    RAISE EXCEPTION 'a router needs at least one partition';
  END IF;
  IF cardinality(old) > 0 AND cardinality(old) <> cardinality(connections) THEN
    RAISE EXCEPTION 'this router has % partitions, not %', cardinality(old), cardinality(connections)
      USING HINT = 'the hash of a user picks among the partitions: with another number it would pick '
                   'one that does not hold the user (docs/scale-out.md)';
  END IF;
  FOR n IN 0 .. cardinality(connections) - 1 LOOP
    INSERT INTO neotoma_router.partitions (number, connection) VALUES (n, connections[n + 1])
    ON CONFLICT (number) DO UPDATE SET connection = excluded.connection;
    options := options || format('%s p%s %L', CASE WHEN n = 0 OR n = ANY (old) THEN 'SET' ELSE 'ADD' END,
                                 n, connections[n + 1]);
  END LOOP;
  EXECUTE format('ALTER SERVER neotoma_partitions OPTIONS (%s)', array_to_string(options, ', '));
END $$;
