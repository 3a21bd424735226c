//! Semantic search at scale: a user's embeddings by one model, once they
//! are many, fall into lists around centroids (`neotoma.embedding_lists`,
//! neotoma_embed::lists), and a search reads only the lists nearest its
//! query (sql/embeddings.sql, sql/queries/search_entities.sql). Here: which
//! list an embedding falls in (kept with every embedding written, by a
//! trigger), and building the lists of one user and model.

use crate::db::{self, Arg};
use neotoma_core::NeotomaError;
use neotoma_embed::{codes, lists};
use pgrx::prelude::*;
use std::cell::RefCell;
use uuid::Uuid;

/// Rounds of k-means over the sample.
const ROUNDS: usize = 8;
/// Sampled embeddings per list the centroids are trained on.
const SAMPLE_PER_LIST: usize = 64;
/// The most lists of one user and model.
const MAX_LISTS: usize = 4096;

/// The centroids of one user and model as last read, with the build they
/// belong to and the statement that last checked that build is current.
struct Cached {
    user: Uuid,
    model: String,
    build: i64,
    checked: (i64, u32),
    centroids: Vec<Vec<f32>>,
}

thread_local! {
    static CACHED: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// This statement (its transaction's start and command): a build another
/// transaction commits is seen from the next statement on.
fn statement() -> (i64, u32) {
    // SAFETY: reads the current transaction's command counter.
    let command = unsafe { pg_sys::GetCurrentCommandId(false) };
    (db::transaction_start_micros(), command)
}

/// The current build of the user's lists by `model` (its stamp), if any.
fn current_build(user: &Uuid, model: &str) -> Result<Option<i64>, NeotomaError> {
    let v = db::json(
        "SELECT to_jsonb(l.build) FROM neotoma.embedding_lists l
         WHERE l.user_id = $1 AND l.model = $2 AND l.list_no = 0",
        &[Arg::uuid(user), Arg::Text(model)],
    )?;
    Ok(v.as_i64())
}

/// The index of the list `embedding` falls in, by the user's lists of
/// `model`; None while they have none. The centroids are read again only
/// when the build changed, and whether it did once per statement.
fn list_of(user: Uuid, model: &str, embedding: &[f32]) -> Result<Option<usize>, NeotomaError> {
    let now = statement();
    let mine = |c: &Cached| c.user == user && c.model == model;
    let checked = CACHED.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|c| mine(c) && c.checked == now)
    });
    if !checked {
        let Some(build) = current_build(&user, model)? else {
            CACHED.with(|c| c.take());
            return Ok(None);
        };
        let kept = CACHED.with(|c| {
            let mut c = c.borrow_mut();
            let kept = c.as_mut().filter(|c| mine(c) && c.build == build);
            kept.map(|c| c.checked = now).is_some()
        });
        if !kept {
            let centroids = db::vectors(
                "SELECT l.centroid FROM neotoma.embedding_lists l
                 WHERE l.user_id = $1 AND l.model = $2 ORDER BY l.list_no",
                &[Arg::uuid(user), Arg::Text(model)],
            )?;
            let model = model.to_string();
            CACHED.with(|c| {
                c.replace(Some(Cached {
                    user,
                    model,
                    build,
                    checked: now,
                    centroids,
                }))
            });
        }
    }
    let v = lists::unit(embedding);
    Ok(CACHED.with(|c| {
        c.borrow()
            .as_ref()
            .and_then(|c| lists::nearest(&c.centroids, &v))
    }))
}

/// The list an embedding of the user by `model` falls in (NULL while the
/// user has no lists of that model). The trigger on
/// `neotoma.entity_embeddings` keeps it with every embedding written.
#[pg_extern(stable, parallel_safe, strict, name = "_embedding_list")]
fn embedding_list(user_id: pgrx::datum::Uuid, model: &str, embedding: Vec<f32>) -> Option<i32> {
    let user = Uuid::from_bytes(*user_id.as_bytes());
    match list_of(user, model, &embedding) {
        Ok(list) => list.map(|i| i as i32),
        Err(e) => crate::error::raise(&e),
    }
}

/// The `n` likest by their codes to `query` of the user's embeddings by
/// `model` packed in the lists `lists` (neotoma.embedding_list_codes; of
/// `entity_type` when given): ids and code similarities, likest first, ties
/// by id. Each list is one row whose codes are scored in one loop: scanned
/// as an index entry and a function call each, a code took 0.5 µs (47 ms
/// for the 88,000 codes of 80 lists at a million). Row level security
/// applies as to any read: the session's user's lists only. Nothing for a
/// NULL argument.
#[pg_extern(stable, parallel_safe, name = "_nearest_codes")]
fn nearest_codes(
    user_id: Option<pgrx::datum::Uuid>,
    model: Option<&str>,
    lists: Option<Vec<i32>>,
    query: Option<pgrx::Array<f32>>,
    entity_type: Option<&str>,
    n: Option<i64>,
) -> TableIterator<'static, (name!(entity_id, String), name!(similarity, f64))> {
    let (Some(user), Some(model), Some(lists), Some(query), Some(n)) =
        (user_id, model, lists, query, n)
    else {
        return TableIterator::new(vec![]);
    };
    let user = Uuid::from_bytes(*user.as_bytes());
    let query = crate::embeddings::values(&query);
    match nearest(&user, model, &lists, &query, entity_type, n.max(0) as usize) {
        Ok(rows) => TableIterator::new(rows),
        Err(e) => crate::error::raise(&e),
    }
}

fn nearest(
    user: &Uuid,
    model: &str,
    lists: &[i32],
    query: &[f32],
    entity_type: Option<&str>,
    n: usize,
) -> Result<Vec<(String, f64)>, NeotomaError> {
    let q = codes::Query::new(query);
    let size = codes::code_len(query.len());
    let mut best = codes::Nearest::new(n);
    db::rows(
        "SELECT c.entity_ids, c.entity_types, c.codes FROM neotoma.embedding_list_codes c
         WHERE c.user_id = $1 AND c.model = $2 AND c.list_no = ANY ($3)",
        &[Arg::uuid(user), Arg::Text(model), Arg::Ints(lists)],
        |rows| {
            for row in rows {
                let (Some(ids), Some(types), Some(packed)) = (
                    row.get::<pgrx::Array<&str>>(1)?,
                    row.get::<pgrx::Array<&str>>(2)?,
                    row.get::<&[u8]>(3)?,
                ) else {
                    continue;
                };
                // Codes of another length are of vectors of another size:
                // none is like the query (as codes::similarity answers 0).
                if packed.len() != ids.len() * size {
                    continue;
                }
                for ((id, t), code) in ids.iter().zip(types.iter()).zip(packed.chunks_exact(size)) {
                    let (Some(id), Some(t)) = (id, t) else {
                        continue;
                    };
                    if entity_type.is_none_or(|wanted| wanted == t) {
                        best.offer(q.similarity(code), id);
                    }
                }
            }
            Ok(())
        },
    )?;
    Ok(best.into_sorted())
}

/// Builds the user's lists of `model` anew: with fewer than
/// `min_embeddings` embeddings there are none (every search reads them
/// all); else about √n lists, trained on a sample (the embeddings in order
/// of a hash of their entity ids), every embedding moved to its nearest,
/// and every list's codes packed. Answers {model, embeddings, lists}. Callers: the SQL functions
/// index_embeddings and maintain_embedding_lists (sql/embeddings.sql).
#[pg_extern(
    volatile,
    parallel_unsafe,
    strict,
    name = "_build_embedding_lists",
    schema = "neotoma_private"
)]
#[search_path(pg_catalog, neotoma, pg_temp)]
fn build_embedding_lists(
    user_id: pgrx::datum::Uuid,
    model: &str,
    min_embeddings: i32,
) -> pgrx::JsonB {
    let user = Uuid::from_bytes(*user_id.as_bytes());
    match build(&user, model, min_embeddings.max(1) as usize) {
        Ok(v) => pgrx::JsonB(v),
        Err(e) => crate::error::raise(&e),
    }
}

fn build(user: &Uuid, model: &str, min: usize) -> Result<serde_json::Value, NeotomaError> {
    let u = || Arg::uuid(user);
    let n = db::json(
        "SELECT to_jsonb(count(*)) FROM neotoma.entity_embeddings v WHERE v.user_id = $1 AND v.model = $2",
        &[u(), Arg::Text(model)],
    )?
    .as_i64()
    .unwrap_or(0) as usize;
    db::run(
        "DELETE FROM neotoma.embedding_lists l WHERE l.user_id = $1 AND l.model = $2",
        &[u(), Arg::Text(model)],
    )?;
    let k = if n < min {
        0
    } else {
        lists::list_count(n, MAX_LISTS)
    };
    if k > 0 {
        let sample: Vec<Vec<f32>> = db::vectors(
            "SELECT v.embedding FROM neotoma.entity_embeddings v WHERE v.user_id = $1 AND v.model = $2
             ORDER BY md5(v.entity_id), v.entity_id LIMIT $3",
            &[u(), Arg::Text(model), Arg::Int((k * SAMPLE_PER_LIST) as i64)],
        )?
        .iter()
        .map(|v| lists::unit(v))
        .collect();
        let centroids = lists::train(&sample, k, ROUNDS);
        // The build's stamp: what tells a backend's kept centroids are old.
        let stamp = db::json(
            "SELECT to_jsonb((extract(epoch FROM clock_timestamp()) * 1000000)::bigint)",
            &[],
        )?;
        for (i, c) in centroids.iter().enumerate() {
            db::run(
                "INSERT INTO neotoma.embedding_lists (user_id, model, list_no, centroid, build)
                 VALUES ($1, $2, $3::int, $4, ($5::jsonb)::bigint)",
                &[
                    u(),
                    Arg::Text(model),
                    Arg::Int(i as i64),
                    Arg::OptReals(Some(c)),
                    Arg::Json(&stamp),
                ],
            )?;
        }
    }
    // Every embedding to its list (none without lists), writing only those
    // that move, one list at a time: the rows written go to the table's
    // free space in that order, so a list's rows share pages and a search
    // reads a few pages per list instead of one per row (measured at 50,000
    // embeddings, 16 lists read: 3,087 pages scattered, 599 grouped).
    let moving = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_array(g.list_no, g.ids) ORDER BY g.list_no NULLS FIRST), '[]')
         FROM (SELECT m.list_no, array_agg(m.entity_id ORDER BY m.entity_id) AS ids
               FROM (SELECT x.entity_id, x.list_no AS was,
                            neotoma._embedding_list(x.user_id, x.model, x.embedding) AS list_no
                     FROM neotoma.entity_embeddings x WHERE x.user_id = $1 AND x.model = $2) m
               WHERE m.was IS DISTINCT FROM m.list_no
               GROUP BY m.list_no) g",
        &[u(), Arg::Text(model)],
    )?;
    let moving: Vec<(Option<i64>, Vec<String>)> = db::from_json(moving, "lists")?;
    // A moved embedding is marked packed as it moves: its list's row,
    // packed below in this transaction, holds its code (the row stays
    // locked until then), so a first build writes each row once, not
    // twice. (The previous release's SQL, which this library serves until
    // the update, has no packed lists: its searches score every code.)
    let packs = crate::installed::is_current();
    let moves = if packs {
        "UPDATE neotoma.entity_embeddings v
         SET list_no = $3::int, packed = ($3::int IS NOT NULL AND v.code IS NOT NULL)
         WHERE v.user_id = $1 AND v.model = $2 AND v.entity_id = ANY($4)"
    } else {
        "UPDATE neotoma.entity_embeddings v SET list_no = $3::int
         WHERE v.user_id = $1 AND v.model = $2 AND v.entity_id = ANY($4)"
    };
    for (list, ids) in moving {
        db::run(
            moves,
            &[u(), Arg::Text(model), Arg::OptInt(list), Arg::Texts(ids)],
        )?;
    }
    if packs {
        db::run(
            "SELECT neotoma_private._pack_list_codes($1, $2, NULL)",
            &[u(), Arg::Text(model)],
        )?;
    }
    Ok(serde_json::json!({"model": model, "embeddings": n, "lists": k}))
}
