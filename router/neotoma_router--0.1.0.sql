-- neotoma_router 0.1.0: this database routes Neotoma's actions to the
-- partitions that hold the users' data (docs/scale-out.md). The neotoma
-- extension here keeps what every partition shares (tokens, OAuth clients,
-- logins, inspector sessions); its actions, seeing this extension, call
-- neotoma_router.call, which runs neotoma.routed (through PL/Proxy) on the
-- partition of the user (an ordinary neotoma extension there).
\echo Use "CREATE EXTENSION neotoma_router CASCADE" to load this file. \quit

-- The partitions, numbered from 0, each a libpq connection string (its
-- user, when it names none, comes from the user mapping of the server
-- neotoma_partitions; that role must be a member of neotoma_router there).
CREATE TABLE neotoma_router.partitions (
  number     integer PRIMARY KEY CHECK (number >= 0),
  connection text NOT NULL
);
-- Users placed on another partition than their hash gives (moved).
CREATE TABLE neotoma_router.placements (
  user_id   uuid PRIMARY KEY,
  partition integer NOT NULL REFERENCES neotoma_router.partitions
);
-- Users being moved to another partition (neotoma-mcp partition move):
-- their calls are refused meanwhile, with a retry hint.
CREATE TABLE neotoma_router.moves (
  user_id        uuid PRIMARY KEY,
  from_partition integer NOT NULL REFERENCES neotoma_router.partitions,
  to_partition   integer NOT NULL REFERENCES neotoma_router.partitions,
  started_at     timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON neotoma_router.partitions, neotoma_router.placements, neotoma_router.moves FROM PUBLIC;

-- PL/Proxy's cluster: a foreign server whose options are the partitions'
-- connection strings (p0, p1, …). modular_mapping: a hash picks partition
-- abs(hash % count), so any number of partitions works, and a partition's
-- own number picks itself. PL/Proxy refuses a cluster of none: p0 stands
-- for nothing until set_partitions (partition_of answers NULL before).
CREATE SERVER neotoma_partitions FOREIGN DATA WRAPPER plproxy
  OPTIONS (modular_mapping '1', p0 'dbname=neotoma_router_has_no_partitions');

-- Sets the partitions (a superuser's: the connection strings may carry
-- passwords): numbered in the order given. Their number is set once: with
-- another, the hash would send users to partitions that do not hold them
-- (adding a partition means placing users first: docs/scale-out.md); a
-- partition's connection string may change.
CREATE FUNCTION neotoma_router.set_partitions(connections text[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  old integer[] := ARRAY(SELECT number FROM neotoma_router.partitions ORDER BY number);
  n integer;
  options text[] := '{}';
BEGIN
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

-- The partition of a user: where it was placed, else by the hash of its id
-- (no user: partition 0, where an action without one answers as any would;
-- NULL while the router has no partitions).
CREATE FUNCTION neotoma_router.partition_of(user_id uuid) RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN NOT EXISTS (SELECT FROM neotoma_router.partitions) THEN NULL
              WHEN $1 IS NULL THEN 0
              ELSE coalesce((SELECT p.partition FROM neotoma_router.placements p WHERE p.user_id = $1),
                            hashtext($1::text)) END $$;

-- Runs an action on partition `route` (a number, or a user's hash) for
-- user_id: neotoma.routed there answers the action's envelope.
CREATE FUNCTION neotoma_router.run(route integer, user_id uuid, as_operator boolean, settings jsonb,
                                   action text, args text) RETURNS text
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON route;
  SELECT neotoma.routed(user_id, as_operator, settings, action, args)::text AS run;
$$;

-- Whether the caller (the role that logged in: a role that sets itself
-- down to another can set itself back) acts as an operator: neotoma.operator
-- when set (only operators may set it), else membership of
-- neotoma_operator; as neotoma.session_is_operator() answers outside a
-- SECURITY DEFINER function.
CREATE FUNCTION neotoma_router.caller_is_operator() RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN nullif(btrim(current_setting('neotoma.operator', true)), '') IS NOT NULL
              THEN lower(btrim(current_setting('neotoma.operator', true))) IN ('on', 'true', '1', 'yes')
              ELSE pg_has_role(session_user, 'neotoma_operator', 'USAGE') END $$;

-- run, answering SERVICE_UNAVAILABLE (retryable) when the partition could
-- not answer (unreachable, or an error outside the action's envelope), so
-- that a caller gets an envelope, never a raw error.
CREATE FUNCTION neotoma_router.run_or_refuse(route integer, user_id uuid, settings jsonb,
                                             action text, args text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF route IS NULL THEN
    RETURN jsonb_build_object('error', jsonb_build_object(
      'code', 'SERVICE_UNAVAILABLE',
      'message', 'this router has no partitions yet: a superuser sets them (neotoma_router.set_partitions)',
      'details', jsonb_build_object('retryable', false)))::text;
  END IF;
  RETURN neotoma_router.run(route, user_id, neotoma_router.caller_is_operator(), settings, action, args);
EXCEPTION WHEN OTHERS THEN
  RETURN jsonb_build_object('error', jsonb_build_object(
    'code', 'SERVICE_UNAVAILABLE', 'message', format('a partition could not answer: %s', SQLERRM),
    'details', jsonb_build_object('route', route, 'retryable', true)))::text;
END $$;

-- The entry points, for the library's _invoke in a router. SECURITY
-- DEFINER: the caller (a role that names users: neotoma_service) chooses
-- neither the partition (a user's data on another partition than its own
-- would be lost to it) nor whether it acts as an operator.
--
-- Runs an action on the partition of user_id. The call holds the user's
-- move lock shared until its transaction ends: a move begins only once the
-- calls in flight have ended, and refuses the calls after.
CREATE FUNCTION neotoma_router.call(user_id uuid, settings jsonb, action text, args text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF user_id IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock_shared(1852797549, hashtext(user_id::text));
    IF EXISTS (SELECT FROM neotoma_router.moves m WHERE m.user_id = call.user_id) THEN
      RETURN jsonb_build_object('error', jsonb_build_object(
        'code', 'SERVICE_UNAVAILABLE',
        'message', 'this user''s memory is being moved to another partition: retry in a few seconds',
        'details', jsonb_build_object('retryable', true, 'retry_after_seconds', 5)))::text;
    END IF;
  END IF;
  RETURN neotoma_router.run_or_refuse(neotoma_router.partition_of(user_id), user_id, settings, action, args);
END $$;

-- A move of user_id to partition `target` (neotoma-mcp partition move runs
-- these, as a superuser): begins once the user's calls in flight have
-- ended (its lock, exclusive), answers the partition the user is on; the
-- user's calls are refused until it is finished or aborted.
CREATE FUNCTION neotoma_router.start_move(user_id uuid, target integer) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here integer := abs(neotoma_router.partition_of(user_id) % (SELECT count(*) FROM neotoma_router.partitions));
BEGIN
  IF NOT EXISTS (SELECT FROM neotoma_router.partitions p WHERE p.number = target) THEN
    RAISE EXCEPTION 'there is no partition %', target;
  END IF;
  IF here = target THEN
    RAISE EXCEPTION 'user % is on partition % already', user_id, target;
  END IF;
  PERFORM pg_advisory_xact_lock(1852797549, hashtext(user_id::text));
  INSERT INTO neotoma_router.moves (user_id, from_partition, to_partition) VALUES (user_id, here, target);
  RETURN here;
END $$;
-- The copy is on its new partition: the user's calls go there from now on.
CREATE FUNCTION neotoma_router.finish_move(user_id uuid) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  INSERT INTO neotoma_router.placements (user_id, partition)
  SELECT m.user_id, m.to_partition FROM neotoma_router.moves m WHERE m.user_id = $1
  ON CONFLICT (user_id) DO UPDATE SET partition = excluded.partition;
  DELETE FROM neotoma_router.moves m WHERE m.user_id = $1 $$;
-- The move failed: the user stays where it was.
CREATE FUNCTION neotoma_router.abort_move(user_id uuid) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  DELETE FROM neotoma_router.moves m WHERE m.user_id = $1 $$;

-- Runs an action on every partition, one after the other (an operator's
-- change of a global schema, which each partition keeps): answers theirs
-- when they all answer alike; otherwise SERVICE_UNAVAILABLE, with what each
-- answered, so that the operator sees where it applied and where not.
CREATE FUNCTION neotoma_router.call_everywhere(user_id uuid, settings jsonb, action text, args text)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p integer;
  answers jsonb := '[]';
BEGIN
  FOR p IN SELECT number FROM neotoma_router.partitions ORDER BY number LOOP
    answers := answers || jsonb_build_object('partition', p, 'answer',
      neotoma_router.run_or_refuse(p, user_id, settings, action, args)::jsonb);
  END LOOP;
  IF (SELECT count(DISTINCT a->'answer') FROM jsonb_array_elements(answers) a) = 1 THEN
    RETURN answers->0->>'answer';
  END IF;
  RETURN jsonb_build_object('error', jsonb_build_object(
    'code', 'SERVICE_UNAVAILABLE',
    'message', 'partially applied: the partitions answered differently (one unreachable, or '
               'already changed): see details.partitions, and retry once they are all reachable',
    'details', jsonb_build_object('partitions', answers, 'retryable', true)))::text;
END $$;

-- The upkeep of semantic search's lists on every partition (a gateway
-- runs it in the background, neotoma.maintain_embedding_lists on one
-- server): what each partition built.
CREATE FUNCTION neotoma_router.maintain_lists_on_all(max_builds integer) RETURNS SETOF jsonb
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON ALL;
  SELECT neotoma.maintain_embedding_lists(max_builds) AS maintain_lists_on_all;
$$;
-- All the partitions built, as one array.
CREATE FUNCTION neotoma_router.maintain_embedding_lists(max_builds integer) RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_agg(b), '[]')
  FROM neotoma_router.maintain_lists_on_all(max_builds) p(built), jsonb_array_elements(p.built) b $$;

-- A partition's state: which neotoma it has, and a digest of what every
-- partition keeps a copy of (the global schemas and type mappings: equal
-- on every partition when they agree). It answers, so it is reachable.
CREATE FUNCTION neotoma_router.partition_state(route integer) RETURNS jsonb
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON route;
  SELECT jsonb_build_object(
    'extension_version', (SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'neotoma'),
    'shared_state', md5(concat_ws('|',
      (SELECT string_agg(concat_ws(',', s.entity_type, s.schema_version, s.active, s.description, s.definition::text),
                         ';' ORDER BY s.entity_type, s.schema_version)
       FROM neotoma.entity_schemas s WHERE s.user_id = neotoma.global_user_id()),
      (SELECT string_agg(concat_ws(',', m.variant, m.canonical), ';' ORDER BY m.variant)
       FROM neotoma.entity_type_mappings m WHERE m.user_id = neotoma.global_user_id())))) AS partition_state;
$$;
-- Each partition's state, reachable or not: [{partition, ready,
-- extension_version, shared_state} | {partition, ready: false, error}], in
-- order.
CREATE FUNCTION neotoma_router.partition_states() RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p integer;
  states jsonb := '[]';
BEGIN
  FOR p IN SELECT number FROM neotoma_router.partitions ORDER BY number LOOP
    BEGIN
      states := states || (jsonb_build_object('partition', p, 'ready', true) || neotoma_router.partition_state(p));
    EXCEPTION WHEN OTHERS THEN
      states := states || jsonb_build_object('partition', p, 'ready', false, 'error', SQLERRM);
    END;
  END LOOP;
  RETURN states;
END $$;
-- Each partition, reachable or not (a gateway's /readyz): [{partition,
-- ready, extension_version | error}], in order.
CREATE FUNCTION neotoma_router.partitions_status() RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_agg(s - 'shared_state' ORDER BY n), '[]')
  FROM jsonb_array_elements(neotoma_router.partition_states()) WITH ORDINALITY AS e(s, n) $$;
-- Whether the partitions agree on what they all keep (after a change of a
-- global schema answered as partially applied, run it again until they
-- do): {ok, partitions: [{partition, shared_state | error}]}; ok when every
-- partition answers and all their digests are equal.
CREATE FUNCTION neotoma_router.verify() RETURNS jsonb
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object(
    'ok', count(*) > 0 AND bool_and((s->>'ready')::boolean) AND count(DISTINCT s->>'shared_state') = 1,
    'partitions', coalesce(jsonb_agg(s - 'ready' - 'extension_version' ORDER BY n), '[]'))
  FROM jsonb_array_elements(neotoma_router.partition_states()) WITH ORDINALITY AS e(s, n) $$;

-- A stored file's bytes (for a gateway's model interpreter) and a signed
-- URL's file, read on the partition of their user as one server reads them
-- (the user set for row level security; the signature checked with that
-- partition's keys, which signed it).
CREATE FUNCTION neotoma_router.file_content_on(route integer, user_id uuid, source_id uuid) RETURNS bytea
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON route;
  SELECT f.content AS file_content_on
  FROM (SELECT pg_catalog.set_config('neotoma.user_id', user_id::text, true)) AS acting,
       LATERAL (SELECT neotoma.file_content(source_id) AS content) f;
$$;
CREATE FUNCTION neotoma_router.file_content(user_id uuid, source_id uuid) RETURNS bytea
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT neotoma_router.file_content_on(neotoma_router.partition_of($1), $1, $2) $$;
CREATE FUNCTION neotoma_router.signed_file_on(route integer, user_id uuid, source_id uuid, expires bigint,
                                              kid uuid, sig text, OUT mime_type text,
                                              OUT original_filename text, OUT content bytea)
RETURNS SETOF record
LANGUAGE plproxy AS $$
  CLUSTER 'neotoma_partitions';
  RUN ON route;
  SELECT * FROM neotoma.signed_file(user_id, source_id, expires, kid, sig);
$$;
CREATE FUNCTION neotoma_router.signed_file(user_id uuid, source_id uuid, expires bigint, kid uuid, sig text)
RETURNS TABLE (mime_type text, original_filename text, content bytea)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM neotoma_router.signed_file_on(neotoma_router.partition_of($1), $1, $2, $3, $4, $5) $$;

-- Only the gateway's kind of role (it names users) calls through the
-- router, and only through call and call_everywhere.
REVOKE ALL ON SCHEMA neotoma_router FROM PUBLIC;
GRANT USAGE ON SCHEMA neotoma_router TO neotoma_service;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA neotoma_router FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma_router.partition_of(uuid),
  neotoma_router.call(uuid, jsonb, text, text),
  neotoma_router.call_everywhere(uuid, jsonb, text, text),
  neotoma_router.maintain_embedding_lists(integer), neotoma_router.partitions_status(),
  neotoma_router.verify(), neotoma_router.file_content(uuid, uuid),
  neotoma_router.signed_file(uuid, uuid, bigint, uuid, text) TO neotoma_service;
