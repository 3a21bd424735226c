-- neotoma 0.5.0 -> 0.6.0: get_technical_metrics (seed 001 §3.28, for
-- operators; the gateway runs its Prometheus query) and
-- neotoma.graph_orphan_count(), which the gateway exports as
-- neotoma_graph_orphan_nodes_total. Plaid (seed 001 §3.22–3.25): the
-- table neotoma.connectors (secrets readable by no user), the plaid_*
-- actions and the gateway's record_plaid_item / record_plaid_sync; the
-- seeded entity type `account`. Provider imports (§3.26–3.27):
-- list_provider_catalog, connect_provider, list_connectors,
-- sync_provider_imports, the gateway's record_connector and
-- record_provider_sync, and the table neotoma.sync_runs. Deleting and
-- restoring entities (delete_entity, restore_entity): observations of kind
-- deletion / restoration from `lifecycle` sources, which the observation
-- trigger turns into entities.deleted_at / deleted_reason; deleted entities
-- are counted in neither total.
\echo Use "ALTER EXTENSION neotoma UPDATE TO '0.6.0'" to load this file. \quit

-- Deleted entities (first: the functions below read the columns).
ALTER TABLE neotoma.entities ADD COLUMN deleted_at timestamptz, ADD COLUMN deleted_reason text;
CREATE INDEX entities_deleted ON neotoma.entities (user_id, id) WHERE deleted_at IS NOT NULL;

CREATE OR REPLACE FUNCTION neotoma.get_technical_metrics(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_technical_metrics', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_technical_metrics(jsonb) IS
  'Operational metrics of this server from its Prometheus, for operators only: neotoma_record_upload_duration_ms and neotoma_search_duration_ms (histograms, label action), neotoma_record_upload_total (labels action, status), neotoma_extraction_errors_total (label error_code), neotoma_mcp_error_rate, neotoma_graph_orphan_nodes_total, neotoma_db_connection_pool_usage. Aggregation avg (default), p50, p95, p99, sum, count, max or min over time_range (default the last hour) in steps of `step` (e.g. 1m, 1h). Returns {metric_name, values: [{timestamp, value}], aggregation, time_range, metadata: {unit, description, query}}.';

REVOKE EXECUTE ON FUNCTION neotoma.get_technical_metrics(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.get_technical_metrics(jsonb) TO neotoma_user;
-- Entities (not merged away, not deleted) that no live relationship links
-- to another such entity, across every user: the gateway exports the count
-- as neotoma_graph_orphan_nodes_total. A number only, for the gateway's role.
CREATE FUNCTION neotoma.graph_orphan_count() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  SELECT count(*) FROM neotoma.entities e
  WHERE e.merged_into IS NULL AND e.deleted_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM neotoma.relationships r
                    JOIN neotoma.entities o ON o.user_id = r.user_id AND o.id = r.target_entity_id
                    WHERE r.user_id = e.user_id AND r.source_entity_id = e.id AND r.merged_into IS NULL
                      AND o.deleted_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM neotoma.relationships r
                    JOIN neotoma.entities o ON o.user_id = r.user_id AND o.id = r.source_entity_id
                    WHERE r.user_id = e.user_id AND r.target_entity_id = e.id AND r.merged_into IS NULL
                      AND o.deleted_at IS NULL)
$$;
REVOKE EXECUTE ON FUNCTION neotoma.graph_orphan_count() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.graph_orphan_count() TO neotoma_service;

-- Connections to outside providers (seed 001 §3.22–3.27): a Plaid item, an
-- e-mail account. What a sync needs, and its secret (a Plaid access token,
-- a password) only as ciphertext: the gateway encrypts it (AES-256-GCM,
-- under a key the database never sees) before it gets here. No user may
-- read `secret`, not even its own: the extension hands it to the gateway's
-- role (neotoma_service) inside the work of a sync, and to nobody else.
CREATE TABLE neotoma.connectors (
  user_id              uuid        NOT NULL,
  id                   uuid        NOT NULL,
  provider             text        NOT NULL,
  -- The provider's id of the connection (Plaid's item_id; user@host/mailbox).
  external_id          text        NOT NULL,
  -- What is not secret: institution, products, accounts; host, port, mailbox.
  settings             jsonb       NOT NULL DEFAULT '{}',
  secret               bytea,
  -- Where the next incremental sync starts (Plaid's cursor; UIDVALIDITY:UID).
  cursor               text,
  status               text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'error', 'revoked')),
  last_error           text,
  last_successful_sync timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  UNIQUE (user_id, provider, external_id)
);
COMMENT ON TABLE neotoma.connectors IS
  'Connections to outside providers (Plaid items, e-mail accounts); secrets are encrypted by the gateway and readable by no user.';
ALTER TABLE neotoma.connectors ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.connectors FORCE ROW LEVEL SECURITY;
CREATE POLICY connectors_own_rows ON neotoma.connectors USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.connectors FROM PUBLIC;
GRANT SELECT (user_id, id, provider, external_id, settings, cursor, status, last_error,
              last_successful_sync, created_at, updated_at) ON neotoma.connectors TO neotoma_user;
GRANT UPDATE (cursor, status, last_error, last_successful_sync, updated_at) ON neotoma.connectors TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.plaid_create_link_token(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('plaid_create_link_token', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.plaid_create_link_token(jsonb) IS
  'Start connecting a bank account through Plaid: returns a short-lived {link_token, expiration} for Plaid Link (products default ["transactions"]; pass access_token for Link''s update mode). Then call plaid_exchange_public_token with the public token Link gives. PLAID_NOT_CONFIGURED when the server has no Plaid credentials.';

CREATE OR REPLACE FUNCTION neotoma.plaid_exchange_public_token(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('plaid_exchange_public_token', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.plaid_exchange_public_token(jsonb) IS
  'Finish connecting a bank through Plaid: exchanges Link''s public_token for an access token (stored encrypted, never returned), records the item, its institution and accounts (as entities), and with trigger_initial_sync also syncs its transactions. Returns {plaid_item: {id, item_id, institution_name, accounts}, sync_summary?}.';

CREATE OR REPLACE FUNCTION neotoma.plaid_sync(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('plaid_sync', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.plaid_sync(jsonb) IS
  'Sync the transactions of a connected Plaid item (plaid_item_id or item_id), or of every item (sync_all), from where the last sync stopped (force_full_sync reads everything again). New transactions become `transaction` entities (identified by Plaid''s transaction_id, so nothing is duplicated), changes add observations, removed ones are deleted (their history stays). Returns {syncs: [{plaid_item_id, item_id, status, summary: {added, modified, removed}, next_cursor, error?}], total_synced_items}.';

CREATE OR REPLACE FUNCTION neotoma.plaid_list_items(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('plaid_list_items', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.plaid_list_items(jsonb) IS
  'List the connected Plaid items (banks), without their access tokens: {items: [{id, item_id, institution_id, institution_name, products, last_successful_sync, status}]}.';

CREATE OR REPLACE FUNCTION neotoma.record_plaid_item(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('record_plaid_item', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.record_plaid_item(jsonb) IS
  'Used by the MCP gateway: records an item it linked with Plaid.';

CREATE OR REPLACE FUNCTION neotoma.record_plaid_sync(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('record_plaid_sync', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.record_plaid_sync(jsonb) IS
  'Used by the MCP gateway: records what a sync of an item read from Plaid.';

REVOKE EXECUTE ON FUNCTION neotoma.plaid_create_link_token(jsonb), neotoma.plaid_exchange_public_token(jsonb), neotoma.plaid_sync(jsonb), neotoma.plaid_list_items(jsonb), neotoma.record_plaid_item(jsonb), neotoma.record_plaid_sync(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.plaid_create_link_token(jsonb), neotoma.plaid_exchange_public_token(jsonb), neotoma.plaid_sync(jsonb), neotoma.plaid_list_items(jsonb), neotoma.record_plaid_item(jsonb), neotoma.record_plaid_sync(jsonb) TO neotoma_user;

-- The seeded type `account` (bank and card accounts, from Plaid).
INSERT INTO neotoma.entity_schemas (user_id, id, entity_type, schema_version, description, definition, active)
SELECT neotoma.global_user_id(), (s->>'id')::uuid, s->>'entity_type', s->>'schema_version',
       s->>'description', s->'definition', true
FROM jsonb_array_elements(neotoma._builtin_schemas()) AS s
WHERE s->>'entity_type' = 'account'
  AND NOT EXISTS (SELECT FROM neotoma.entity_schemas x
                  WHERE x.user_id = neotoma.global_user_id() AND x.entity_type = 'account');

-- Sync runs of provider imports (sync_provider_imports): what each read.
CREATE TABLE neotoma.sync_runs (
  user_id      uuid        NOT NULL,
  id           uuid        NOT NULL,
  provider     text        NOT NULL,
  status       text        NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  stats        jsonb       NOT NULL DEFAULT '{}',
  error        text,
  started_at   timestamptz NOT NULL,
  completed_at timestamptz,
  PRIMARY KEY (user_id, id)
);
ALTER TABLE neotoma.sync_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE neotoma.sync_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY sync_runs_own_rows ON neotoma.sync_runs USING (user_id = (SELECT neotoma.current_user_id()))
  WITH CHECK (user_id = (SELECT neotoma.current_user_id()));
REVOKE ALL ON neotoma.sync_runs FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE ON neotoma.sync_runs TO neotoma_user;

CREATE OR REPLACE FUNCTION neotoma.list_provider_catalog(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_provider_catalog', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_provider_catalog(jsonb) IS
  'List the outside sources this memory can import from, with their status (available, beta, coming_soon), capabilities and how they authenticate: plaid (banks), imap (any e-mail account), gmail (IMAP with an app password), and what is coming. Returns {providers: [{id, name, description, capabilities, auth_type, oauth_scopes?, popularity_score, status}]}.';

CREATE OR REPLACE FUNCTION neotoma.connect_provider(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('connect_provider', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.connect_provider(jsonb) IS
  'Connect an e-mail account to import its messages: provider imap with settings {host, port?, tls? (default true), username, password, mailbox? (default INBOX)}, or gmail with {username, password: an app password}. The login is checked first; the password is stored encrypted and never returned. Returns {connector_id, provider, external_id, settings, status}. Then call sync_provider_imports.';

CREATE OR REPLACE FUNCTION neotoma.list_connectors(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_connectors', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_connectors(jsonb) IS
  'List your connectors (e-mail accounts, Plaid items), optionally of one provider, without secrets: {connectors: [{connector_id, provider, external_id, settings, status, last_error, last_successful_sync, created_at}]}.';

CREATE OR REPLACE FUNCTION neotoma.sync_provider_imports(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('sync_provider_imports', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.sync_provider_imports(jsonb) IS
  'Import what is new from a provider: for imap/gmail every message since the last sync (sync_type initial: from the first) becomes a source read by the e-mail interpreter (a note and its contacts), at most limit × max_pages messages per call (default 50 × 10; the rest next time); for plaid, plaid_sync of every item. One connector with connector_id, else all of the provider''s. Returns {sync_run_id, provider, status, stats: {records_added, records_updated, errors}, started_at, completed_at}.';

CREATE OR REPLACE FUNCTION neotoma.record_connector(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('record_connector', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.record_connector(jsonb) IS
  'Used by the MCP gateway: records a connector whose login it checked.';

CREATE OR REPLACE FUNCTION neotoma.record_provider_sync(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('record_provider_sync', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.record_provider_sync(jsonb) IS
  'Used by the MCP gateway: records what a sync read from the provider.';

REVOKE EXECUTE ON FUNCTION neotoma.list_provider_catalog(jsonb), neotoma.connect_provider(jsonb), neotoma.list_connectors(jsonb), neotoma.sync_provider_imports(jsonb), neotoma.record_connector(jsonb), neotoma.record_provider_sync(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.list_provider_catalog(jsonb), neotoma.connect_provider(jsonb), neotoma.list_connectors(jsonb), neotoma.sync_provider_imports(jsonb), neotoma.record_connector(jsonb), neotoma.record_provider_sync(jsonb) TO neotoma_user;

-- Deletion and restoration.
ALTER TABLE neotoma.sources DROP CONSTRAINT sources_source_type_check,
  ADD CONSTRAINT sources_source_type_check
  CHECK (source_type IN ('structured', 'file', 'correction', 'relationship', 'migration', 'lifecycle'));
ALTER TABLE neotoma.observations DROP CONSTRAINT observations_kind_check,
  ADD CONSTRAINT observations_kind_check
  CHECK (kind IN ('store', 'correction', 'interpretation', 'migration', 'deletion', 'restoration'));
CREATE OR REPLACE FUNCTION neotoma._observations_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
BEGIN
  PERFORM neotoma._apply_observations((
    SELECT jsonb_agg(jsonb_build_object(
             'user_id', n.user_id, 'id', n.id, 'entity_id', n.entity_id, 'entity_type', n.entity_type,
             'source_id', n.source_id, 'observed_at', neotoma._micros(n.observed_at),
             'source_priority', n.source_priority, 'specificity_score', n.specificity_score,
             'fields', n.fields)
           ORDER BY n.user_id, n.entity_id, n.id)::text
    FROM new_observations n WHERE n.kind NOT IN ('deletion', 'restoration')));
  -- Deleted or not: what the latest deletion or restoration of each entity says.
  UPDATE neotoma.entities e
  SET deleted_at = CASE WHEN l.kind = 'deletion' THEN l.observed_at END,
      deleted_reason = CASE WHEN l.kind = 'deletion' THEN l.fields->>'reason' END
  FROM (SELECT DISTINCT ON (o.user_id, o.entity_id) o.user_id, o.entity_id, o.kind, o.observed_at, o.fields
        FROM neotoma.observations o
        WHERE (o.user_id, o.entity_id) IN (SELECT n.user_id, n.entity_id FROM new_observations n
                                           WHERE n.kind IN ('deletion', 'restoration'))
          AND o.kind IN ('deletion', 'restoration')
        ORDER BY o.user_id, o.entity_id, o.observed_at DESC, o.id DESC) l
  WHERE e.user_id = l.user_id AND e.id = l.entity_id;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION neotoma._count_entities() RETURNS trigger
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
      INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
      SELECT user_id, entity_type, count(*) FILTER (WHERE merged_into IS NULL AND deleted_at IS NULL),
             count(*) FILTER (WHERE deleted_at IS NULL)
      FROM new_entities GROUP BY user_id, entity_type
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  ELSIF TG_OP = 'UPDATE' THEN
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
      SELECT n.user_id, n.entity_type,
             sum((n.merged_into IS NULL AND n.deleted_at IS NULL)::int - (o.merged_into IS NULL AND o.deleted_at IS NULL)::int),
             sum((n.deleted_at IS NULL)::int - (o.deleted_at IS NULL)::int)
      FROM old_entities o JOIN new_entities n ON n.user_id = o.user_id AND n.id = o.id
      WHERE (n.merged_into IS NULL) <> (o.merged_into IS NULL) OR (n.deleted_at IS NULL) <> (o.deleted_at IS NULL)
      GROUP BY n.user_id, n.entity_type
      RETURNING user_id, entity_type)
    SELECT array_agg(user_id), array_agg(entity_type) INTO users, types FROM d;
  ELSE
    WITH d AS (
      INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
      SELECT user_id, entity_type, -count(*) FILTER (WHERE merged_into IS NULL AND deleted_at IS NULL),
             -count(*) FILTER (WHERE deleted_at IS NULL)
      FROM old_entities GROUP BY user_id, entity_type
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
      RETURNING c.user_id, c.entity_type, c.current, c.total)
    INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
    SELECT user_id, entity_type, sum(current), sum(total) FROM folded GROUP BY user_id, entity_type;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION neotoma._recount_entities() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, neotoma, pg_temp AS $$
  WITH scope AS (
    SELECT (SELECT neotoma.current_user_id()) AS user_id,
           (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user) AS everyone),
  cleared AS (
    DELETE FROM neotoma.entity_counts c USING scope s
    WHERE c.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone))
  INSERT INTO neotoma.entity_counts (user_id, entity_type, current, total)
  SELECT e.user_id, e.entity_type, count(*) FILTER (WHERE e.merged_into IS NULL AND e.deleted_at IS NULL),
         count(*) FILTER (WHERE e.deleted_at IS NULL)
  FROM neotoma.entities e, scope s
  WHERE e.user_id = s.user_id OR (s.user_id IS NULL AND s.everyone)
  GROUP BY e.user_id, e.entity_type;
$$;


CREATE OR REPLACE FUNCTION neotoma.delete_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('delete_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.delete_entity(jsonb) IS
  'Delete an entity: it disappears from retrieve_entities, lookups and snapshots (include_deleted shows it, with deleted_at and the reason) until restore_entity brings it back exactly as it was. Nothing is erased: the deletion is an observation of its own (list_observations shows it). Deleting a deleted entity is an error. Returns {entity_id, entity_type, deleted, deleted_at, reason, observation_id}.';

CREATE OR REPLACE FUNCTION neotoma.restore_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('restore_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.restore_entity(jsonb) IS
  'Bring back a deleted entity exactly as it was before its deletion (recorded as a restoration observation). Restoring an entity that is not deleted is an error. Returns {entity_id, entity_type, deleted: false, deleted_at: null, reason, observation_id}.';

REVOKE EXECUTE ON FUNCTION neotoma.delete_entity(jsonb), neotoma.restore_entity(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION neotoma.delete_entity(jsonb), neotoma.restore_entity(jsonb) TO neotoma_user;

-- The views leave deleted entities out (entity_overview shows them, with deleted_at).
CREATE OR REPLACE VIEW neotoma.entity_overview WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       coalesce(s.snapshot, '{}') AS snapshot,
       coalesce(s.observation_count, 0) AS observation_count,
       s.last_observation_at, s.schema_version,
       e.merged_into, e.merged_at, e.created_at, e.deleted_at, e.deleted_reason
FROM neotoma.entities e
LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id;
COMMENT ON VIEW neotoma.entity_overview IS
  'One row per entity: type, name, current snapshot, observation count; merged_into is set for merged entities, deleted_at and deleted_reason for deleted ones.';
CREATE OR REPLACE VIEW neotoma.entity_fields WITH (security_invoker = true) AS
SELECT e.user_id, e.id AS entity_id, e.entity_type, e.canonical_name,
       f.key AS field, f.value, f.value #>> '{}' AS value_text,
       (p ->> 'observation_id')::uuid AS observation_id,
       (p ->> 'source_id')::uuid AS source_id,
       (p ->> 'observed_at')::timestamptz AS observed_at,
       (p ->> 'source_priority')::integer AS source_priority
FROM neotoma.entities e
JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
CROSS JOIN LATERAL jsonb_each(s.snapshot) AS f
CROSS JOIN LATERAL (SELECT s.field_provenance -> f.key) AS fp(p)
WHERE e.merged_into IS NULL AND e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.entity_fields IS
  'One row per field of each current entity: value (jsonb and text) and its provenance (observation, source, time, priority).';
CREATE OR REPLACE VIEW neotoma.relationship_overview WITH (security_invoker = true) AS
SELECT r.user_id, r.id AS relationship_id, r.relationship_type,
       r.source_entity_id, se.entity_type AS source_entity_type, se.canonical_name AS source_name,
       r.target_entity_id, te.entity_type AS target_entity_type, te.canonical_name AS target_name,
       r.snapshot AS metadata, r.observation_count, r.last_observation_at, r.created_at
FROM neotoma.relationships r
JOIN neotoma.entities se ON se.user_id = r.user_id AND se.id = r.source_entity_id
JOIN neotoma.entities te ON te.user_id = r.user_id AND te.id = r.target_entity_id
WHERE r.merged_into IS NULL AND se.deleted_at IS NULL AND te.deleted_at IS NULL;
COMMENT ON VIEW neotoma.relationship_overview IS
  'Current relationships (not re-keyed by a merge) with the type and name of both entities and the reduced metadata.';
CREATE OR REPLACE VIEW neotoma.timeline WITH (security_invoker = true) AS
SELECT t.user_id, t.id AS event_id, t.event_timestamp, t.event_type,
       t.entity_id, e.entity_type, e.canonical_name,
       t.source_field, t.source_id, t.observation_id, t.properties
FROM neotoma.timeline_events t
JOIN neotoma.entities e ON e.user_id = t.user_id AND e.id = t.entity_id
WHERE e.deleted_at IS NULL;
COMMENT ON VIEW neotoma.timeline IS
  'Timeline events (derived from date fields) with the type and name of their entity.';

-- delete_record deletes the entity now (it cleared its properties).
COMMENT ON FUNCTION neotoma.delete_record(jsonb) IS
  'Deprecated (earlier specification): deletes a record (an entity) as delete_entity does; its history stays. Use delete_entity.';
