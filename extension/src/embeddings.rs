//! Embeddings of entities and queries, by the embedding model of the
//! database server (neotoma_embed; `neotoma.embedding_model` chooses it,
//! the built-in potion-base-8M by default). Each backend loads the model
//! once, on first use. Entities' embeddings live in
//! `neotoma.entity_embeddings`, kept with their snapshots by triggers
//! (sql/embeddings.sql), so an entity is found by meaning in the
//! transaction that stored it.

use crate::settings;
use neotoma_embed::StaticModel;
use pgrx::prelude::*;
use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::CStr;
use std::path::PathBuf;
use std::rc::Rc;

/// The built-in model, in the server's share directory.
pub const BUILT_IN: &str = "potion-base-8M";

/// Why there is no model (said to clients: names no server path).
pub const NO_MODEL: &str = "no embedding model is installed on this database server";

/// A model as loaded (or why it could not be).
type Loaded = Rc<Result<StaticModel, String>>;

thread_local! {
    /// The model loaded, and the directory it was loaded from.
    static LOADED: RefCell<Option<(PathBuf, Loaded)>> = const { RefCell::new(None) };
}

/// The directory `neotoma.embedding_model` names; None when off.
fn model_dir() -> Option<PathBuf> {
    match settings::text(&settings::EMBEDDING_MODEL)
        .as_deref()
        .map(str::trim)
    {
        Some("off") => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(share_dir().join("neotoma/models").join(BUILT_IN)),
    }
}

/// Postgres's share directory ($sharedir), as pg_config --sharedir says.
fn share_dir() -> PathBuf {
    let mut buf = [0 as std::ffi::c_char; pg_sys::MAXPGPATH as usize];
    // SAFETY: my_exec_path is the backend's executable path, set at start;
    // get_share_path writes at most MAXPGPATH bytes, NUL-terminated.
    unsafe {
        pg_sys::get_share_path(
            &raw const pg_sys::my_exec_path as *const _,
            buf.as_mut_ptr(),
        );
        PathBuf::from(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned())
    }
}

/// The model, loaded once per backend and directory; None when off or not
/// installed (the reason goes to the server log once).
pub fn model() -> Option<Loaded> {
    let dir = model_dir()?;
    LOADED.with(|cell| {
        let mut cell = cell.borrow_mut();
        if let Some((loaded, model)) = cell.as_ref() {
            if *loaded == dir {
                return Some(model.clone());
            }
        }
        let model = Rc::new(StaticModel::load(&dir));
        if let Err(e) = model.as_ref() {
            pgrx::log!("neotoma: embedding model {}: {e}", dir.display());
        }
        *cell = Some((dir, model.clone()));
        Some(model)
    })
}

/// Runs `f` with the model, when there is one.
pub fn with_model<T>(f: impl FnOnce(&StaticModel) -> T) -> Option<T> {
    let model = model()?;
    model.as_ref().as_ref().ok().map(f)
}

/// The embedding of an entity (its type, name and fields, as
/// neotoma_core::search::embedding_text writes them), by the current model;
/// NULL without a model or without a word the model knows.
#[pg_extern(stable, parallel_safe, name = "_entity_embedding")]
fn entity_embedding(entity_type: &str, snapshot: pgrx::JsonB) -> Option<Vec<f32>> {
    let text = neotoma_core::search::embedding_text(entity_type, &snapshot.0);
    with_model(|m| m.embed(&text)).flatten()
}

/// The text an entity's embeddings are made of (by any model).
#[pg_extern(immutable, parallel_safe, strict, name = "_embedding_text")]
fn embedding_text(entity_type: &str, snapshot: pgrx::JsonB) -> String {
    neotoma_core::search::embedding_text(entity_type, &snapshot.0)
}

/// The name of the embedding model in use; NULL when there is none.
#[pg_extern(stable, parallel_safe, name = "_embedding_model")]
fn embedding_model() -> Option<String> {
    with_model(|m| m.name().to_string())
}

/// Cosine similarity of two embeddings (0 when their sizes differ).
#[pg_extern(immutable, parallel_safe, strict, name = "_cosine")]
fn cosine(a: pgrx::Array<f32>, b: pgrx::Array<f32>) -> f64 {
    neotoma_embed::cosine(&values(&a), &values(&b))
}

/// The compact copy of an embedding a search scans (neotoma_embed::codes);
/// NULL for one that cannot have one (more than 3,072 components, zero).
#[pg_extern(immutable, parallel_safe, strict, name = "_embedding_code")]
fn embedding_code(embedding: pgrx::Array<f32>) -> Option<Vec<u8>> {
    neotoma_embed::codes::encode(&values(&embedding))
}

/// The cosine of a query with the embedding a code was made of, within
/// the code's rounding: how a search picks what it compares exactly.
#[pg_extern(immutable, parallel_safe, strict, name = "_code_similarity")]
fn code_similarity(code: &[u8], query: pgrx::Array<f32>) -> f64 {
    let query = values(&query);
    PREPARED_QUERY.with(|kept| {
        let mut kept = kept.borrow_mut();
        if !kept.as_ref().is_some_and(|(v, _)| v[..] == query[..]) {
            *kept = Some((query.to_vec(), neotoma_embed::codes::Query::new(&query)));
        }
        kept.as_ref().map_or(0.0, |(_, q)| q.similarity(code))
    })
}

thread_local! {
    /// The query `_code_similarity` last scored, prepared once: a search
    /// scores each code written since its list was packed with the same
    /// query, one call a code.
    static PREPARED_QUERY: RefCell<Option<(Vec<f32>, neotoma_embed::codes::Query)>> =
        const { RefCell::new(None) };
}

/// An array's values, in place when it has no NULLs, else copied with
/// its NULLs as zeros.
pub(crate) fn values<'a>(a: &'a pgrx::Array<f32>) -> Cow<'a, [f32]> {
    match a.as_slice() {
        Ok(v) => Cow::Borrowed(v),
        Err(_) => Cow::Owned(a.iter().map(|x| x.unwrap_or(0.0)).collect()),
    }
}

/// A query's embedding and the model's name, or why there is none: the
/// remote provider's when the gateway computed it (`neotoma.query_embedding`
/// and `neotoma.query_embedding_model`, set for the call), else the server
/// model's.
pub fn query_embedding(query: &str) -> Result<(Vec<f32>, String), String> {
    if let Some(remote) = remote_query_embedding()? {
        return Ok(remote);
    }
    match with_model(|m| (m.embed(query), m.name().to_string())) {
        None => Err(NO_MODEL.to_string()),
        Some((None, _)) => Err("the embedding model knows no word of the query".to_string()),
        Some((Some(v), name)) => Ok((v, name)),
    }
}

/// The query embedding a gateway's provider computed, if it did.
fn remote_query_embedding() -> Result<Option<(Vec<f32>, String)>, String> {
    let (Some(model), Some(vector)) = (
        settings::text(&settings::QUERY_EMBEDDING_MODEL),
        settings::text(&settings::QUERY_EMBEDDING),
    ) else {
        return Ok(None);
    };
    match serde_json::from_str::<Vec<f32>>(&vector) {
        Ok(v) if !v.is_empty() && v.iter().all(|x| x.is_finite()) => Ok(Some((v, model))),
        _ => Err("the query embedding the gateway sent is not a list of numbers".to_string()),
    }
}

/// Why the gateway's provider gave no query embedding, when it did not.
pub fn remote_query_error() -> Option<String> {
    settings::text(&settings::QUERY_EMBEDDING_ERROR)
}
