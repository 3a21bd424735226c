//! Search of the user's entities, ranked by how well they match
//! (sql/queries/search_entities.sql; the query's forms and the mode in
//! neotoma_core::search): `retrieve_entities` with `search`, and
//! `search_subgraph`, which chooses what is matched.

use crate::db::{self, Arg};
use neotoma_core::actions::common;
use neotoma_core::actions::entities::{RetrieveEntitiesRequest, RetrieveEntitiesResponse};
use neotoma_core::search::{
    self, Answering, SearchMode, FUZZY_NAME_CANDIDATES, NAME_THRESHOLD, RARE_TERM_ENTITIES, RRF_K,
    SEMANTIC_CANDIDATES, SEMANTIC_THRESHOLD,
};
use neotoma_core::NeotomaError;
use uuid::Uuid;

const SEARCH_ENTITIES: &str = include_str!("../../../sql/queries/search_entities.sql");

/// What a search matches and answers.
pub struct Search<'a> {
    pub text: &'a str,
    pub mode: SearchMode,
    pub entity_type: Option<&'a str>,
    pub limit: i64,
    pub offset: i64,
    pub include_merged: bool,
    pub include_deleted: bool,
    pub include_snapshots: bool,
    /// Every snapshot value (full text).
    pub in_values: bool,
    /// Every observation's values (full text), superseded ones too.
    pub in_observations: bool,
    /// Names, typos forgiven.
    pub in_names: bool,
    /// Names of entities merged into others count for those.
    pub in_aliases: bool,
    /// The query names a type: its entities match (weakly).
    pub in_types: bool,
}

/// `retrieve_entities` with `search`.
pub fn search_entities(
    user: Uuid,
    req: &RetrieveEntitiesRequest,
    text: &str,
) -> Result<RetrieveEntitiesResponse, NeotomaError> {
    let (limit, offset) = common::page(req.limit, req.offset)?;
    run(
        user,
        &Search {
            text,
            mode: req.search_mode.unwrap_or_default(),
            entity_type: req.entity_type.as_deref(),
            limit,
            offset,
            include_merged: req.include_merged.unwrap_or(false),
            include_deleted: req.include_deleted.unwrap_or(false),
            include_snapshots: req.include_snapshots.unwrap_or(true),
            in_values: true,
            // Values whose validity ended are no longer in the snapshots:
            // found in the observations.
            in_observations: req.include_observations.unwrap_or(false)
                || req.current_only == Some(false),
            in_names: true,
            in_aliases: true,
            in_types: false,
        },
    )
}

/// Runs a search: the page of matches, best first, with the total and the
/// mode that answered.
pub fn run(user: Uuid, s: &Search) -> Result<RetrieveEntitiesResponse, NeotomaError> {
    let q = search::check_query(s.text)?;
    let semantic = match s.mode {
        SearchMode::Lexical => Err("lexical search was asked for".to_string()),
        _ => semantic_query(user, q),
    };
    let (method, mut fallback) =
        search::answering_mode(s.mode, semantic.as_ref().err().map(String::as_str));
    let (embedding, model) = match semantic.ok().filter(|_| method != Answering::Lexical) {
        Some((v, m)) => (Some(v), Some(m)),
        None => (None, None),
    };
    // The gateway's provider failed and the server's model answered instead.
    if let (Some(why), Some(m)) = (crate::embeddings::remote_query_error(), &model) {
        fallback.get_or_insert(format!("{why}: answered with the model {m}"));
    }
    let lexical = method != Answering::Semantic;
    let flag = |b: bool| if b { "true" } else { "false" };
    let scope = crate::scope::current();
    let mut answer: RetrieveEntitiesResponse = if search::has_words(q) {
        let question = neotoma_core::question::read(q);
        let grams = search::query_trigrams(q);
        let threshold = NAME_THRESHOLD.to_string();
        let semantic_threshold = SEMANTIC_THRESHOLD.to_string();
        let type_name = (lexical && s.in_types).then(|| search::type_name(q));
        // Only hybrid search ranks by places: the other modes skip the
        // two window sorts over every match.
        let other_mode = match method {
            Answering::Hybrid => "-- mode:single",
            _ => "-- mode:hybrid",
        };
        // (A line may also end `-- new`: its mode's mark is anywhere in it.)
        let query = crate::installed::without_lines(&scope.adapt(SEARCH_ENTITIES)?, |l| {
            l.contains(other_mode)
        });
        db::quietly(|| {
            db::with_generic_index_plans(|| {
                db::parsed(
                    &query,
                    &[
                        Arg::uuid(user),
                        Arg::Texts(grams),
                        Arg::OptText(s.entity_type),
                        Arg::Text(flag(s.include_merged)),
                        Arg::Text(flag(s.include_deleted)),
                        Arg::Text(flag(s.include_snapshots)),
                        Arg::Int(s.limit),
                        Arg::Int(s.offset),
                        Arg::Text(&threshold),
                        Arg::Text(flag(lexical && s.in_values)),
                        Arg::Text(flag(lexical && s.in_names)),
                        Arg::Text(flag(s.in_aliases)),
                        Arg::OptText(type_name.as_deref()),
                        Arg::OptReals(embedding.as_deref()),
                        Arg::Text(&semantic_threshold),
                        Arg::Text(method.as_str()),
                        Arg::Int(RRF_K),
                        Arg::OptText(model.as_deref()),
                        Arg::Int(SEMANTIC_CANDIDATES),
                        Arg::Text(flag(lexical && s.in_observations)),
                        scope.arg(),
                        Arg::Texts(question.words.clone()),
                        Arg::Texts(question.grams.clone()),
                        Arg::Text(question.language.config()),
                        Arg::Int(RARE_TERM_ENTITIES),
                        Arg::Int(FUZZY_NAME_CANDIDATES),
                        Arg::Int(crate::settings::SEMANTIC_PROBES.get() as i64),
                    ],
                    "found entities",
                )
            })
        })?
    } else {
        // Nothing to match (punctuation only): nothing matches.
        RetrieveEntitiesResponse {
            entities: vec![],
            total: 0,
            excluded_merged: !s.include_merged,
            limit: s.limit,
            offset: s.offset,
            search_method: None,
            search_fallback: None,
            pending_embeddings: None,
            embedding_model: None,
        }
    };
    answer.search_method = Some(method.as_str().to_string());
    answer.search_fallback = fallback;
    answer.embedding_model = model;
    Ok(answer)
}

/// The query's embedding and its model, or why semantic search cannot
/// answer: no model, a query the model has no word of, or a user none of
/// whose entities has an embedding by that model yet.
fn semantic_query(user: Uuid, q: &str) -> Result<(Vec<f32>, String), String> {
    let (embedding, model) = crate::embeddings::query_embedding(q)?;
    let any = db::json(
        "SELECT to_jsonb(EXISTS (SELECT FROM neotoma.entity_embeddings v
                                 WHERE v.user_id = $1::uuid AND v.model = $2))",
        &[Arg::uuid(user), Arg::Text(&model)],
    )
    .map_err(|_| "embeddings cannot be read".to_string())?;
    if any != serde_json::Value::Bool(true) {
        return Err(format!(
            "none of your entities has an embedding by {model} yet"
        ));
    }
    Ok((embedding, model))
}
