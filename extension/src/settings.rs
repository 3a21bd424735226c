//! The extension's settings (GUCs) and who the session is.
//!
//! Every `neotoma.*` setting is defined here, typed, when the library loads;
//! the prefix is then reserved, so a misspelt `SET neotoma.…` is an error
//! instead of a setting nobody reads. Settings that decide what a user may
//! do or reach (the acting user, operator mode, limits, quotas, automatic
//! promotion) are `SUSET`: only superusers and the roles granted `SET` on
//! them may change them (the extension grants `neotoma.user_id` to
//! `neotoma_service` and the rest to `neotoma_operator`). A value set before
//! the library was loaded is re-checked against the role that set it, so a
//! placeholder cannot smuggle a value past these rules.

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_sys;
use std::ffi::{CStr, CString};

pub static USER_ID: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
pub static OPERATOR: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
pub static TOKEN_ID: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
pub static MAX_FILE_BYTES: GucSetting<i32> = GucSetting::<i32>::new(50 * 1024 * 1024);
pub static INTERPRETATION_QUOTA: GucSetting<i32> = GucSetting::<i32>::new(1000);
pub static INTERPRET_MAX_ROWS: GucSetting<i32> = GucSetting::<i32>::new(100_000);
pub static AUTO_PROMOTE: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static AUTO_PROMOTE_MIN_CONSISTENCY: GucSetting<f64> = GucSetting::<f64>::new(0.95);
pub static AUTO_PROMOTE_MIN_SOURCES: GucSetting<i32> = GucSetting::<i32>::new(2);
pub static AUTO_PROMOTE_MIN_OCCURRENCES: GucSetting<i32> = GucSetting::<i32>::new(3);
pub static MODEL_INTERPRETER: GucSetting<bool> = GucSetting::<bool>::new(false);
pub static PUBLIC_URL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
pub static SERVER_VERSION: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
pub static SEMANTIC_PROBES: GucSetting<i32> = GucSetting::<i32>::new(128);
pub static EMBEDDING_MODEL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
pub static QUERY_EMBEDDING_MODEL: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(None);
pub static QUERY_EMBEDDING: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
pub static QUERY_EMBEDDING_ERROR: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(None);

pub static REPLICA_READS: GucSetting<ReplicaReads> =
    GucSetting::<ReplicaReads>::new(ReplicaReads::Off);

/// Where a router runs read-only actions (docs/scale-out.md): on the
/// partition (off), or on its read replica, waiting until the replica has
/// what the partition had when the call began (fresh) or as it is (stale).
#[derive(pgrx::PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum ReplicaReads {
    #[name = c"off"]
    Off,
    #[name = c"fresh"]
    Fresh,
    #[name = c"stale"]
    Stale,
}

/// Defines the settings; called once per backend from `_PG_init`.
pub fn define() {
    use GucContext::{Suset, Userset};
    let none = GucFlags::default();
    GucRegistry::define_string_guc(
        c"neotoma.user_id",
        c"The user this session acts for (a UUID).",
        c"Set per transaction by a trusted role (neotoma_service), e.g. the MCP gateway.",
        &USER_ID,
        Suset,
        none,
    );
    GucRegistry::define_string_guc(
        c"neotoma.token_id",
        c"The API token this session's request came with (a UUID): whose context (set_context) applies.",
        c"Set per transaction by a trusted role (neotoma_service), e.g. the MCP gateway.",
        &TOKEN_ID,
        Suset,
        none,
    );
    GucRegistry::define_string_guc(
        c"neotoma.operator",
        c"on/off: whether this session acts as an operator (overrides role membership).",
        c"Set per transaction by the MCP gateway for operator-scoped tokens; settable by neotoma_operator only.",
        &OPERATOR,
        Suset,
        none,
    );
    GucRegistry::define_int_guc(
        c"neotoma.semantic_probes",
        c"How many lists of embeddings a semantic search reads, the nearest its query (0: every embedding, exactly).",
        c"A user's embeddings fall into lists once they are many (neotoma.index_embeddings); more lists read find more of the true nearest, slower.",
        &SEMANTIC_PROBES,
        0,
        4096,
        Userset,
        none,
    );
    GucRegistry::define_int_guc(
        c"neotoma.max_file_bytes",
        c"Largest file store accepts, in bytes.",
        c"",
        &MAX_FILE_BYTES,
        1,
        i32::MAX,
        Suset,
        none,
    );
    GucRegistry::define_int_guc(
        c"neotoma.interpretation_quota",
        c"Interpretation runs per user and calendar month (0: unlimited).",
        c"",
        &INTERPRETATION_QUOTA,
        0,
        i32::MAX,
        Suset,
        none,
    );
    GucRegistry::define_int_guc(
        c"neotoma.interpret_max_rows",
        c"Most rows (records) a built-in interpreter reads from one file.",
        c"Past it, interpretation fails with a clear reason; the file stays stored.",
        &INTERPRET_MAX_ROWS,
        1,
        i32::MAX,
        Suset,
        none,
    );
    GucRegistry::define_bool_guc(
        c"neotoma.auto_promote",
        c"Promote fields raw_fragments keep showing into the user's schema automatically.",
        c"",
        &AUTO_PROMOTE,
        Suset,
        none,
    );
    GucRegistry::define_float_guc(
        c"neotoma.auto_promote_min_consistency",
        c"Share of a field's values that must have one type for automatic promotion.",
        c"",
        &AUTO_PROMOTE_MIN_CONSISTENCY,
        0.0,
        1.0,
        Suset,
        none,
    );
    GucRegistry::define_int_guc(
        c"neotoma.auto_promote_min_sources",
        c"Distinct sources a field must come from for automatic promotion.",
        c"",
        &AUTO_PROMOTE_MIN_SOURCES,
        1,
        i32::MAX,
        Suset,
        none,
    );
    GucRegistry::define_int_guc(
        c"neotoma.auto_promote_min_occurrences",
        c"Occurrences a field needs for automatic promotion.",
        c"",
        &AUTO_PROMOTE_MIN_OCCURRENCES,
        1,
        i32::MAX,
        Suset,
        none,
    );
    GucRegistry::define_bool_guc(
        c"neotoma.model_interpreter",
        c"A gateway with a model interpreter serves this session (files no built-in reader knows are left pending for it).",
        c"",
        &MODEL_INTERPRETER,
        Userset,
        none,
    );
    GucRegistry::define_string_guc(
        c"neotoma.public_url",
        c"Base URL of signed file URLs.",
        c"",
        &PUBLIC_URL,
        Userset,
        none,
    );
    GucRegistry::define_string_guc(
        c"neotoma.server_version",
        c"Version of the MCP gateway serving this session (get_version).",
        c"",
        &SERVER_VERSION,
        Userset,
        none,
    );
    GucRegistry::define_string_guc(
        c"neotoma.embedding_model",
        c"The embedding model's directory; empty: the built-in potion-base-8M; off: no embeddings.",
        c"A model2vec directory (tokenizer.json, model.safetensors, config.json) on the database server; \
          the built-in one is in $sharedir/neotoma/models/potion-base-8M (scripts/install-model).",
        &EMBEDDING_MODEL,
        Suset,
        none,
    );
    // A search's query embedded by the gateway's remote provider, for the
    // call (set_config(.., true)): only ranks the session's own rows.
    GucRegistry::define_string_guc(
        c"neotoma.query_embedding_model",
        c"The model of neotoma.query_embedding (a gateway's embeddings provider).",
        c"",
        &QUERY_EMBEDDING_MODEL,
        Userset,
        none,
    );
    GucRegistry::define_string_guc(
        c"neotoma.query_embedding",
        c"A search query's embedding by neotoma.query_embedding_model, as a JSON array of numbers.",
        c"",
        &QUERY_EMBEDDING,
        Userset,
        none,
    );
    GucRegistry::define_string_guc(
        c"neotoma.query_embedding_error",
        c"Why the gateway's embeddings provider gave no query embedding.",
        c"",
        &QUERY_EMBEDDING_ERROR,
        Userset,
        none,
    );
    GucRegistry::define_enum_guc(
        c"neotoma.replica_reads",
        c"On a router: read-only actions on the partition (off) or its read replica (fresh: as \
          up to date as the partition when the call began, else refused; stale: as it is).",
        c"docs/scale-out.md, Read replicas.",
        &REPLICA_READS,
        Userset,
        none,
    );
    // SAFETY: a plain call into Postgres during _PG_init.
    unsafe { pg_sys::MarkGUCPrefixReserved(c"neotoma".as_ptr()) };
}

/// A string setting's value; None when unset or empty.
pub fn text(setting: &GucSetting<Option<CString>>) -> Option<String> {
    setting
        .get()
        .and_then(|c| c.into_string().ok())
        .filter(|s| !s.trim().is_empty())
}

/// The token of the session's request (`neotoma.token_id`), when it is a
/// UUID.
pub fn token_id() -> Option<String> {
    text(&TOKEN_ID).filter(|t| uuid::Uuid::parse_str(t.trim()).is_ok())
}

/// Any setting by name (other extensions' too), None when unset or empty.
pub fn named(name: &CStr) -> Option<String> {
    // SAFETY: GetConfigOption with missing_ok answers NULL or a string
    // owned by the GUC machinery, which is copied at once.
    let raw = unsafe { pg_sys::GetConfigOption(name.as_ptr(), true, false) };
    if raw.is_null() {
        return None;
    }
    // SAFETY: a non-null answer is a NUL-terminated C string.
    let value = unsafe { CStr::from_ptr(raw) }
        .to_string_lossy()
        .into_owned();
    (!value.trim().is_empty()).then_some(value)
}

/// Whether `role` exists and the current role has its privileges (superusers
/// have every role's).
fn has_role(role: &CStr, outer: bool) -> bool {
    // SAFETY: plain catalog lookups; a missing role answers InvalidOid.
    unsafe {
        let oid = pg_sys::get_role_oid(role.as_ptr(), true);
        let me = if outer {
            pg_sys::GetOuterUserId()
        } else {
            pg_sys::GetUserId()
        };
        if pg_sys::superuser_arg(me) {
            return true;
        }
        oid != pg_sys::InvalidOid && pg_sys::has_privs_of_role(me, oid)
    }
}

/// Trusted to name the user it acts for (`user_id` argument): a role that
/// may set `neotoma.user_id`, which could name any user anyway. That is
/// superusers and `neotoma_service` (with `neotoma_operator`), and roles
/// granted the privilege directly: Supabase's NOINHERIT `service_role`
/// (security.sql, `grant_platform_roles`).
pub fn trusted() -> bool {
    // SAFETY: a catalog lookup of a parameter's ACL for the current role.
    unsafe {
        pg_sys::pg_parameter_aclcheck(
            c"neotoma.user_id".as_ptr(),
            pg_sys::GetUserId(),
            pg_sys::ACL_SET as pg_sys::AclMode,
        ) == pg_sys::AclResult::ACLCHECK_OK
    }
}

/// Is the MCP gateway (or runs as it): a superuser or a member of
/// `neotoma_service`. Narrower than [`trusted`]: Supabase's `service_role`
/// may name users but is not the gateway, so it gets no connector secrets
/// and cannot record what a provider answered.
pub fn gateway() -> bool {
    has_role(c"neotoma_service", false)
}

thread_local! {
    /// Whether the action running is a router's call (neotoma.routed).
    static ROUTED_CALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` as a router's call: what [`routed_call`] answers meanwhile.
pub fn as_routed_call<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ROUTED_CALL.set(self.0);
        }
    }
    let _restore = Restore(ROUTED_CALL.replace(true));
    f()
}

/// Whether the action running was sent by a router (crate::routing): it
/// then answers what the router combines (product analytics' counters).
pub fn routed_call() -> bool {
    ROUTED_CALL.get()
}

/// A router's role (a member of `neotoma_router`): may run actions on
/// this partition for the user it names (`neotoma.routed`).
pub fn router() -> bool {
    has_role(c"neotoma_router", false)
}

/// Acts as an operator: may change what all users share (global schemas).
/// The setting `neotoma.operator`, when set (only operators can), decides;
/// otherwise membership of `neotoma_operator`. With `outer`, the role that
/// called into a SECURITY DEFINER function is asked, not its owner.
pub fn operator(outer: bool) -> bool {
    match text(&OPERATOR).as_deref().map(str::trim) {
        Some(v) => matches!(v.to_ascii_lowercase().as_str(), "on" | "true" | "1" | "yes"),
        None => has_role(c"neotoma_operator", outer),
    }
}
