//! The action catalog: every action the extension serves, with what an MCP
//! client needs to call it. The gateway builds its tool list from this (read
//! through `neotoma.action_catalog()`), so adding an action never touches it.

use crate::actions::{entities, graph, legacy, resources, schemas, store, system};
use crate::canonical::{canonical_json, sha256_hex};
use crate::request::schema_for;
use serde_json::{json, Value};

/// Version of the MCP contract this catalog implements (seed 000 section 8).
pub const API_VERSION: &str = "1.0.0";

/// One action.
pub struct ActionSpec {
    pub name: &'static str,
    pub title: &'static str,
    /// Written for an agent: when to use it and what it returns.
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    /// Set where the result has a fixed shape.
    pub output_schema: Option<fn() -> Value>,
    pub read_only: bool,
    pub idempotent: bool,
    pub destructive: bool,
    /// Older names (seed 001) that keep working.
    pub aliases: &'static [&'static str],
    /// Callable as an MCP tool. The resource functions are not: the gateway
    /// serves them as MCP resources.
    pub tool: bool,
    /// An action of the earlier specification: callable, but not listed.
    pub legacy: bool,
}

impl ActionSpec {
    /// An action listed as a tool that writes, idempotently, destroying
    /// nothing; the methods below change what differs.
    fn new(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        input_schema: fn() -> Value,
    ) -> Self {
        ActionSpec {
            name,
            title,
            description,
            input_schema,
            output_schema: None,
            read_only: false,
            idempotent: true,
            destructive: false,
            aliases: &[],
            tool: true,
            legacy: false,
        }
    }

    fn read_only(self) -> Self {
        ActionSpec {
            read_only: true,
            ..self
        }
    }

    fn output(self, output_schema: fn() -> Value) -> Self {
        ActionSpec {
            output_schema: Some(output_schema),
            ..self
        }
    }

    fn not_idempotent(self) -> Self {
        ActionSpec {
            idempotent: false,
            ..self
        }
    }

    fn destructive(self) -> Self {
        ActionSpec {
            destructive: true,
            ..self
        }
    }

    fn aliases(self, aliases: &'static [&'static str]) -> Self {
        ActionSpec { aliases, ..self }
    }

    /// Not a tool: served otherwise (resources) or used by the gateway.
    fn internal(self) -> Self {
        ActionSpec {
            tool: false,
            ..self
        }
    }

    fn legacy(self) -> Self {
        ActionSpec {
            legacy: true,
            ..self
        }
    }

    /// The SQL function serving this action; it takes and returns jsonb.
    pub fn sql_function(&self) -> String {
        format!("neotoma.{}", self.name)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "input_schema": (self.input_schema)(),
            "output_schema": self.output_schema.map(|f| f()),
            "annotations": {
                "read_only": self.read_only,
                "idempotent": self.idempotent,
                "destructive": self.destructive,
            },
            "sql_function": self.sql_function(),
            "aliases": self.aliases,
            "tool": self.tool,
            "legacy": self.legacy,
        })
    }
}

/// Every action, in a fixed order.
pub fn actions() -> Vec<ActionSpec> {
    vec![
        ActionSpec::new(
            "get_version",
            "Get version",
            "Report the versions of the Neotoma extension, its action catalog, \
                the MCP contract and Postgres. Use it to check that the memory is reachable \
                and which features it has. Returns {extension_version, catalog_version, \
                api_version, server_version, postgres_version}.",
            schema_for::<system::GetVersionRequest>,
        )
        .read_only()
        .output(schema_for::<system::GetVersionResponse>),
        ActionSpec::new(
            "get_current_time",
            "Get current time",
            "Return the memory's clock (the database's), in UTC. Use it to \
                timestamp what you store (`provenance.extracted_at`) or to ask about \
                'today' consistently with stored data. Returns {now, unix_ms, timezone}.",
            schema_for::<system::GetCurrentTimeRequest>,
        )
        .read_only()
        .output(schema_for::<system::GetCurrentTimeResponse>)
        .not_idempotent(),
        ActionSpec::new(
            "store",
            "Store source material",
            "Store what you learned. Structured: `entities`, an array of objects each \
                with an `entity_type` (call list_entity_types first to pick it) and ALL the fields \
                of the source data; fields the schema lacks are kept in raw_fragments \
                (`unknown_fields_count`). Unstructured: `file_content` (base64) or `file_path` with \
                `mime_type`, interpreted by the server (do not extract fields yourself). Content is \
                hashed: storing the same content again returns the same source_id with \
                `deduplicated: true` and creates nothing. The same real-world thing stored twice \
                (same identity fields, e.g. an invoice number and vendor, a person's e-mail) lands \
                on one entity. Returns {source_id, content_hash, deduplicated, interpretation, \
                entities:[{entity_id, entity_type, observation_id}], unknown_fields_count}.",
            schema_for::<store::StoreRequest>,
        )
        .output(schema_for::<store::StoreResponse>)
        .aliases(&["ingest", "ingest_structured"]),
        ActionSpec::new(
            "retrieve_entity_snapshot",
            "Retrieve entity snapshot",
            "Get the current truth about one entity: its snapshot (field → value) \
                computed by the reducer from all its observations, with provenance for every field \
                (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot \
                as it was at that time. A merged entity redirects to the entity it was merged into \
                (`redirected_from`).",
            schema_for::<entities::RetrieveEntitySnapshotRequest>,
        )
        .read_only()
        .output(schema_for::<entities::EntitySnapshotResponse>)
        .aliases(&["get_entity_snapshot"]),
        ActionSpec::new(
            "list_observations",
            "List observations",
            "List the observations (what each source said) about one entity, newest \
                first, with their fields, source, priority and specificity. Use it to see how a \
                snapshot was built or what changed. Paginated with limit/offset; returns \
                {observations, total, limit, offset}.",
            schema_for::<entities::ListObservationsRequest>,
        )
        .read_only()
        .output(schema_for::<entities::ListObservationsResponse>),
        ActionSpec::new(
            "retrieve_field_provenance",
            "Retrieve field provenance",
            "Explain one field of an entity's snapshot: its value, the observation \
                that supplied it (priority, specificity, time), the source material it came from \
                and the interpretation run, if any. Use it to answer 'where does this come from?'.",
            schema_for::<entities::RetrieveFieldProvenanceRequest>,
        )
        .read_only()
        .output(schema_for::<entities::RetrieveFieldProvenanceResponse>)
        .aliases(&["get_field_provenance"]),
        ActionSpec::new(
            "retrieve_entities",
            "Retrieve entities",
            "List entities, optionally of one `entity_type`, most recently observed \
                first, with their snapshots (include_snapshots, default true). Merged entities are \
                left out unless include_merged. Paginated with limit (max 1000) and offset; returns \
                {entities:[{id, entity_type, canonical_name, snapshot, observation_count, \
                last_observation_at}], total, excluded_merged}.",
            schema_for::<entities::RetrieveEntitiesRequest>,
        )
        .read_only()
        .output(schema_for::<entities::RetrieveEntitiesResponse>),
        ActionSpec::new(
            "retrieve_entity_by_identifier",
            "Find entity by identifier",
            "Find entities by something that identifies them: a name, e-mail, phone \
                number, web site, invoice number… The identifier is normalised (case, spaces, \
                phone and URL forms) and matched against the identity fields of every entity, \
                optionally of one entity_type; when nothing matches exactly, partial matches are \
                returned (match_type tells which).",
            schema_for::<entities::RetrieveEntityByIdentifierRequest>,
        )
        .read_only()
        .output(schema_for::<entities::RetrieveEntityByIdentifierResponse>)
        .aliases(&["get_entity_by_identifier"]),
        ActionSpec::new(
            "list_entity_types",
            "List entity types",
            "List the entity types you can store, with their fields (type, required), \
                identity fields and schema version. Call it before `store` to choose the \
                entity_type. With `keyword`, types are ranked by matches in their names, \
                descriptions and field names (e.g. 'bill' finds invoice), falling back to fuzzy \
                similarity when nothing matches.",
            schema_for::<entities::ListEntityTypesRequest>,
        )
        .read_only()
        .output(schema_for::<entities::ListEntityTypesResponse>),
        ActionSpec::new(
            "correct",
            "Correct a field",
            "Fix one field of an entity: records a correction observation (priority \
                1000) that wins over every other observation immediately and stays the truth \
                until corrected again; nothing is deleted. Give entity_id, its entity_type, the \
                schema field and the right value (null clears it). Returns the correction's \
                observation_id.",
            schema_for::<entities::CorrectRequest>,
        )
        .output(schema_for::<entities::CorrectResponse>),
        ActionSpec::new(
            "create_relationship",
            "Create relationship",
            "Link two entities with a typed, directed relationship: PART_OF, \
                DEPENDS_ON, SUPERSEDES, CORRECTS, SETTLES (none of these may form a cycle: \
                CYCLE_DETECTED with the path), REFERS_TO or DUPLICATE_OF. Optional metadata is \
                recorded as an observation with provenance. Same type and entities → same \
                relationship id; asserting it again is idempotent.",
            schema_for::<graph::CreateRelationshipRequest>,
        )
        .output(schema_for::<graph::RelationshipOut>),
        ActionSpec::new(
            "list_relationships",
            "List relationships",
            "List an entity's relationships (direction inbound, outbound or both; \
                optionally one relationship_type), newest first, paginated. Returns \
                {relationships:[{id, relationship_type, source_entity_id, target_entity_id, \
                metadata, created_at}], total}.",
            schema_for::<graph::ListRelationshipsRequest>,
        )
        .read_only()
        .output(schema_for::<graph::ListRelationshipsResponse>),
        ActionSpec::new(
            "get_relationship_snapshot",
            "Get relationship snapshot",
            "Get one relationship (by type, source and target entity) with its \
                metadata reduced from every assertion of it, provenance per metadata field, and \
                the observations themselves.",
            schema_for::<graph::GetRelationshipSnapshotRequest>,
        )
        .read_only()
        .output(schema_for::<graph::GetRelationshipSnapshotResponse>),
        ActionSpec::new(
            "retrieve_related_entities",
            "Retrieve related entities",
            "Walk the relationship graph from an entity up to max_hops (default 1, \
                at most 5) in a direction, optionally only through some relationship_types. \
                Returns the entities reached (with snapshots unless include_entities is false) \
                and the relationships walked, each once, in a stable order.",
            schema_for::<graph::RetrieveRelatedEntitiesRequest>,
        )
        .read_only()
        .output(schema_for::<graph::RetrieveRelatedEntitiesResponse>)
        .aliases(&["get_related_entities"]),
        ActionSpec::new(
            "retrieve_graph_neighborhood",
            "Retrieve graph neighborhood",
            "Everything around one node (an entity, or a source with \
                node_type 'source'): its snapshot or source material, its relationships and \
                related entities, the sources it came from, its timeline events and, on request, \
                its observations. Use it to get full context in one call.",
            schema_for::<graph::RetrieveGraphNeighborhoodRequest>,
        )
        .read_only()
        .aliases(&["get_graph_neighborhood"]),
        ActionSpec::new(
            "list_timeline_events",
            "List timeline events",
            "List dated events derived from entities' date fields (e.g. \
                InvoiceIssued, InvoiceDue, TaskDue, TransactionDate), newest first, filtered by \
                event_type, a date range (after_date inclusive, before_date exclusive), source_id \
                or entity_id, paginated.",
            schema_for::<graph::ListTimelineEventsRequest>,
        )
        .read_only()
        .output(schema_for::<graph::ListTimelineEventsResponse>),
        ActionSpec::new(
            "merge_entities",
            "Merge entities",
            "Merge a duplicate entity (from_entity_id) into another of the same type \
                (to_entity_id): its observations, relationships and events count for the target \
                from now on, the target's snapshot is recomputed, and the duplicate is hidden \
                (retrieving it redirects to the target). Nothing is deleted; the merge is logged \
                with its reason. Merging an entity twice is ENTITY_ALREADY_MERGED.",
            schema_for::<graph::MergeEntitiesRequest>,
        )
        .output(schema_for::<graph::MergeEntitiesResponse>)
        .not_idempotent()
        .destructive(),
        ActionSpec::new(
            "analyze_schema_candidates",
            "Analyze schema candidates",
            "Look at the fields kept in raw_fragments (stored data the schema \
                lacks) and recommend which should become schema fields: per field its \
                frequency, distinct sources, dominant type and type consistency, format \
                consistency, up to 10 sample values and a confidence. Filtered by min_frequency \
                (default 5) and min_confidence (default 0.8); recommendations are kept as \
                pending (get_schema_recommendations).",
            schema_for::<schemas::AnalyzeSchemaCandidatesRequest>,
        )
        .output(schema_for::<schemas::AnalyzeSchemaCandidatesResponse>),
        ActionSpec::new(
            "get_schema_recommendations",
            "Get schema recommendations",
            "List the stored schema recommendations for an entity type: pending ones \
                from analyze_schema_candidates, and those applied automatically (auto_applied) \
                with the evidence they rest on. Filter by source and status.",
            schema_for::<schemas::GetSchemaRecommendationsRequest>,
        )
        .read_only()
        .output(schema_for::<schemas::GetSchemaRecommendationsResponse>),
        ActionSpec::new(
            "update_schema_incremental",
            "Add fields to a schema",
            "Add fields to an entity type's schema as a new version, active at once \
                by default, so the next stores keep those fields in observations (and \
                snapshots) instead of raw_fragments. user_specific makes a variant for this user \
                only. migrate_existing turns the raw_fragments already stored for those fields \
                into observations (provenance kept) and updates the snapshots.",
            schema_for::<schemas::UpdateSchemaIncrementalRequest>,
        )
        .output(schema_for::<schemas::UpdateSchemaIncrementalResponse>),
        ActionSpec::new(
            "register_schema",
            "Register a schema",
            "Define a new entity type, or a new version of one: its fields (type, \
                required), identity fields, temporal fields and a merge policy per field \
                (last_write, highest_priority, most_specific, merge_array; tie breaker \
                observed_at or source_priority). A new type is usable by store at once; a new \
                version of an existing type becomes active with activate=true (snapshots are \
                recomputed under the new policies).",
            schema_for::<schemas::RegisterSchemaRequest>,
        )
        .output(schema_for::<schemas::RegisterSchemaResponse>)
        .not_idempotent(),
        ActionSpec::new(
            "reinterpret",
            "Reinterpret a source",
            "Interpret a stored source again with a new interpretation_config \
                (provider, model_id, temperature, prompt_hash, code_version, feature_flags; \
                entity_type for CSV). It is a new interpretation run: the observations of earlier \
                runs stay, and the reducer decides what snapshots show. The same source and \
                config give the same run and observations.",
            schema_for::<store::ReinterpretRequest>,
        )
        .output(schema_for::<store::ReinterpretResponse>),
        ActionSpec::new(
            "retrieve_file_url",
            "Retrieve file URL",
            "Get a signed, expiring URL (expires_in seconds, default 3600) to \
                download a stored file (by its storage_path or source id) from the MCP server's \
                HTTP endpoint. Returns {signed_url, expires_at}.",
            schema_for::<store::RetrieveFileUrlRequest>,
        )
        .read_only()
        .output(schema_for::<store::RetrieveFileUrlResponse>)
        .not_idempotent()
        .aliases(&["get_file_url"]),
        ActionSpec::new(
            "record_interpretation",
            "Record an interpretation",
            "Record what an external model read from a file (entities, or an \
                error) for a pending interpretation run. Used by the MCP server's model \
                interpreter, not an agent tool.",
            schema_for::<store::RecordInterpretationRequest>,
        )
        .internal(),
        ActionSpec::new(
            "submit_payload",
            "Submit payload (earlier specification)",
            "Earlier name: stores `body` as an entity of the capability's type \
                (neotoma:store_invoice:v1 → invoice) with `provenance`. Use store.",
            schema_for::<legacy::SubmitPayloadRequest>,
        )
        .legacy(),
        ActionSpec::new(
            "upload_file",
            "Upload file (earlier specification)",
            "Earlier name: stores a local file (file_path) like store does; with \
                `properties` the file is not interpreted. Use store.",
            schema_for::<legacy::UploadFileRequest>,
        )
        .legacy(),
        ActionSpec::new(
            "list_resources",
            "List resources",
            "The neotoma:// resources the user's data offers: the source collection, \
                one collection per entity type, one timeline per year and month with events. \
                Served as MCP resources/list, not as a tool.",
            schema_for::<resources::ListResourcesRequest>,
        )
        .read_only()
        .internal(),
        ActionSpec::new(
            "read_resource",
            "Read resource",
            "The body of one neotoma:// resource (entity collection, entity, its \
                observations or relationships, a year or month of timeline, a source, the \
                sources). Served as MCP resources/read, not as a tool.",
            schema_for::<resources::ReadResourceRequest>,
        )
        .read_only()
        .internal(),
    ]
}

/// The canonical action name for `name`, which may be an alias.
pub fn resolve(name: &str) -> Option<&'static str> {
    actions()
        .into_iter()
        .find(|a| a.name == name || a.aliases.contains(&name))
        .map(|a| a.name)
}

/// The whole catalog as served by `neotoma.action_catalog()`.
pub fn catalog_json(extension_version: &str) -> Value {
    let actions: Vec<Value> = actions().iter().map(ActionSpec::to_json).collect();
    let digest = sha256_hex(canonical_json(&Value::Array(actions.clone())).as_bytes());
    json!({
        "catalog_version": format!("{extension_version}+{}", &digest[..12]),
        "extension_version": extension_version,
        "api_version": API_VERSION,
        "actions": actions,
        "interpretation": {
            "record_function": "neotoma.record_interpretation",
        },
        "resources": {
            "list_function": "neotoma.list_resources",
            "read_function": "neotoma.read_resource",
            "templates": resources::templates(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = HashSet::new();
        for a in actions() {
            assert!(seen.insert(a.name), "duplicate {}", a.name);
            for alias in a.aliases {
                assert!(seen.insert(alias), "duplicate alias {alias}");
            }
        }
    }

    #[test]
    fn every_action_has_an_object_input_schema_and_a_description() {
        for a in actions() {
            let schema = (a.input_schema)();
            assert_eq!(schema["type"], "object", "{}", a.name);
            assert!(
                a.description.len() > 40,
                "{} needs a real description",
                a.name
            );
            if let Some(out) = a.output_schema {
                assert_eq!(out()["type"], "object", "{}", a.name);
            }
            assert!(!(a.read_only && a.destructive), "{}", a.name);
        }
    }

    #[test]
    fn catalog_version_is_stable_and_tracks_content() {
        let a = catalog_json("1.2.3");
        assert_eq!(a, catalog_json("1.2.3"));
        let v = a["catalog_version"].as_str().unwrap();
        assert!(v.starts_with("1.2.3+"), "{v}");
        assert_eq!(a["actions"][0]["sql_function"], "neotoma.get_version");
        assert_eq!(resolve("get_version"), Some("get_version"));
        assert_eq!(resolve("nope"), None);
    }
}
