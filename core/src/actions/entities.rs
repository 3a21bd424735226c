//! Reading entities: snapshots, observations, provenance, listings, lookup by
//! identifier; and `correct`.

use crate::confidence::Confidence;
use crate::workspace::{WorkspaceArg, WorkspaceName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// Snapshot of one entity, now or as of a past time.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveEntitySnapshotRequest {
    /// Entity id (`ent_…`).
    pub entity_id: String,
    /// ISO 8601 time: the snapshot as of then, from the observations observed up to it.
    pub at: Option<String>,
    /// ISO 8601: as true in the world then (default: `at`, else now).
    pub valid_at: Option<String>,
    /// Answer a deleted entity too (with deleted_at) instead of ENTITY_NOT_FOUND.
    pub include_deleted: Option<bool>,
    /// Also answer the fields whose observations disagree (`contradictions`,
    /// as list_contradictions gives them; as of `at` when given).
    pub include_contradictions: Option<bool>,
    /// Also answer the notes attached to the entity or its observations
    /// (`annotations`, oldest first).
    pub include_annotations: Option<bool>,
    /// Only the fields whose value's confidence rating passes this one:
    /// both its letter and its number at least as good (e.g. B2 keeps A1,
    /// B2, A2, B1; F6 keeps everything).
    pub min_confidence: Option<Confidence>,
    /// Acting user (UUID); optional when the connection identifies the user.
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EntitySnapshotResponse {
    pub entity_id: String,
    pub entity_type: String,
    pub canonical_name: String,
    pub schema_version: String,
    /// Current truth: field → value.
    pub snapshot: Object,
    /// Field → id of the observation the value came from.
    pub provenance: Object,
    /// Field → {observation_id, source_id, observed_at, source_priority,
    /// specificity_score, confidence}.
    pub field_provenance: Object,
    /// Newest observed_at among the observations (the snapshot is a function of them).
    pub computed_at: Option<String>,
    pub observation_count: i64,
    pub last_observation_at: Option<String>,
    /// Present when the snapshot is as of a past time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Present when asked: the instant of valid time the snapshot is true at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_at: Option<String>,
    /// When some field's value stops or starts holding next, after the
    /// instant shown (absent: no field holds over an interval ahead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<String>,
    /// Present when the requested entity was merged into this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redirected_from: Option<String>,
    /// Present when the entity is deleted (asked with include_deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
    /// Why it was deleted, when the deletion said (with deleted_at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_reason: Option<String>,
    /// The fields whose observations disagree (asked with
    /// include_contradictions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contradictions: Option<Vec<crate::contradictions::Contradiction>>,
    /// The notes attached to the entity or its observations (asked with
    /// include_annotations), oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Vec<crate::actions::annotations::AnnotationOut>>,
}

/// One field of an entity over valid time.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveFieldHistoryRequest {
    /// Entity id (`ent_…`).
    pub entity_id: String,
    /// The field.
    pub field: String,
    /// ISO 8601 time: as known then, from the observations observed up to it.
    pub at: Option<String>,
    /// Acting user (UUID); optional when the connection identifies the user.
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveFieldHistoryResponse {
    pub entity_id: String,
    pub field: String,
    /// The field's values over valid time, earliest first: each over
    /// `[valid_from, valid_to)` (absent end: unbounded). Where no
    /// observation of the field holds there is no interval.
    pub intervals: Vec<FieldInterval>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FieldInterval {
    /// Its start (included); absent: since always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// Its end (excluded); absent: for ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
    /// The value the reducer chose among the observations valid over it.
    pub value: Value,
    /// Where it came from: {observation_id, source_id, observed_at,
    /// source_priority, specificity_score, confidence} (and
    /// observation_ids for a merged array), as field_provenance gives it.
    pub provenance: Value,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListObservationsRequest {
    pub entity_id: String,
    /// Max results (1–1000, default 100).
    pub limit: Option<i64>,
    /// Results to skip (default 0).
    pub offset: Option<i64>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ObservationOut {
    pub id: String,
    pub entity_id: String,
    pub entity_type: String,
    pub schema_version: String,
    pub source_id: String,
    pub interpretation_run_id: Option<String>,
    /// store, correction, interpretation or migration.
    pub kind: String,
    pub observed_at: String,
    pub specificity_score: f64,
    pub source_priority: i32,
    pub fields: Object,
    pub created_at: String,
    /// Its confidence rating (admiralty code), contests counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// How many times it was contested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contests: Option<u32>,
    /// The token (agent) it was written with, when it came through one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_with: Option<WrittenWith>,
    /// When in the world its fields hold, when it was stored with an
    /// interval: from (included) and to (excluded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
}

/// The token an observation was written with: its id, and its name (the
/// agent's label) while the token exists.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WrittenWith {
    pub token_id: String,
    pub name: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListObservationsResponse {
    /// Newest first (observed_at DESC, then id).
    pub observations: Vec<ObservationOut>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveFieldProvenanceRequest {
    pub entity_id: String,
    /// Field of the snapshot.
    pub field: String,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SourceObservationOut {
    pub id: String,
    pub source_id: String,
    pub observed_at: String,
    pub specificity_score: f64,
    pub source_priority: i32,
    pub kind: String,
    pub interpretation_run_id: Option<String>,
    /// The token (agent) it was written with, when it came through one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_with: Option<WrittenWith>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SourceMaterialOut {
    pub id: String,
    pub source_type: String,
    pub mime_type: Option<String>,
    pub original_filename: Option<String>,
    pub content_hash: String,
    pub file_urls: Vec<String>,
    pub storage_path: Option<String>,
    pub created_at: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveFieldProvenanceResponse {
    pub field: String,
    pub value: Value,
    pub source_observation: SourceObservationOut,
    pub source_material: SourceMaterialOut,
    /// The interpretation run that produced the observation, if any.
    pub interpretation_run: Option<Object>,
    pub observed_at: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveEntitiesRequest {
    /// Only entities of this type.
    pub entity_type: Option<String>,
    /// Acting user (UUID); optional when the connection identifies the user.
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
    /// Max results (1–1000, default 100).
    pub limit: Option<i64>,
    /// Results to skip (default 0).
    pub offset: Option<i64>,
    /// Include each entity's snapshot (default true).
    pub include_snapshots: Option<bool>,
    /// Include entities merged into others (default false).
    pub include_merged: Option<bool>,
    /// Include deleted entities, with deleted_at and deleted_reason (default false).
    pub include_deleted: Option<bool>,
    /// Free text to look for (1–1000 characters): names (typos forgiven),
    /// every snapshot field value, aliases of merged entities. Ranks by
    /// relevance, then id.
    pub search: Option<String>,
    /// How to search (default auto); the answer's search_method says which
    /// mode answered.
    pub search_mode: Option<crate::search::SearchMode>,
    /// With `search`: also match the words of every observation of an
    /// entity, values since corrected or outranked included, and of the
    /// stored text files it was observed from (default false: the
    /// snapshot's current values).
    pub include_observations: Option<bool>,
    /// Only entities with a field whose value's confidence rating passes
    /// this one (letter and number both at least as good), their snapshots
    /// showing only such fields. Not with search.
    pub min_confidence: Option<Confidence>,
    /// ISO 8601: snapshots as true in the world then (the answers and their
    /// order are those of now).
    pub valid_at: Option<String>,
    /// With `search`: only what holds now (default true); false also finds
    /// values that ended, listed in `ended`.
    pub current_only: Option<bool>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EntitySummary {
    pub id: String,
    pub entity_type: String,
    pub canonical_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Object>,
    pub observation_count: i64,
    pub last_observation_at: Option<String>,
    /// Set on merged entities: where they went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_into: Option<String>,
    /// The workspace it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Set on deleted entities (include_deleted): when, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_reason: Option<String>,
    /// With `search`: how well it matched (0–1), and which fields did
    /// (snapshot fields; `alias` for the name of an entity merged into it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance_score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_fields: Option<Vec<String>>,
    /// With a semantic or hybrid search: the cosine similarity of its
    /// embedding to the query's (when it matched semantically).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_similarity: Option<f64>,
    /// With `search` and current_only false: its values whose validity
    /// ended (valid time), each with when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Vec<EndedValue>>,
}

/// A value of a field that held over valid time until `valid_to`, and no
/// longer does.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EndedValue {
    pub field: String,
    pub value: Value,
    pub valid_to: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveEntitiesResponse {
    /// Most recently observed first, then by id.
    pub entities: Vec<EntitySummary>,
    pub total: i64,
    /// True when merged entities were left out.
    pub excluded_merged: bool,
    pub limit: i64,
    pub offset: i64,
    /// With `search`: the mode that answered (`lexical`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_method: Option<String>,
    /// Why the mode asked for did not answer, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_fallback: Option<String>,
    /// With a semantic or hybrid search: how many of the entities searched
    /// have no embedding of their current text yet (they are found
    /// lexically only). The built-in model embeds in the transaction that
    /// stores, so this is 0 unless the model was installed after the data
    /// (`neotoma.verify(true)` embeds them); a gateway's remote provider
    /// embeds within moments of the store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_embeddings: Option<i64>,
    /// With a semantic or hybrid search: the embedding model that answered
    /// (the server's built-in `potion-base-8M`, or the gateway's provider's,
    /// `remote:<model>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_model: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveEntityByIdentifierRequest {
    /// A name, e-mail, phone, web site, number… (normalised before matching).
    pub identifier: String,
    /// Only entities of this type.
    pub entity_type: Option<String>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct IdentifiedEntity {
    pub id: String,
    pub entity_type: String,
    pub canonical_name: String,
    pub snapshot: Option<Object>,
    /// Identity fields that matched.
    pub matched_fields: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveEntityByIdentifierResponse {
    pub entities: Vec<IdentifiedEntity>,
    pub total: i64,
    /// "exact" (normalised equality), "partial" (substring, when nothing was exact) or "none".
    pub match_type: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrectRequest {
    /// Acting user (UUID); optional when the connection identifies the user.
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
    pub entity_id: String,
    /// The entity's type (must match).
    pub entity_type: String,
    /// Schema field to correct.
    pub field: String,
    /// The right value (null clears the field).
    pub value: Value,
    /// The correction's confidence rating (admiralty code; default A1).
    pub confidence: Option<Confidence>,
    /// ISO 8601: when the value starts to hold in the world (absent: always).
    pub valid_from: Option<String>,
    /// ISO 8601: when it stops holding, excluded (absent: never).
    pub valid_to: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CorrectResponse {
    pub observation_id: String,
    pub entity_id: String,
    pub field: String,
    pub value: Value,
    pub message: String,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "retrieve_entity_snapshot" => Entry::new(
            "Retrieve entity snapshot",
            "Get the current truth about one entity: its snapshot (field → value) \
                computed by the reducer from all its observations, with provenance for every field \
                (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot \
                as it was known at that time, `valid_at` for what was true in the world then \
                (values stored with valid_from/valid_to). A merged entity redirects to the entity it was merged into \
                (`redirected_from`). include_contradictions also answers the fields whose \
                observations disagree, as list_contradictions does; include_annotations the notes \
                attached to it (annotate).",
        )
        .read_only()
        .aliases(&["get_entity_snapshot"]),
        "retrieve_field_history" => Entry::new(
            "Retrieve field history",
            "One field of an entity over valid time (when it was true in the world): \
                its values as intervals [valid_from, valid_to), earliest first, each with the \
                observation and source it came from. Values stored with valid_from/valid_to \
                succeed each other; a field stored without them holds always.",
        )
        .read_only(),
        "list_observations" => Entry::new(
            "List observations",
            "List the observations (what each source said) about one entity, newest \
                first, with their fields, source, priority and specificity. Use it to see how a \
                snapshot was built or what changed. Paginated with limit/offset; returns \
                {observations, total, limit, offset}.",
        )
        .read_only(),
        "retrieve_field_provenance" => Entry::new(
            "Retrieve field provenance",
            "Explain one field of an entity's snapshot: its value, the observation \
                that supplied it (priority, specificity, time), the source material it came from \
                and the interpretation run, if any. Use it to answer 'where does this come from?'.",
        )
        .read_only()
        .aliases(&["get_field_provenance"]),
        "retrieve_entities" => Entry::new(
            "Retrieve entities",
            "List entities, optionally of one `entity_type`, most recently observed \
                first, with their snapshots (include_snapshots, default true). Merged entities are \
                left out unless include_merged. Paginated with limit (max 1000) and offset; returns \
                {entities:[{id, entity_type, canonical_name, snapshot, observation_count, \
                last_observation_at}], total, excluded_merged}. With `search` (free text) it finds \
                entities by their names (typos forgiven), every snapshot value and the names of \
                entities merged into them, best first (then by id), each with relevance_score and \
                matched_fields; search_mode: lexical (words, stems, names with typos), semantic \
                (by meaning: embeddings), hybrid (both, fused by rank) or auto (hybrid when \
                embeddings exist, else lexical); search_method says which mode answered; \
                include_observations also matches values since corrected or outranked and the \
                words of the stored text files an entity was observed from.",
        )
        .read_only(),
        "retrieve_entity_by_identifier" => Entry::new(
            "Find entity by identifier",
            "Find entities by something that identifies them: a name, e-mail, phone \
                number, web site, invoice number… The identifier is normalised (case, spaces, \
                phone and URL forms) and matched against the identity fields of every entity, \
                optionally of one entity_type; when nothing matches exactly, partial matches are \
                returned (match_type tells which).",
        )
        .read_only()
        .aliases(&["get_entity_by_identifier"]),
        "correct" => Entry::new(
            "Correct a field",
            "Fix one field of an entity: records a correction observation (priority \
                1000) that wins over every other observation immediately and stays the truth \
                until corrected again; nothing is deleted. Give entity_id, its entity_type, the \
                schema field and the right value (null clears it). Returns the correction's \
                observation_id.",
        ),
        _ => return None,
    })
}
