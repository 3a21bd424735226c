-- neotoma 0.2.0 -> 0.3.0: indexes that keep retrieve_entities pages flat
-- as data grows; neotoma._micros inlinable; and the action functions are declared statically
-- (extension/sql/actions.sql, generated from the catalog and checked in)
-- instead of by a loop at install time; the loop's function goes, and every
-- action function is defined again as actions.sql defines it (same
-- signature and behaviour, the body as that file writes it).
\echo Use "ALTER EXTENSION neotoma UPDATE TO '0.3.0'" to load this file. \quit

DROP FUNCTION neotoma._install_action_functions();

-- (An interval's epoch, not the timestamp's: extract from a timestamptz is
-- only STABLE, and a body more volatile than its function is not inlined.)
CREATE OR REPLACE FUNCTION neotoma._micros(ts timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (extract(epoch FROM ts - '1970-01-01 00:00:00+00'::timestamptz) * 1000000)::bigint $$;

-- retrieve_entities, most recently observed first: its pages in index
-- order, of one type or of all; its total of current entities from an index.
CREATE INDEX entity_snapshots_recent ON neotoma.entity_snapshots
  (user_id, entity_type, last_observation_at DESC NULLS LAST, entity_id);
CREATE INDEX entity_snapshots_recent_any ON neotoma.entity_snapshots
  (user_id, last_observation_at DESC NULLS LAST, entity_id);
CREATE INDEX entities_current ON neotoma.entities (user_id, entity_type) WHERE merged_into IS NULL;

CREATE OR REPLACE FUNCTION neotoma.get_version(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_version', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_version(jsonb) IS
  'Report the versions of the Neotoma extension, its action catalog, the MCP contract and Postgres. Use it to check that the memory is reachable and which features it has. Returns {extension_version, catalog_version, api_version, server_version, postgres_version}.';

CREATE OR REPLACE FUNCTION neotoma.get_current_time(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_current_time', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_current_time(jsonb) IS
  'Return the memory''s clock (the database''s), in UTC. Use it to timestamp what you store (`provenance.extracted_at`) or to ask about ''today'' consistently with stored data. Returns {now, unix_ms, timezone}.';

CREATE OR REPLACE FUNCTION neotoma.store(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('store', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.store(jsonb) IS
  'Store what you learned. Structured: `entities`, an array of objects each with an `entity_type` (call list_entity_types first to pick it) and ALL the fields of the source data; fields the schema lacks are kept in raw_fragments (`unknown_fields_count`). Unstructured: `file_content` (base64) or `file_path` with `mime_type`, interpreted by the server (do not extract fields yourself). Content is hashed: storing the same content again returns the same source_id with `deduplicated: true` and creates nothing. The same real-world thing stored twice (same identity fields, e.g. an invoice number and vendor, a person''s e-mail) lands on one entity. Returns {source_id, content_hash, deduplicated, interpretation, entities:[{entity_id, entity_type, observation_id}], unknown_fields_count}.';

CREATE OR REPLACE FUNCTION neotoma.ingest(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('ingest', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.ingest(jsonb) IS
  'Legacy name of neotoma.store: Store what you learned. Structured: `entities`, an array of objects each with an `entity_type` (call list_entity_types first to pick it) and ALL the fields of the source data; fields the schema lacks are kept in raw_fragments (`unknown_fields_count`). Unstructured: `file_content` (base64) or `file_path` with `mime_type`, interpreted by the server (do not extract fields yourself). Content is hashed: storing the same content again returns the same source_id with `deduplicated: true` and creates nothing. The same real-world thing stored twice (same identity fields, e.g. an invoice number and vendor, a person''s e-mail) lands on one entity. Returns {source_id, content_hash, deduplicated, interpretation, entities:[{entity_id, entity_type, observation_id}], unknown_fields_count}.';

CREATE OR REPLACE FUNCTION neotoma.ingest_structured(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('ingest_structured', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.ingest_structured(jsonb) IS
  'Legacy name of neotoma.store: Store what you learned. Structured: `entities`, an array of objects each with an `entity_type` (call list_entity_types first to pick it) and ALL the fields of the source data; fields the schema lacks are kept in raw_fragments (`unknown_fields_count`). Unstructured: `file_content` (base64) or `file_path` with `mime_type`, interpreted by the server (do not extract fields yourself). Content is hashed: storing the same content again returns the same source_id with `deduplicated: true` and creates nothing. The same real-world thing stored twice (same identity fields, e.g. an invoice number and vendor, a person''s e-mail) lands on one entity. Returns {source_id, content_hash, deduplicated, interpretation, entities:[{entity_id, entity_type, observation_id}], unknown_fields_count}.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_entity_snapshot(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_entity_snapshot', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_entity_snapshot(jsonb) IS
  'Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was at that time. A merged entity redirects to the entity it was merged into (`redirected_from`).';

CREATE OR REPLACE FUNCTION neotoma.get_entity_snapshot(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_entity_snapshot', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_entity_snapshot(jsonb) IS
  'Legacy name of neotoma.retrieve_entity_snapshot: Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was at that time. A merged entity redirects to the entity it was merged into (`redirected_from`).';

CREATE OR REPLACE FUNCTION neotoma.list_observations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_observations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_observations(jsonb) IS
  'List the observations (what each source said) about one entity, newest first, with their fields, source, priority and specificity. Use it to see how a snapshot was built or what changed. Paginated with limit/offset; returns {observations, total, limit, offset}.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_field_provenance(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_field_provenance', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_field_provenance(jsonb) IS
  'Explain one field of an entity''s snapshot: its value, the observation that supplied it (priority, specificity, time), the source material it came from and the interpretation run, if any. Use it to answer ''where does this come from?''.';

CREATE OR REPLACE FUNCTION neotoma.get_field_provenance(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_field_provenance', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_field_provenance(jsonb) IS
  'Legacy name of neotoma.retrieve_field_provenance: Explain one field of an entity''s snapshot: its value, the observation that supplied it (priority, specificity, time), the source material it came from and the interpretation run, if any. Use it to answer ''where does this come from?''.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_entities(jsonb) IS
  'List entities, optionally of one `entity_type`, most recently observed first, with their snapshots (include_snapshots, default true). Merged entities are left out unless include_merged. Paginated with limit (max 1000) and offset; returns {entities:[{id, entity_type, canonical_name, snapshot, observation_count, last_observation_at}], total, excluded_merged}.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_entity_by_identifier(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_entity_by_identifier', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_entity_by_identifier(jsonb) IS
  'Find entities by something that identifies them: a name, e-mail, phone number, web site, invoice number… The identifier is normalised (case, spaces, phone and URL forms) and matched against the identity fields of every entity, optionally of one entity_type; when nothing matches exactly, partial matches are returned (match_type tells which).';

CREATE OR REPLACE FUNCTION neotoma.get_entity_by_identifier(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_entity_by_identifier', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_entity_by_identifier(jsonb) IS
  'Legacy name of neotoma.retrieve_entity_by_identifier: Find entities by something that identifies them: a name, e-mail, phone number, web site, invoice number… The identifier is normalised (case, spaces, phone and URL forms) and matched against the identity fields of every entity, optionally of one entity_type; when nothing matches exactly, partial matches are returned (match_type tells which).';

CREATE OR REPLACE FUNCTION neotoma.list_entity_types(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_entity_types', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_entity_types(jsonb) IS
  'List the entity types you can store, with their fields (type, required), identity fields and schema version. Call it before `store` to choose the entity_type. With `keyword`, types are ranked by matches in their names, descriptions and field names (e.g. ''bill'' finds invoice), falling back to fuzzy similarity when nothing matches.';

CREATE OR REPLACE FUNCTION neotoma.correct(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('correct', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.correct(jsonb) IS
  'Fix one field of an entity: records a correction observation (priority 1000) that wins over every other observation immediately and stays the truth until corrected again; nothing is deleted. Give entity_id, its entity_type, the schema field and the right value (null clears it). Returns the correction''s observation_id.';

CREATE OR REPLACE FUNCTION neotoma.create_relationship(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('create_relationship', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.create_relationship(jsonb) IS
  'Link two entities with a typed, directed relationship: PART_OF, DEPENDS_ON, SUPERSEDES, CORRECTS, SETTLES (none of these may form a cycle: CYCLE_DETECTED with the path), REFERS_TO or DUPLICATE_OF. Optional metadata is recorded as an observation with provenance. Same type and entities → same relationship id; asserting it again is idempotent.';

CREATE OR REPLACE FUNCTION neotoma.list_relationships(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_relationships', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_relationships(jsonb) IS
  'List an entity''s relationships (direction inbound, outbound or both; optionally one relationship_type), newest first, paginated. Returns {relationships:[{id, relationship_type, source_entity_id, target_entity_id, metadata, created_at}], total}.';

CREATE OR REPLACE FUNCTION neotoma.get_relationship_snapshot(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_relationship_snapshot', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_relationship_snapshot(jsonb) IS
  'Get one relationship (by type, source and target entity) with its metadata reduced from every assertion of it, provenance per metadata field, and the observations themselves.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_related_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_related_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_related_entities(jsonb) IS
  'Walk the relationship graph from an entity up to max_hops (default 1, at most 5) in a direction, optionally only through some relationship_types. Returns the entities reached (with snapshots unless include_entities is false) and the relationships walked, each once, in a stable order.';

CREATE OR REPLACE FUNCTION neotoma.get_related_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_related_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_related_entities(jsonb) IS
  'Legacy name of neotoma.retrieve_related_entities: Walk the relationship graph from an entity up to max_hops (default 1, at most 5) in a direction, optionally only through some relationship_types. Returns the entities reached (with snapshots unless include_entities is false) and the relationships walked, each once, in a stable order.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_graph_neighborhood(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_graph_neighborhood', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_graph_neighborhood(jsonb) IS
  'Everything around one node (an entity, or a source with node_type ''source''): its snapshot or source material, its relationships and related entities, the sources it came from, its timeline events and, on request, its observations. Use it to get full context in one call.';

CREATE OR REPLACE FUNCTION neotoma.get_graph_neighborhood(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_graph_neighborhood', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_graph_neighborhood(jsonb) IS
  'Legacy name of neotoma.retrieve_graph_neighborhood: Everything around one node (an entity, or a source with node_type ''source''): its snapshot or source material, its relationships and related entities, the sources it came from, its timeline events and, on request, its observations. Use it to get full context in one call.';

CREATE OR REPLACE FUNCTION neotoma.list_timeline_events(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_timeline_events', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_timeline_events(jsonb) IS
  'List dated events derived from entities'' date fields (e.g. InvoiceIssued, InvoiceDue, TaskDue, TransactionDate), newest first, filtered by event_type, a date range (after_date inclusive, before_date exclusive), source_id or entity_id, paginated.';

CREATE OR REPLACE FUNCTION neotoma.merge_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('merge_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.merge_entities(jsonb) IS
  'Merge a duplicate entity (from_entity_id) into another of the same type (to_entity_id): its observations, relationships and events count for the target from now on, the target''s snapshot is recomputed, and the duplicate is hidden (retrieving it redirects to the target). Nothing is deleted; the merge is logged with its reason. Merging an entity twice is ENTITY_ALREADY_MERGED.';

CREATE OR REPLACE FUNCTION neotoma.analyze_schema_candidates(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('analyze_schema_candidates', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.analyze_schema_candidates(jsonb) IS
  'Look at the fields kept in raw_fragments (stored data the schema lacks) and recommend which should become schema fields: per field its frequency, distinct sources, dominant type and type consistency, format consistency, up to 10 sample values and a confidence. Filtered by min_frequency (default 5) and min_confidence (default 0.8); recommendations are kept as pending (get_schema_recommendations).';

CREATE OR REPLACE FUNCTION neotoma.get_schema_recommendations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_schema_recommendations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_schema_recommendations(jsonb) IS
  'List the stored schema recommendations for an entity type: pending ones from analyze_schema_candidates, and those applied automatically (auto_applied) with the evidence they rest on. Filter by source and status.';

CREATE OR REPLACE FUNCTION neotoma.update_schema_incremental(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('update_schema_incremental', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.update_schema_incremental(jsonb) IS
  'Add fields to an entity type''s schema as a new version, active at once by default, so the next stores keep those fields in observations (and snapshots) instead of raw_fragments. user_specific makes a variant for this user only. migrate_existing turns the raw_fragments already stored for those fields into observations (provenance kept) and updates the snapshots.';

CREATE OR REPLACE FUNCTION neotoma.register_schema(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('register_schema', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.register_schema(jsonb) IS
  'Define a new entity type, or a new version of one: its fields (type, required), identity fields, temporal fields and a merge policy per field (last_write, highest_priority, most_specific, merge_array; tie breaker observed_at or source_priority). A new type is usable by store at once; a new version of an existing type becomes active with activate=true (snapshots are recomputed under the new policies).';

CREATE OR REPLACE FUNCTION neotoma.reinterpret(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('reinterpret', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.reinterpret(jsonb) IS
  'Interpret a stored source again with a new interpretation_config (provider, model_id, temperature, prompt_hash, code_version, feature_flags; entity_type for CSV). It is a new interpretation run: the observations of earlier runs stay, and the reducer decides what snapshots show. The same source and config give the same run and observations.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_file_url(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_file_url', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_file_url(jsonb) IS
  'Get a signed, expiring URL (expires_in seconds, default 3600) to download a stored file (by its storage_path or source id) from the MCP server''s HTTP endpoint. Returns {signed_url, expires_at}.';

CREATE OR REPLACE FUNCTION neotoma.get_file_url(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_file_url', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_file_url(jsonb) IS
  'Legacy name of neotoma.retrieve_file_url: Get a signed, expiring URL (expires_in seconds, default 3600) to download a stored file (by its storage_path or source id) from the MCP server''s HTTP endpoint. Returns {signed_url, expires_at}.';

CREATE OR REPLACE FUNCTION neotoma.record_interpretation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('record_interpretation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.record_interpretation(jsonb) IS
  'Record what an external model read from a file (entities, or an error) for a pending interpretation run. Used by the MCP server''s model interpreter, not an agent tool.';

CREATE OR REPLACE FUNCTION neotoma.submit_payload(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('submit_payload', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.submit_payload(jsonb) IS
  'Earlier name: stores `body` as an entity of the capability''s type (neotoma:store_invoice:v1 → invoice) with `provenance`. Use store.';

CREATE OR REPLACE FUNCTION neotoma.upload_file(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('upload_file', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.upload_file(jsonb) IS
  'Earlier name: stores a local file (file_path) like store does; with `properties` the file is not interpreted. Use store.';

CREATE OR REPLACE FUNCTION neotoma.list_resources(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_resources', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_resources(jsonb) IS
  'The neotoma:// resources the user''s data offers: the source collection, one collection per entity type, one timeline per year and month with events. Served as MCP resources/list, not as a tool.';

CREATE OR REPLACE FUNCTION neotoma.read_resource(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('read_resource', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.read_resource(jsonb) IS
  'The body of one neotoma:// resource (entity collection, entity, its observations or relationships, a year or month of timeline, a source, the sources). Served as MCP resources/read, not as a tool.';
