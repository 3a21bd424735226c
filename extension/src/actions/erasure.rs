//! Erasure (GDPR): removing content for good, where deletion only hides it.
//! Sources, observations and relationship observations are append-only;
//! only the statements here, while [`erasing`] is true, may remove them.
//! What stays is an audit row (`neotoma.erasures`) of counts, without
//! content. Every statement names the user: erasure runs as the extension's
//! owner, whom row level security may not restrict.

use super::relationships::{apply_to_relationship, relationship_observations};
use crate::db::{self, Arg};
use crate::lifecycle::{self, Marked};
use crate::snapshots;
use neotoma_core::actions::lifecycle::ErasedCounts;
use neotoma_core::NeotomaError;
use pgrx::prelude::*;
use serde::Deserialize;
use std::cell::Cell;
use uuid::Uuid;

thread_local! {
    /// Set while this backend erases: the append-only triggers then let
    /// its deletes (and a source's redaction) through.
    static ERASING: Cell<bool> = const { Cell::new(false) };
}

/// `neotoma._erasing()`: whether this backend is inside an erasure. Only
/// [`while_erasing`] sets it; `neotoma._refuse_change()` asks.
#[pg_extern(volatile, parallel_safe, name = "_erasing")]
pub(crate) fn erasing() -> bool {
    ERASING.get()
}

/// Runs `f` as the extension's owner with [`erasing`] true; both are
/// undone afterwards, also when `f` fails.
pub fn while_erasing<R>(f: impl FnOnce() -> Result<R, NeotomaError>) -> Result<R, NeotomaError> {
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            ERASING.set(false);
        }
    }
    crate::owner::as_owner(|| {
        let _done = Done;
        ERASING.set(true);
        f()
    })
}

/// The count a statement answers (as jsonb).
fn count(sql: &str, args: &[Arg]) -> Result<i64, NeotomaError> {
    Ok(db::json(sql, args)?.as_i64().unwrap_or(0))
}

/// The entities `ids` of `user`, with the entities merged into them:
/// everything about them goes, and the sources only they came from. An
/// entity merged into another that stays leaves it recomputed.
pub fn erase_entities(user: &Uuid, ids: &[String]) -> Result<ErasedCounts, NeotomaError> {
    let mut c = ErasedCounts::default();
    if ids.is_empty() {
        return Ok(c);
    }
    let u = Arg::uuid(user);
    #[derive(Deserialize)]
    struct Scope {
        entities: Vec<String>,
        observations: Vec<String>,
        relationships: Vec<String>,
        sources: Vec<String>,
        /// Entities (outside the scope) that some of these were merged into.
        merge_targets: Vec<String>,
    }
    let scope: Scope = db::parsed(
        "WITH RECURSIVE x AS (SELECT id, merged_into FROM neotoma.entities
                    WHERE user_id = $1 AND (id = ANY($2) OR merged_into = ANY($2))),
              -- Theirs, and the originals of what splits moved to them, back
              -- through every split (a copy's original may be a copy too).
              chain (id) AS (
                SELECT id FROM neotoma.observations WHERE user_id = $1 AND entity_id IN (SELECT id FROM x)
                UNION
                SELECT m.observation_id FROM neotoma.observation_moves m JOIN chain c ON m.copy_id = c.id
                WHERE m.user_id = $1),
              o AS (SELECT id, source_id FROM neotoma.observations
                    WHERE user_id = $1 AND id IN (SELECT id FROM chain)),
              r AS (SELECT id FROM neotoma.relationships
                    WHERE user_id = $1 AND (source_entity_id IN (SELECT id FROM x)
                                            OR target_entity_id IN (SELECT id FROM x))),
              r2 AS (SELECT id FROM r UNION SELECT id FROM neotoma.relationships
                     WHERE user_id = $1 AND merged_into IN (SELECT id FROM r))
         SELECT jsonb_build_object(
           'entities', (SELECT coalesce(jsonb_agg(id ORDER BY id), '[]') FROM x),
           'observations', (SELECT coalesce(jsonb_agg(id ORDER BY id), '[]') FROM o),
           'relationships', (SELECT coalesce(jsonb_agg(id ORDER BY id), '[]') FROM r2),
           'sources', (SELECT coalesce(jsonb_agg(DISTINCT s), '[]') FROM (
               SELECT source_id AS s FROM o
               UNION SELECT ro.source_id FROM neotoma.relationship_observations ro
                     WHERE ro.user_id = $1 AND ro.relationship_id IN (SELECT id FROM r2)
               UNION SELECT f.source_id FROM neotoma.raw_fragments f
                     WHERE f.user_id = $1 AND f.entity_id IN (SELECT id FROM x)) ss),
           'merge_targets', (SELECT coalesce(jsonb_agg(DISTINCT merged_into), '[]') FROM x
                             WHERE merged_into IS NOT NULL AND merged_into NOT IN (SELECT id FROM x)))::text",
        &[u.clone(), Arg::Texts(ids.to_vec())],
        "erasure scope",
    )?;
    let x = || Arg::Texts(scope.entities.clone());
    let o = || Arg::uuid_texts(&scope.observations);
    let r = || Arg::uuid_texts(&scope.relationships);
    c.timeline_events = db::affected(
        "DELETE FROM neotoma.timeline_events WHERE user_id = $1
                      AND (entity_id = ANY($2) OR observation_id = ANY($3))",
        &[u.clone(), x(), o()],
    )?;
    db::run(
        "DELETE FROM neotoma.entity_identifiers WHERE user_id = $1 AND entity_id = ANY($2)",
        &[u.clone(), x()],
    )?;
    db::run(
        "DELETE FROM neotoma.entity_snapshots WHERE user_id = $1 AND entity_id = ANY($2)",
        &[u.clone(), x()],
    )?;
    c.raw_fragments = db::affected(
        "DELETE FROM neotoma.raw_fragments WHERE user_id = $1
                      AND (entity_id = ANY($2) OR observation_id = ANY($3))",
        &[u.clone(), x(), o()],
    )?;
    c.relationship_observations = db::affected(
        "DELETE FROM neotoma.relationship_observations WHERE user_id = $1
                      AND relationship_id = ANY($2)",
        &[u.clone(), r()],
    )?;
    // Re-keyed copies left by merges go too; only current ones are counted.
    c.relationships = count(
        "WITH d AS (DELETE FROM neotoma.relationships WHERE user_id = $1 AND id = ANY($2)
                    RETURNING merged_into)
         SELECT to_jsonb(count(*) FILTER (WHERE merged_into IS NULL)) FROM d",
        &[u.clone(), r()],
    )?;
    db::run(
        "DELETE FROM neotoma.entity_merges WHERE user_id = $1
           AND (from_entity_id = ANY($2) OR to_entity_id = ANY($2))",
        &[u.clone(), x()],
    )?;
    db::run(
        "DELETE FROM neotoma.observation_moves WHERE user_id = $1
           AND (observation_id = ANY($3) OR copy_id = ANY($3)
                OR split_id IN (SELECT id FROM neotoma.entity_splits WHERE user_id = $1
                                  AND (from_entity_id = ANY($2) OR to_entity_id = ANY($2))))",
        &[u.clone(), x(), o()],
    )?;
    db::run(
        "DELETE FROM neotoma.entity_splits WHERE user_id = $1
           AND (from_entity_id = ANY($2) OR to_entity_id = ANY($2))",
        &[u.clone(), x()],
    )?;
    c.observations = db::affected(
        "DELETE FROM neotoma.observations WHERE user_id = $1 AND id = ANY($2)",
        &[u.clone(), o()],
    )?;
    erase_change_rows(user, &scope.entities, &scope.relationships)?;
    forget_samples(user, &scope.entities)?;
    c.entities = db::affected(
        "DELETE FROM neotoma.entities WHERE user_id = $1 AND id = ANY($2)",
        &[u.clone(), x()],
    )?;
    // The integer ids the graph tools showed for them go too.
    db::run(
        "DELETE FROM neotoma.graph_ids WHERE user_id = $1 AND (ref = ANY($2) OR ref = ANY($3))",
        // (ref is text: relationship ids as text.)
        &[u.clone(), x(), Arg::Texts(scope.relationships.clone())],
    )?;
    let (gone, redacted) = settle_sources(user, &scope.sources)?;
    c.sources = gone;
    c.sources_redacted = redacted;
    if !scope.merge_targets.is_empty() {
        c.entities_recomputed = snapshots::recompute(user, &scope.merge_targets)?;
        snapshots::entities_recomputed(user, &scope.merge_targets)?;
    }
    Ok(c)
}

/// The source `source` of `user` and everything it gave: the entities it
/// alone described are erased, the others recomputed from what remains.
pub fn erase_source(user: &Uuid, source: &Uuid) -> Result<ErasedCounts, NeotomaError> {
    let u = Arg::uuid(user);
    let s = || Arg::uuid(source);
    #[derive(Deserialize)]
    struct Touched {
        entities: Vec<String>,
        relationships: Vec<String>,
    }
    let touched: Touched = db::parsed(
        "SELECT jsonb_build_object(
           'entities', (SELECT coalesce(jsonb_agg(DISTINCT entity_id), '[]') FROM neotoma.observations
                        WHERE user_id = $1 AND source_id = $2),
           'relationships', (SELECT coalesce(jsonb_agg(DISTINCT relationship_id), '[]')
                             FROM neotoma.relationship_observations WHERE user_id = $1 AND source_id = $2))::text",
        &[u.clone(), s()],
        "erased source's reach",
    )?;
    let mut c = ErasedCounts {
        timeline_events: db::affected(
            "DELETE FROM neotoma.timeline_events t WHERE t.user_id = $1
                          AND (t.source_id = $2 OR t.observation_id IN (
                                SELECT o.id FROM neotoma.observations o WHERE o.user_id = $1 AND o.source_id = $2))",
            &[u.clone(), s()],
        )?,
        raw_fragments: db::affected(
            "DELETE FROM neotoma.raw_fragments f WHERE f.user_id = $1
                          AND (f.source_id = $2 OR f.observation_id IN (
                                SELECT o.id FROM neotoma.observations o WHERE o.user_id = $1 AND o.source_id = $2))",
            &[u.clone(), s()],
        )?,
        relationship_observations: db::affected(
            "DELETE FROM neotoma.relationship_observations WHERE user_id = $1 AND source_id = $2",
            &[u.clone(), s()],
        )?,
        observations: count(
            "WITH m AS (DELETE FROM neotoma.observation_moves m WHERE m.user_id = $1
                          AND (m.observation_id IN (SELECT o.id FROM neotoma.observations o WHERE o.user_id = $1 AND o.source_id = $2)
                               OR m.copy_id IN (SELECT o.id FROM neotoma.observations o WHERE o.user_id = $1 AND o.source_id = $2))),
                  d AS (DELETE FROM neotoma.observations WHERE user_id = $1 AND source_id = $2 RETURNING 1)
             SELECT to_jsonb(count(*)) FROM d",
            &[u.clone(), s()],
        )?,
        ..Default::default()
    };
    // The feed forgets the source's id; its entities' rows stay (those
    // erased below go with them).
    db::run(
        "DELETE FROM neotoma.changes WHERE user_id = $1 AND kind = 'source' AND source_id = $2",
        &[u.clone(), s()],
    )?;
    db::run(
        "UPDATE neotoma.changes SET source_id = NULL WHERE user_id = $1 AND source_id = $2",
        &[u.clone(), s()],
    )?;
    let (gone, _) = settle_sources(user, &[source.to_string()])?;
    c.sources = gone;
    // Relationships: recomputed from their remaining assertions, erased
    // with none left.
    for id in &touched.relationships {
        let remaining = relationship_observations(user, id)?;
        if remaining.is_empty() {
            // Its deletions and restorations go with it, and their sources.
            let lifecycle: Vec<String> = db::from_json(
                db::json(
                    "WITH d AS (DELETE FROM neotoma.relationship_observations WHERE user_id = $1
                                  AND relationship_id = $2::uuid RETURNING source_id)
                     SELECT coalesce(jsonb_agg(DISTINCT source_id), '[]') FROM d",
                    &[u.clone(), Arg::Text(id)],
                )?,
                "sources",
            )?;
            db::run(
                "DELETE FROM neotoma.changes WHERE user_id = $1 AND relationship_id = $2::uuid",
                &[u.clone(), Arg::Text(id)],
            )?;
            let (gone, _) = settle_sources(user, &lifecycle)?;
            c.sources += gone;
            let n = db::affected(
                "DELETE FROM neotoma.relationships WHERE user_id = $1 AND id = $2::uuid",
                &[u.clone(), Arg::Text(id)],
            )?;
            c.relationships += n;
        } else {
            apply_to_relationship(user, id, &remaining, true)?;
            relationship_recomputed(user, id)?;
        }
    }
    // Deleted or not: what the remaining deletions and restorations say
    // (the erased source may have held one).
    lifecycle::repair(Marked::Relationships, Some((user, &touched.relationships)))?;
    // Entities: erased when nothing but deletions and restorations is left
    // of them (or of what was merged into them); else recomputed.
    #[derive(Deserialize)]
    struct Fate {
        erase: Vec<String>,
        recompute: Vec<String>,
    }
    let fate: Fate = db::parsed(
        "WITH t AS (SELECT e.id, e.merged_into FROM neotoma.entities e WHERE e.user_id = $1 AND e.id = ANY($2)),
              k AS (SELECT t.id, t.merged_into, EXISTS (
                      SELECT FROM neotoma.observations o
                      WHERE o.user_id = $1 AND o.kind NOT IN ('deletion', 'restoration')
                        AND (o.entity_id = t.id OR o.entity_id IN (SELECT m.id FROM neotoma.entities m
                                                                    WHERE m.user_id = $1 AND m.merged_into = t.id))) AS kept
                    FROM t)
         SELECT jsonb_build_object(
           'erase', (SELECT coalesce(jsonb_agg(id ORDER BY id), '[]') FROM k WHERE NOT kept),
           'recompute', (SELECT coalesce(jsonb_agg(DISTINCT coalesce(merged_into, id)), '[]') FROM k WHERE kept))::text",
        &[u.clone(), Arg::Texts(touched.entities.clone())],
        "erased source's entities",
    )?;
    let erased = erase_entities(user, &fate.erase)?;
    c.entities += erased.entities;
    c.observations += erased.observations;
    c.relationships += erased.relationships;
    c.relationship_observations += erased.relationship_observations;
    c.sources += erased.sources;
    c.sources_redacted += erased.sources_redacted;
    c.raw_fragments += erased.raw_fragments;
    c.timeline_events += erased.timeline_events;
    // A merged entity keeps its snapshot and identifiers from before its
    // merge, and its merge record a copy: they held what was erased.
    db::run(
        "WITH m AS (SELECT id FROM neotoma.entities WHERE user_id = $1 AND id = ANY($2) AND merged_into IS NOT NULL),
              s AS (DELETE FROM neotoma.entity_snapshots WHERE user_id = $1 AND entity_id IN (SELECT id FROM m)),
              i AS (DELETE FROM neotoma.entity_identifiers WHERE user_id = $1 AND entity_id IN (SELECT id FROM m))
         UPDATE neotoma.entity_merges SET from_snapshot = NULL
         WHERE user_id = $1 AND from_entity_id IN (SELECT id FROM m)",
        &[u.clone(), Arg::Texts(touched.entities.clone())],
    )?;
    forget_samples(user, &touched.entities)?;
    if !fate.recompute.is_empty() {
        // Deletions are derived from the remaining lifecycle observations.
        lifecycle::repair(Marked::Entities, Some((user, &fate.recompute)))?;
        c.entities_recomputed += snapshots::recompute(user, &fate.recompute)?;
        snapshots::entities_recomputed(user, &fate.recompute)?;
    }
    Ok(c)
}

/// Sources of `user` among `ids` that nothing refers to any more are
/// removed (with their files and interpretation runs); those still feeding
/// other entities lose their stored content and file bytes (the row, its
/// type and hash stay). Answers (removed, redacted).
fn settle_sources(user: &Uuid, ids: &[String]) -> Result<(i64, i64), NeotomaError> {
    if ids.is_empty() {
        return Ok((0, 0));
    }
    let v = db::json(
        "WITH s AS (SELECT s.id,
                      EXISTS (SELECT FROM neotoma.observations o WHERE o.user_id = $1 AND o.source_id = s.id)
                      OR EXISTS (SELECT FROM neotoma.relationship_observations o WHERE o.user_id = $1 AND o.source_id = s.id)
                      OR EXISTS (SELECT FROM neotoma.raw_fragments f WHERE f.user_id = $1 AND f.source_id = s.id)
                      OR EXISTS (SELECT FROM neotoma.timeline_events t WHERE t.user_id = $1 AND t.source_id = s.id)
                      AS used
                    FROM neotoma.sources s WHERE s.user_id = $1 AND s.id = ANY($2)),
              files AS (DELETE FROM neotoma.files f WHERE f.user_id = $1 AND f.source_id IN (SELECT id FROM s)
                        RETURNING 1),
              runs AS (DELETE FROM neotoma.interpretation_runs r WHERE r.user_id = $1
                         AND r.source_id IN (SELECT id FROM s WHERE NOT used) RETURNING 1)
         SELECT jsonb_build_object('unused', (SELECT coalesce(jsonb_agg(id), '[]') FROM s WHERE NOT used),
                                   'used', (SELECT coalesce(jsonb_agg(id), '[]') FROM s WHERE used),
                                   'files', (SELECT count(*) FROM files), 'runs', (SELECT count(*) FROM runs))",
        &[Arg::uuid(user), Arg::uuid_texts(ids)],
    )?;
    let unused: Vec<String> = db::from_json(v["unused"].clone(), "sources")?;
    let used: Vec<String> = db::from_json(v["used"].clone(), "sources")?;
    let removed = db::affected(
        "DELETE FROM neotoma.sources WHERE user_id = $1 AND id = ANY($2)",
        &[Arg::uuid(user), Arg::uuid_texts(&unused)],
    )?;
    let redacted = db::affected(
        "UPDATE neotoma.sources SET content = NULL, original_filename = NULL, storage_path = NULL,
                        file_size = NULL, provenance = '{}', erased_at = clock_timestamp()
                    WHERE user_id = $1 AND id = ANY($2)",
        &[Arg::uuid(user), Arg::uuid_texts(&used)],
    )?;
    Ok((removed, redacted))
}

/// Removes the change feed's rows about these entities and relationships
/// (they name them).
fn erase_change_rows(
    user: &Uuid,
    entities: &[String],
    relationships: &[String],
) -> Result<(), NeotomaError> {
    db::run(
        "DELETE FROM neotoma.changes WHERE user_id = $1
           AND (entity_id = ANY($2) OR relationship_id = ANY($3))",
        &[
            Arg::uuid(user),
            Arg::Texts(entities.to_vec()),
            Arg::uuid_texts(relationships),
        ],
    )
}

/// Every row of `user` in every table (an operator's `erase_user`). The
/// audit row of the erasure is written after.
pub fn erase_user_rows(user: &Uuid) -> Result<ErasedCounts, NeotomaError> {
    let u = || Arg::uuid(user);
    let mut c = ErasedCounts::default();
    let del = |table: &str| -> Result<i64, NeotomaError> {
        db::affected(
            &format!("DELETE FROM neotoma.{table} WHERE user_id = $1"),
            &[u()],
        )
    };
    c.timeline_events = del("timeline_events")?;
    // Their counts (the deletion above appended its deltas), refused calls,
    // packed lists, posted words and common name trigrams: the previous
    // release's SQL keeps none.
    if crate::installed::is_current() {
        del("timeline_counts")?;
        del("denied_calls")?;
        del("embedding_list_codes")?;
        // First, so the snapshots' triggers find no posted word to keep.
        del("posted_lexemes")?;
        del("word_postings")?;
        del("common_name_trigrams")?;
    }
    del("entity_identifiers")?;
    del("entity_snapshots")?;
    c.raw_fragments = del("raw_fragments")?;
    c.relationship_observations = del("relationship_observations")?;
    c.relationships = del("relationships")?;
    del("entity_merges")?;
    del("observation_moves")?;
    del("entity_splits")?;
    c.observations = del("observations")?;
    del("changes")?;
    c.entities = del("entities")?;
    del("entity_counts")?;
    del("files")?;
    del("interpretation_runs")?;
    del("sync_runs")?;
    del("connectors")?;
    c.sources = del("sources")?;
    del("schema_recommendations")?;
    del("entity_schemas")?;
    del("graph_write_locks")?;
    del("contexts")?;
    del("workspaces")?;
    del("graph_ids")?;
    del("entity_type_mappings")?;
    del("oauth_refresh_tokens")?;
    del("oauth_grants")?;
    del("login_codes")?;
    del("logins")?;
    del("inspector_sessions")?;
    del("embedding_lists")?;
    del("embedding_list_builds")?;
    del("common_lexemes")?;
    // Every gateway forgets the user's tokens at once (their caches keep a
    // token until told).
    db::run(
        "WITH gone AS (DELETE FROM neotoma.api_tokens WHERE user_id = $1 RETURNING token_hash)
         SELECT count(pg_notify('neotoma_tokens', token_hash)) FROM gone",
        &[u()],
    )?;
    Ok(c)
}

/// Writes the audit row of an erasure (counts, no content); answers its id
/// and time.
pub fn audit(
    user: &Uuid,
    kind: &str,
    reason: Option<&str>,
    counts: &ErasedCounts,
) -> Result<(String, String), NeotomaError> {
    let counts = serde_json::to_value(counts).unwrap_or_default();
    // Users read their audit rows, never write them.
    let v = crate::owner::as_owner(|| {
        db::json(
            "INSERT INTO neotoma.erasures (user_id, id, target_kind, reason, counts)
         VALUES ($1, gen_random_uuid(), $2, $3, $4)
         RETURNING jsonb_build_object('id', id, 'at', neotoma._iso(erased_at))",
            &[
                Arg::uuid(user),
                Arg::Text(kind),
                Arg::OptText(reason),
                Arg::Json(&counts),
            ],
        )
    })?;
    Ok((
        v["id"].as_str().unwrap_or_default().to_string(),
        v["at"].as_str().unwrap_or_default().to_string(),
    ))
}

/// `neotoma.erase_user(user_id, confirm)`: erases every row of a user, for
/// operators (in a session acting for no other user). Answers the counts;
/// an audit row of the erasure stays.
#[pg_extern(volatile, parallel_unsafe, name = "erase_user")]
fn erase_user_sql(user_id: pgrx::datum::Uuid, confirm: bool) -> pgrx::JsonB {
    let user = Uuid::from_bytes(*user_id.as_bytes());
    let run = || -> Result<serde_json::Value, NeotomaError> {
        crate::tenancy::require_operator("erase a user")?;
        if user.is_nil() {
            return Err(NeotomaError::invalid_field(
                "user_id",
                "the nil UUID is the global user: what every user shares (global schemas) is not erased",
            ));
        }
        if !confirm {
            return Err(NeotomaError::invalid_field(
                "confirm",
                "erase_user removes every row of the user for good: pass confirm => true",
            ));
        }
        crate::tenancy::with_user(Some(&user.to_string()), |u| {
            snapshots::lock_user(&u.to_string(), true)?;
            let counts = while_erasing(|| erase_user_rows(&u))?;
            let (id, at) = audit(&u, "user", None, &counts)?;
            Ok(
                serde_json::json!({"user_id": u, "erasure_id": id, "erased_at": at, "counts": counts}),
            )
        })
    };
    match run() {
        Ok(v) => pgrx::JsonB(v),
        Err(e) => crate::error::raise(&e),
    }
}

/// Sample values of unknown fields that schema recommendations keep for
/// the types of these entities: they may be erased content (the
/// recommendation itself, its field names and counts, stays).
fn forget_samples(user: &Uuid, entities: &[String]) -> Result<(), NeotomaError> {
    db::run(
        "UPDATE neotoma.schema_recommendations SET evidence = evidence - 'sample_values'
         WHERE user_id = $1 AND evidence ? 'sample_values'
           AND entity_type IN (SELECT entity_type FROM neotoma.entities WHERE user_id = $1 AND id = ANY($2))",
        &[Arg::uuid(user), Arg::Texts(entities.to_vec())],
    )
}

/// [`snapshots::entities_recomputed`] for a relationship.
fn relationship_recomputed(user: &Uuid, id: &str) -> Result<(), NeotomaError> {
    db::run(
        "INSERT INTO neotoma.changes (user_id, kind, operation, relationship_id)
         VALUES ($1, 'relationship', 'recomputed', $2::uuid)",
        &[Arg::uuid(user), Arg::Text(id)],
    )
}
