//! Stage 2 and 7: interpretation runs. A run's id derives from (user,
//! source, interpreter, config), so the same interpretation is made once.

use super::write::Stored;
use crate::db::{self, Arg};
use crate::settings;
use neotoma_core::actions::store::{InterpretationSummary, StoredEntity};
use neotoma_core::canonical::canonical_json;
use neotoma_core::ids::derived_uuid;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{Map, Value};
use uuid::Uuid;

/// What the run of an interpretation tells the caller.
pub struct RunOutcome {
    pub summary: InterpretationSummary,
    /// Work for the gateway's model interpreter.
    pub external: Option<Value>,
    /// The entities this run stored (None: ask the database).
    pub entities: Option<Vec<StoredEntity>>,
}

impl RunOutcome {
    /// A run that leaves nothing for the gateway and stored nothing now.
    pub fn of(summary: InterpretationSummary) -> RunOutcome {
        RunOutcome {
            summary,
            external: None,
            entities: None,
        }
    }

    /// A run that stored what it read (`reason`: what it left out).
    pub fn completed(run: &Uuid, stored: Stored, reason: Option<String>) -> RunOutcome {
        RunOutcome {
            summary: summary(
                run,
                "completed",
                (stored.entities_created, stored.observations_created),
                reason,
            ),
            external: None,
            entities: Some(stored.entities),
        }
    }
}

pub fn summary(
    run: &Uuid,
    status: &str,
    created: (u64, u64),
    reason: Option<String>,
) -> InterpretationSummary {
    InterpretationSummary {
        run_id: run.to_string(),
        entities_created: created.0,
        observations_created: created.1,
        status: status.to_string(),
        reason,
    }
}

/// Records a run of `interpreter` over a source. Its id depends on (user,
/// source, interpreter, config): the same config is the same run.
pub fn run_id(user: &Uuid, source: &Uuid, interpreter: &str, config: &Map<String, Value>) -> Uuid {
    derived_uuid(
        "run",
        &[
            &user.to_string(),
            &source.to_string(),
            interpreter,
            &canonical_json(&Value::Object(config.clone())),
        ],
    )
}

/// Records a new run; false when the run exists already (the same source
/// and config interpreted by a concurrent session, which then owns it).
pub fn insert_run(
    user: &Uuid,
    run: &Uuid,
    source: &Uuid,
    interpreter: &str,
    config: &Map<String, Value>,
    status: &str,
    error: Option<&str>,
) -> Result<bool, NeotomaError> {
    db::inserted(
        "INSERT INTO neotoma.interpretation_runs (user_id, id, source_id, interpreter, config, status, error, finished_at)
         VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6, CASE WHEN $7::text IS NULL THEN NULL ELSE jsonb_build_object('message', $7::text) END,
                 CASE WHEN $6 IN ('running', 'pending') THEN NULL ELSE clock_timestamp() END)
         ON CONFLICT DO NOTHING",
        &[
            Arg::uuid(user),
            Arg::uuid(run),
            Arg::uuid(source),
            Arg::Text(interpreter),
            Arg::Json(&Value::Object(config.clone())),
            Arg::Text(status),
            Arg::OptText(error),
        ],
    )
}

/// Marks a run finished with what it made (or why it failed).
pub fn finish_run(
    user: &Uuid,
    run: &Uuid,
    stored: Option<&Stored>,
    error: Option<&str>,
) -> Result<(), NeotomaError> {
    db::run(
        "UPDATE neotoma.interpretation_runs SET
           status = CASE WHEN $6::text IS NULL THEN 'completed' ELSE 'failed' END,
           entities_created = $3, observations_created = $4, unknown_fields_count = $5,
           error = CASE WHEN $6::text IS NULL THEN NULL ELSE jsonb_build_object('message', $6::text) END,
           finished_at = clock_timestamp()
         WHERE user_id = $1::uuid AND id = $2::uuid",
        &[
            Arg::uuid(user),
            Arg::uuid(run),
            Arg::Int(stored.map_or(0, |s| s.entities_created as i64)),
            Arg::Int(stored.map_or(0, |s| s.observations_created as i64)),
            Arg::Int(stored.map_or(0, |s| s.unknown_fields as i64)),
            Arg::OptText(error),
        ],
    )
}

/// Refuses a new run past the user's monthly quota.
pub fn check_quota(user: &Uuid) -> Result<(), NeotomaError> {
    // neotoma.interpretation_quota: runs per user and calendar month (0: unlimited).
    let quota = i64::from(settings::INTERPRETATION_QUOTA.get());
    if quota <= 0 {
        return Ok(());
    }
    let used = db::json(
        "SELECT to_jsonb(count(*)) FROM neotoma.interpretation_runs
         WHERE user_id = $1::uuid AND interpreter <> 'structured' AND status <> 'skipped'
           AND started_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
        &[Arg::uuid(user)],
    )?
    .as_i64()
    .unwrap_or(0);
    if used >= quota {
        return Err(NeotomaError::new(
            ErrorCode::QuotaExceeded,
            format!("the interpretation quota of {quota} runs this month is used up"),
        )
        .with("quota", quota)
        .with("used", used)
        .with("period", "calendar month (UTC)"));
    }
    Ok(())
}

/// The run of the same source and config made before (by this or a
/// concurrent session), if any: it is not made again.
pub fn earlier_run(user: &Uuid, run: &Uuid) -> Result<Option<RunOutcome>, NeotomaError> {
    let status = db::json(
        "SELECT to_jsonb(status) FROM neotoma.interpretation_runs WHERE user_id = $1::uuid AND id = $2::uuid",
        &[Arg::uuid(user), Arg::uuid(run)],
    )?;
    Ok(status.as_str().map(|status| {
        RunOutcome::of(summary(
            run,
            status,
            (0, 0),
            Some("this source was interpreted with this config before".to_string()),
        ))
    }))
}

/// The run this session could not record because it exists: the earlier
/// one, or one a concurrent session is making right now.
pub fn existing_run(user: &Uuid, run: &Uuid) -> Result<RunOutcome, NeotomaError> {
    Ok(earlier_run(user, run)?.unwrap_or_else(|| lost_race(run)))
}

/// A run another session is making right now (not yet visible here).
fn lost_race(run: &Uuid) -> RunOutcome {
    RunOutcome::of(summary(
        run,
        "running",
        (0, 0),
        Some("another session is interpreting this source with this config".to_string()),
    ))
}
