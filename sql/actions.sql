-- One SQL function per action of the catalog and per legacy alias:
--   neotoma.<action>(args jsonb DEFAULT '{}') RETURNS jsonb
-- Each hands the request's text to the Rust dispatcher (parsed there, so
-- that input serde cannot read is a VALIDATION_ERROR, not a crash) and
-- raises an error result as NT001 carrying the envelope, so the whole
-- action is one transaction.
--
-- Generated from the action catalog (core/src/catalog.rs): do not edit.
-- `NEOTOMA_BLESS=1 cargo test -p neotoma-core action_functions` rewrites
-- it; that test fails while this file and the catalog disagree.

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
  'Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was known at that time, `valid_at` for what was true in the world then (values stored with valid_from/valid_to). A merged entity redirects to the entity it was merged into (`redirected_from`). include_contradictions also answers the fields whose observations disagree, as list_contradictions does; include_annotations the notes attached to it (annotate).';

CREATE OR REPLACE FUNCTION neotoma.get_entity_snapshot(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_entity_snapshot', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_entity_snapshot(jsonb) IS
  'Legacy name of neotoma.retrieve_entity_snapshot: Get the current truth about one entity: its snapshot (field → value) computed by the reducer from all its observations, with provenance for every field (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot as it was known at that time, `valid_at` for what was true in the world then (values stored with valid_from/valid_to). A merged entity redirects to the entity it was merged into (`redirected_from`). include_contradictions also answers the fields whose observations disagree, as list_contradictions does; include_annotations the notes attached to it (annotate).';

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
  'List entities, optionally of one `entity_type`, most recently observed first, with their snapshots (include_snapshots, default true). Merged entities are left out unless include_merged. Paginated with limit (max 1000) and offset; returns {entities:[{id, entity_type, canonical_name, snapshot, observation_count, last_observation_at}], total, excluded_merged}. With `search` (free text) it finds entities by their names (typos forgiven), every snapshot value and the names of entities merged into them, best first (then by id), each with relevance_score and matched_fields; search_mode: lexical (words, stems, names with typos), semantic (by meaning: embeddings), hybrid (both, fused by rank) or auto (hybrid when embeddings exist, else lexical); search_method says which mode answered; include_observations also matches values since corrected or outranked and the words of the stored text files an entity was observed from.';

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
  'The entity types you can store, one line each (name, what it is for, the fields that identify it). `keyword` ranks them by name, fields and meaning (''payment'' finds transaction and invoice); `entity_type` gives one type in full (its fields, types, merge policies); `detail: true` gives every type in full.';

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

CREATE OR REPLACE FUNCTION neotoma.delete_relationship(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('delete_relationship', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.delete_relationship(jsonb) IS
  'Delete the relationship of relationship_type from source_entity_id to target_entity_id: it disappears from list_relationships, traversals, neighborhoods and store''s related_* (include_deleted shows it, with deleted_at and the reason) until restore_relationship brings it back exactly as it was. Nothing is erased: the deletion is an observation of the relationship. The entities stay. Deleting a deleted relationship is an error; an unknown one is NOT_FOUND. Returns {relationship_id, relationship_type, source_entity_id, target_entity_id, deleted, deleted_at, reason, observation_id}.';

CREATE OR REPLACE FUNCTION neotoma.restore_relationship(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('restore_relationship', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.restore_relationship(jsonb) IS
  'Bring back a deleted relationship exactly as it was (recorded as a restoration observation of it). Restoring a relationship that is not deleted is an error. Returns {relationship_id, relationship_type, source_entity_id, target_entity_id, deleted: false, deleted_at: null, reason, observation_id}.';

CREATE OR REPLACE FUNCTION neotoma.erase(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('erase', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.erase(jsonb) IS
  'Erase an entity (entity_id) or a source (source_id) for good, with confirm: true. An entity goes with its observations, relationships, timeline events, raw fragments and merges, and the sources only it came from (sources that also fed other entities lose their stored content and file bytes). A source goes with everything it gave; its entities are recomputed from what other sources say, and erased if nothing else does. Signed file URLs stop working. Unlike delete_entity this cannot be undone; an audit row of counts (no content) stays in neotoma.audit_trail. Returns {erased, erasure_id, erased_at, counts}.';

CREATE OR REPLACE FUNCTION neotoma.list_recent_changes(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_recent_changes', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_recent_changes(jsonb) IS
  'The change feed of this user''s memory: entities observed, corrected, deleted, restored or merged; relationships asserted, deleted or restored; sources created; schemas registered or updated; erasures. Oldest first, in an order that never skips a change: pass the answer''s next_cursor as `since` to read on (polling with it returns nothing until something changes). entity_type keeps entity changes of that type. Returns {changes: [{cursor, kind, operation, entity_id, entity_type, relationship_id, relationship_type, source_entity_id, target_entity_id, source_id, changed_at}], next_cursor, has_more}; MCP resource subscriptions are driven by this feed.';

CREATE OR REPLACE FUNCTION neotoma.list_potential_duplicates(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_potential_duplicates', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_potential_duplicates(jsonb) IS
  'Pairs of current entities of entity_type that may be the same thing, best first: names (the snapshot''s name or title) whose trigram similarity (as pg_trgm computes it) is at least threshold (default 0.6), or the same normalised identifier (e-mail, phone, …; score 1). Each pair once, with its evidence (which field matched how). Read-only: merge the ones that are duplicates with merge_entities. Returns {pairs: [{entity_id, other_entity_id, name, other_name, score, evidence: [{field, method, score, values}]}], entity_type, threshold, entities_compared, truncated}.';

CREATE OR REPLACE FUNCTION neotoma.split_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('split_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.split_entity(jsonb) IS
  'The inverse of merge_entities: move some observations of entity_id (by observation_ids, or every one from source_ids) to another entity of its type (to_entity_id) or to a new one. The observations themselves never change: copies with the same source, time and fields count for the target, the originals no longer count for entity_id; both snapshots are recomputed; relationships stay with entity_id. Logged in neotoma.audit_trail. Returns {split_id, from_entity_id, to_entity_id, created, observations_moved, split_at, reason}.';

CREATE OR REPLACE FUNCTION neotoma.search_subgraph(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('search_subgraph', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.search_subgraph(jsonb) IS
  'Search the memory and get a subgraph: the entities that match query (names with typos forgiven, entity types, names of entities merged into them, every snapshot value; each search_in_* turns one off), best first and paginated (page, per_page up to 100), each with its snapshot, its latest observations, relevance_score and matched_fields, and the current relationships among them. Returns {entities: [{entity_id, entity_type, canonical_name, snapshot, observation_count, observations, relevance_score, matched_fields}], relationships: [{id, relationship_type, source_entity_id, target_entity_id, snapshot}], total, page, per_page, search_method}.';

CREATE OR REPLACE FUNCTION neotoma.get_subgraph_by_ids(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_subgraph_by_ids', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_subgraph_by_ids(jsonb) IS
  'The entities named by entity_ids (1–100, in that order), each with its snapshot and latest observations, and the current relationships among them; ids that name no current entity are listed in missing. Returns {entities, relationships, missing}.';

CREATE OR REPLACE FUNCTION neotoma.bulk(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('bulk', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.bulk(jsonb) IS
  'Run several writes in one transaction, all or nothing: operations [{action, args, ref?}] (1–500), each action one of store, correct, create_relationship, delete_entity, restore_entity, delete_relationship, restore_relationship, merge_entities, with that action''s own args. An operation with ref: "alice" names the entity it yields (a store''s first entity; the entity corrected, deleted or restored; a merge''s target), and later operations write "$alice" wherever an entity id goes (entity_id, source_entity_id, target_entity_id, from_entity_id, to_entity_id): two entities and the relationship between them in one call. If one fails nothing is kept and the error names it (details.operation, from 1; operation_index, from 0). Returns {results:[{index, action, ref, entity_id, result}], operations}.';

CREATE OR REPLACE FUNCTION neotoma.create_relationships(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('create_relationships', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.create_relationships(jsonb) IS
  'Create several relationships at once (1–500), each as create_relationship takes it ({relationship_type, source_entity_id, target_entity_id, metadata?}), in one transaction: all or none (the error names the failing one: details.relationship, from 1). Returns {relationships:[…as created], count}.';

CREATE OR REPLACE FUNCTION neotoma.list_contradictions(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_contradictions', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_contradictions(jsonb) IS
  'The fields where observations of one entity disagree: two or more distinct values from two or more sources (merge_array fields are joined, not contradicted). For one entity_id, the entities of an entity_type, or all, a page of entities (limit 1–100, default 20; offset) in id order. Each contradiction: {entity_id, entity_type, field, values:[{value, observations:[{observation_id, source_id, observed_at, source_priority, specificity_score, correction}]}], chosen_value, chosen_observation_id, strategy, tie_breaker, reason, resolved}: the value the reducer chose (the snapshot''s) and why; resolved when a correction decided it (include_resolved: false leaves those out). Returns {contradictions, entities_checked, limit, offset, has_more}.';

CREATE OR REPLACE FUNCTION neotoma.annotate(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('annotate', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.annotate(jsonb) IS
  'Attach a note to an entity (entity_id) or to one of its observations (observation_id), beside the truth model: no snapshot, value or provenance changes. The same note on the same target is one annotation (annotating again changes nothing). Logged in neotoma.audit_trail; retrieve_entity_snapshot {include_annotations} answers them. Returns {annotation_id, entity_id, observation_id, note, created_at}.';

CREATE OR REPLACE FUNCTION neotoma.contest(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('contest', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.contest(jsonb) IS
  'Dispute one observation (observation_id) and say why (reason). The observation stays as it was; the contest is recorded and lowers its confidence rating one step of credibility (B2 becomes B3, down to 6), so fields merged by highest_confidence may choose another value and min_confidence filters may leave it out. The entity''s snapshot is recomputed at once. The same reason again changes nothing. Logged in neotoma.audit_trail. Returns {contest_id, observation_id, entity_id, reason, confidence_before, confidence, contests, already_contested, created_at}.';

CREATE OR REPLACE FUNCTION neotoma.reclassify(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('reclassify', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.reclassify(jsonb) IS
  'Move an entity (entity_id) to another type (new_entity_type, with an active schema) and say why (reason), its history kept: the entity of the new type is the one its current snapshot identifies under that type''s identity rules (found or made), and the old entity is merged into it, so every observation, relationship and event counts there and the old id redirects there. Later stores under either type reach it. Logged in neotoma.audit_trail as reclassify. Returns {entity_id, entity_type, previous_entity_id, previous_entity_type, joined_existing, observations_moved, relationships_moved, reason, reclassified_at}.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_field_history(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_field_history', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_field_history(jsonb) IS
  'One field of an entity over valid time (when it was true in the world): its values as intervals [valid_from, valid_to), earliest first, each with the observation and source it came from. Values stored with valid_from/valid_to succeed each other; a field stored without them holds always.';

CREATE OR REPLACE FUNCTION neotoma.list_workspaces(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('list_workspaces', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.list_workspaces(jsonb) IS
  'List the workspaces your memory is divided into (`default` first), with how many entities and sources each holds and which one actions without `workspace` use now (in_context; set_context chooses it). Reads take `workspace`: a name, "*" for all, or a list. Returns {workspaces:[{name, entities, entities_including_merged, sources, created_at, in_context}], context:{workspace, from}}.';

CREATE OR REPLACE FUNCTION neotoma.set_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('set_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.set_context(jsonb) IS
  'Choose the workspace every later action without `workspace` uses, by name (`workspace`, created if new) or by a project entity (`project_entity_id`: its workspace). It is kept in the memory, so it holds across requests, connections and gateways: for the token you came with (level token, the default with a token), or for you (level user, the default without one, e.g. over stdio). Returns {token, user, effective:{workspace, from}, has_token}.';

CREATE OR REPLACE FUNCTION neotoma.get_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_context(jsonb) IS
  'Show which workspace actions without `workspace` use, and why: the context of the token you came with, else yours, else `default`. Returns {token, user, effective:{workspace, from}, has_token}.';

CREATE OR REPLACE FUNCTION neotoma.clear_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('clear_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.clear_context(jsonb) IS
  'Forget a context set by set_context (level token or user; by default the one set_context would set), so actions without `workspace` fall back to the next: the user''s context, then `default`. Returns {token, user, effective, has_token, cleared}.';

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
  'Define a new entity type, or a new version of one: its fields (type, required), identity fields, temporal fields and a merge policy per field (last_write, highest_priority, most_specific, merge_array, highest_confidence; tie breaker observed_at or source_priority). A new type is usable by store at once; a new version of an existing type becomes active with activate=true (snapshots are recomputed under the new policies).';

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

CREATE OR REPLACE FUNCTION neotoma.get_product_analytics(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_product_analytics', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_product_analytics(jsonb) IS
  'Product metrics computed from the memory itself, across users, for operators only: activation (e.g. activation_first_upload_rate), retention (day_1_retention, week_1_retention, month_1_retention), usage (daily_active_users, weekly_active_users, avg_uploads_per_user_per_week), the signup → upload → extraction → entity → timeline funnel, and weekly cohorts, over time_range (default the last 30 days). Aggregates only. Returns {metric_type, metric_name, value (a number or [{date, value}]), time_range, metadata}.';

CREATE OR REPLACE FUNCTION neotoma.get_technical_metrics(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('get_technical_metrics', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.get_technical_metrics(jsonb) IS
  'Operational metrics of this server from its Prometheus, for operators only: neotoma_record_upload_duration_ms and neotoma_search_duration_ms (histograms, label action), neotoma_record_upload_total (labels action, status), neotoma_extraction_errors_total (label error_code), neotoma_mcp_error_rate, neotoma_graph_orphan_nodes_total, neotoma_db_connection_pool_usage. Aggregation avg (default), p50, p95, p99, sum, count, max or min over time_range (default the last hour) in steps of `step` (e.g. 1m, 1h). Returns {metric_name, values: [{timestamp, value}], aggregation, time_range, metadata: {unit, description, query}}.';

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

CREATE OR REPLACE FUNCTION neotoma.update_record(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('update_record', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.update_record(jsonb) IS
  'Deprecated (earlier specification): sets the properties of a record (an entity: `id`) by corrections, one per property. Use correct.';

CREATE OR REPLACE FUNCTION neotoma.retrieve_records(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('retrieve_records', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.retrieve_records(jsonb) IS
  'Deprecated (earlier specification): entities as records, filtered by `type`, `properties` and keyword `search` terms. Use retrieve_entities.';

CREATE OR REPLACE FUNCTION neotoma.delete_record(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('delete_record', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.delete_record(jsonb) IS
  'Deprecated (earlier specification): deletes a record (an entity) as delete_entity does; its history stays. Use delete_entity.';

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

CREATE OR REPLACE FUNCTION neotoma.memory_create_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_create_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_create_entities(jsonb) IS
  'Create multiple new entities in the knowledge graph. (An entity whose name the graph has already is left as it is; the entities created are returned.)';

CREATE OR REPLACE FUNCTION neotoma.memory_create_relations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_create_relations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_create_relations(jsonb) IS
  'Create multiple new relations between entities in the knowledge graph. Relations should be in active voice. (Both entities must exist; a relation the graph has already is left out of the answer.)';

CREATE OR REPLACE FUNCTION neotoma.memory_add_observations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_add_observations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_add_observations(jsonb) IS
  'Add new observations to existing entities in the knowledge graph';

CREATE OR REPLACE FUNCTION neotoma.memory_delete_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_delete_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_delete_entities(jsonb) IS
  'Delete multiple entities and their associated relations from the knowledge graph';

CREATE OR REPLACE FUNCTION neotoma.memory_delete_observations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_delete_observations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_delete_observations(jsonb) IS
  'Delete specific observations from entities in the knowledge graph';

CREATE OR REPLACE FUNCTION neotoma.memory_delete_relations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_delete_relations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_delete_relations(jsonb) IS
  'Delete multiple relations from the knowledge graph';

CREATE OR REPLACE FUNCTION neotoma.memory_read_graph(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_read_graph', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_read_graph(jsonb) IS
  'Read the entire knowledge graph, a page at a time: up to `limit` entities (100 unless given, at most 1000) in the order they were created, with the relations starting at them; while more follow, pass the answer''s nextCursor as `cursor`.';

CREATE OR REPLACE FUNCTION neotoma.memory_search_nodes(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_search_nodes', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_search_nodes(jsonb) IS
  'Search for nodes in the knowledge graph based on a query (matched, case folded, against entity names, types, and observation content; at most 1000 entities, with the relations touching them)';

CREATE OR REPLACE FUNCTION neotoma.memory_open_nodes(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('memory_open_nodes', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.memory_open_nodes(jsonb) IS
  'Open specific nodes in the knowledge graph by their names (with the relations touching them)';

CREATE OR REPLACE FUNCTION neotoma.workspace_read_graph(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('workspace_read_graph', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.workspace_read_graph(jsonb) IS
  'Returns all entities and relations for a workspace (workspaceName), a page at a time: up to `limit` entities (at most 1000) in the order they were created, with the relations starting at them, and nextCursor (pass it as `cursor`) while more follow.';

CREATE OR REPLACE FUNCTION neotoma.workspace_upsert_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('workspace_upsert_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.workspace_upsert_entity(jsonb) IS
  'Creates or updates an entity by name within a workspace: entityType, observations (replacing the entity''s when given) and metadata (a JSON text). Returns {success, id, workspace, name}.';

CREATE OR REPLACE FUNCTION neotoma.workspace_upsert_relation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('workspace_upsert_relation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.workspace_upsert_relation(jsonb) IS
  'Creates or updates a relation between two existing entities of a workspace, named by fromEntityId/toEntityId or by the legacy from/to names, with an optional metadata JSON text. Returns {success, relationId, workspace, fromEntityId, toEntityId, relationType}.';

CREATE OR REPLACE FUNCTION neotoma.workspace_get_entity_relations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('workspace_get_entity_relations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.workspace_get_entity_relations(jsonb) IS
  'Lists all relations originating from a given entity of a workspace (entityId, preferred, or entityName). Returns {success, workspaceName, entityId, relations:[{id, relationType, toEntityId, metadata}]}.';

CREATE OR REPLACE FUNCTION neotoma.engram_send_memory(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('engram_send_memory', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.engram_send_memory(jsonb) IS
  'Write one memory: an affirmation, fact or observation (content), with where it came from (source {type, ref, citation}), the source''s reliability letter A-F (confidence_hint: the memory is rated <letter>3, uncorroborated; F3 without one) and the calling agent (agent_id). The same content again corroborates the same memory. Returns {memory_id, status}.';

CREATE OR REPLACE FUNCTION neotoma.engram_get_memory(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('engram_get_memory', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.engram_get_memory(jsonb) IS
  'Read the memories matching a natural language query, best first: each with its NATO confidence rating, sources, causal chain (relations up to max_depth steps) and participants, plus the contradictions among their sources. min_confidence keeps memories whose letter and number both pass (F6: all); compact leaves out sources, chains, participants and contradictions. Returns {memories, contradictions, meta}.';

CREATE OR REPLACE FUNCTION neotoma.engram_correct_memory(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('engram_correct_memory', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.engram_correct_memory(jsonb) IS
  'Correct a memory (target_id) by one action with its payload: contest {reason} (lowers its rating a step), annotate {note}, merge_entities {source_id} (that memory joins this one), split_entity {observation_ids | source_ids, to_entity_id?} or reclassify {new_type, reason?}. History is kept and the correction audited. Returns {target_id, action, status (applied, not_found), details}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_version(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_version', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_version(jsonb) IS
  'Returns the current version of the GraphMem server (here: the Neotoma extension''s). Returns {version, server}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_current_time(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_current_time', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_current_time(jsonb) IS
  'Returns the current server time as an ISO 8601 string: {current_time}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_create_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_create_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_create_entity(jsonb) IS
  'Creates a new entity (name, entity_type auto-canonicalized e.g. workspace becomes Project, pipe-separated aliases, description, initial observations). Performs auto-deduplication: if an entity of the same name, or a semantically similar one (cosine distance < 0.25), exists, returns status duplicate_warning with the existing entity instead of creating a duplicate. Returns {status, entity | warning, existing_entity, cosine_distance}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_entity(jsonb) IS
  'Retrieves an entity by ID (an integer), including observations and relations.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_update_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_update_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_update_entity(jsonb) IS
  'Updates entity name (must be unique), type (auto-canonicalized), aliases and/or description (an empty string clears). Returns the entity with observations and relations.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_delete_entity(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_delete_entity', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_delete_entity(jsonb) IS
  'Deletes an entity and all associated observations and relations (its history is kept). Returns {status, id}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_create_observation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_create_observation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_create_observation(jsonb) IS
  'Adds an observation (text_content) to an existing entity; it is searchable by meaning at once. Returns {observation_id, entity_id, text_content}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_delete_observation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_delete_observation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_delete_observation(jsonb) IS
  'Deletes an observation by ID. Returns {status, id}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_create_relation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_create_relation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_create_relation(jsonb) IS
  'Creates a typed relationship between two entities (relation_type e.g. part_of, depends_on). Returns {relation_id, from_entity_id, to_entity_id, relation_type}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_delete_relation(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_delete_relation', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_delete_relation(jsonb) IS
  'Deletes a relation by ID. Returns {status, id}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_find_relations(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_find_relations', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_find_relations(jsonb) IS
  'Finds relations by optional filters (from_entity_id, to_entity_id, relation_type). Returns {relations}, at most 1000.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_search_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_search_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_search_entities(jsonb) IS
  'Hybrid search combining text tokenization with vector semantic similarity, merged by Reciprocal Rank Fusion. Returns {results:[{entity_id, name, entity_type, description, aliases, memory_observations_count, relevance_score, matched_fields}]}, at most 50.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_list_entities(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_list_entities', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_list_entities(jsonb) IS
  'Paginated listing of all entities (page, default 1; per_page, default 20, max 100), in the order they were created. Returns {entities, page, per_page, total_count, total_pages}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_search_subgraph(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_search_subgraph', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_search_subgraph(jsonb) IS
  'Searches across entity names, types, aliases and observations (each can be turned off) and returns a paginated subgraph: the matching entities with their observations and the relations among them. Returns {entities, relations, page, per_page, total_count}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_subgraph_by_ids(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_subgraph_by_ids', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_subgraph_by_ids(jsonb) IS
  'Retrieves a set of entities by their IDs (at most 100) with observations and the relations among them. Returns {entities, relations}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_set_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_set_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_set_context(jsonb) IS
  'Sets the active project context (project_id: the ID of the project entity) for subsequent operations; it is kept in the memory, so it holds across connections. Returns {status, project_id, project_name, project_type}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_get_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_get_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_get_context(jsonb) IS
  'Returns the currently active project context {status: active, project_id, project_name, project_type, description}, or {status: no_context}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_clear_context(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_clear_context', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_clear_context(jsonb) IS
  'Clears the active project context. Returns {status: context_cleared}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_bulk_update(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_bulk_update', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_bulk_update(jsonb) IS
  'Performs multiple operations in a single atomic transaction, at most 50: entities to create ({name, entity_type, aliases?, description?, observations?}), observations to add ({entity_id, text_content}), relations to create ({from_entity_id, to_entity_id, relation_type}). Rolls back entirely on any error. Returns {status, operations, entities, observations, relations}.';

CREATE OR REPLACE FUNCTION neotoma.graphmem_suggest_merges(args jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $body$
DECLARE r jsonb := neotoma._invoke('graphmem_suggest_merges', coalesce(args, 'null')::text);
BEGIN
  IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;
  RETURN r->'ok';
END $body$;
COMMENT ON FUNCTION neotoma.graphmem_suggest_merges(jsonb) IS
  'Finds potential duplicate entities by vector cosine similarity: pairs within threshold (maximum cosine distance, default 0.3), at most limit (default 20), optionally of one entity_type. Returns {suggestions:[{entity_a, entity_b, cosine_distance, recommendation}]}.';
