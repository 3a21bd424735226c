//! The `neotoma` Postgres extension: the truth model of Neotoma inside the
//! database. One SQL function per action (`neotoma.<action>(jsonb)`), created
//! from the action catalog; the logic lives in the pure `neotoma-core` crate
//! and the modules here are the thin layer that talks to Postgres.

use pgrx::prelude::*;

::pgrx::pg_module_magic!(name, version);

mod actions;
mod call_local;
mod catalog;
mod crypto;
mod db;
mod embedding_lists;
mod embeddings;
mod error;
mod evolution;
mod ids;
mod ingest;
mod installed;
mod lifecycle;
mod owner;
mod registry;
mod routing;
mod scope;
mod search;
mod settings;
mod snapshots;
mod statistics;
mod tenancy;

/// The schema of the SECURITY DEFINER functions (base.sql creates it, first):
/// declared so that `#[pg_extern(schema = "neotoma_private")]` can name it.
#[pg_schema]
mod neotoma_private {}

// The DDL, one file per concern (sql/base.sql lists them), in
// dependency order: tables before the SQL functions and views that read
// them, the Rust functions a file calls before it, security.sql last.
extension_sql_file!("../../sql/base.sql", name = "base", bootstrap);
extension_sql_file!(
    "../../sql/sources.sql",
    name = "sources",
    requires = ["base"]
);
extension_sql_file!(
    "../../sql/entities.sql",
    name = "entities",
    requires = [
        "sources",
        snapshots::apply_observation_batch,
        snapshots::store_folding,
        tenancy::calling_token
    ]
);
extension_sql_file!(
    "../../sql/schemas.sql",
    name = "schemas",
    requires = [
        "base",
        registry::builtin_schema_rows,
        tenancy::current_user_id,
        tenancy::session_is_operator
    ]
);
extension_sql_file!(
    "../../sql/counts.sql",
    name = "counts",
    requires = ["entities"]
);
extension_sql_file!(
    "../../sql/graph.sql",
    name = "graph",
    requires = ["entities"]
);
extension_sql_file!(
    "../../sql/timeline.sql",
    name = "timeline",
    requires = ["entities", tenancy::current_user_id]
);
extension_sql_file!(
    "../../sql/files.sql",
    name = "files",
    requires = [
        "sources",
        tenancy::current_user_id,
        crypto::hmac_sha256,
        crypto::hmac_sha256_verify,
        crypto::random_bytes
    ]
);
extension_sql_file!(
    "../../sql/tokens.sql",
    name = "tokens",
    requires = ["base", tenancy::current_user_id]
);
extension_sql_file!(
    "../../sql/connectors.sql",
    name = "connectors",
    requires = ["base"]
);
extension_sql_file!(
    "../../sql/actions.sql",
    name = "actions",
    requires = ["base", catalog::invoke_text]
);
extension_sql_file!(
    "../../sql/views.sql",
    name = "views",
    requires = [
        "entities",
        "graph",
        "timeline",
        "schemas",
        tenancy::current_user_id
    ]
);
extension_sql_file!(
    "../../sql/annotations.sql",
    name = "annotations",
    requires = ["entities"]
);
extension_sql_file!(
    "../../sql/confidence.sql",
    name = "confidence",
    requires = ["entities"]
);
extension_sql_file!(
    "../../sql/lifecycle.sql",
    name = "lifecycle",
    requires = [
        "entities",
        "graph",
        "schemas",
        "annotations",
        "confidence",
        "workspaces",
        "graph_servers"
    ]
);
extension_sql_file!(
    "../../sql/statistics.sql",
    name = "statistics",
    requires = ["entities", "counts", "graph", "timeline", "files"]
);
extension_sql_file!(
    "../../sql/search.sql",
    name = "search",
    requires = [
        "entities",
        "files",
        search::name_trigrams,
        search::name_variants,
        search::file_text
    ]
);
extension_sql_file!(
    "../../sql/embeddings.sql",
    name = "embeddings",
    requires = [
        "entities",
        embeddings::entity_embedding,
        embeddings::embedding_model,
        embeddings::embedding_text,
        embeddings::embedding_code,
        embedding_lists::embedding_list,
        embedding_lists::build_embedding_lists
    ]
);
extension_sql_file!(
    "../../sql/contradictions.sql",
    name = "contradictions",
    requires = [
        "views",
        "lifecycle",
        actions::contradictions::contradictions_view
    ]
);
extension_sql_file!(
    "../../sql/workspaces.sql",
    name = "workspaces",
    requires = ["search", "embeddings", "tokens"]
);
extension_sql_file!(
    "../../sql/search_grams.sql",
    name = "search_grams",
    requires = [
        "workspaces",
        "search",
        search::text_grams,
        search::value_grams
    ]
);
extension_sql_file!(
    "../../sql/valid_time.sql",
    name = "valid_time",
    requires = ["search_grams"]
);
extension_sql_file!(
    "../../sql/word_postings.sql",
    name = "word_postings",
    requires = ["workspaces", "search", "embeddings"]
);
extension_sql_file!(
    "../../sql/graph_servers.sql",
    name = "graph_servers",
    requires = ["entities", "schemas", "workspaces"]
);
extension_sql_file!(
    "../../sql/oauth.sql",
    name = "oauth",
    requires = ["tokens", "workspaces"]
);
extension_sql_file!(
    "../../sql/inspector.sql",
    name = "inspector",
    requires = ["tokens", "oauth"]
);
extension_sql_file!("../../sql/security.sql", name = "security", finalize);

/// Runs once per backend, when the library is loaded: defines the settings.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // An error's detail is the action's envelope, never a Rust backtrace,
    // whatever the server's environment says (Rust reads these once, at
    // the first backtrace, which has not happened yet).
    std::env::set_var("RUST_BACKTRACE", "0");
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
    settings::define();
}
