//! Ingest: how content becomes truth. Every way in (`store` of structured
//! entities or of a file, `reinterpret`, `record_interpretation`, and the
//! earlier `submit_payload` and `upload_file`, which are `store`) runs the
//! same stages:
//!
//! 1. **source**: the content, addressed by its hash per user
//!    ([`structured`], [`files`]);
//! 2. **run**: an interpretation run, one per (source, interpreter, config)
//!    ([`runs`]);
//! 3. **read**: the entities, as given, from a built-in reader, or from the
//!    gateway's model, which answers later through `record_interpretation`
//!    ([`files`]);
//! 4. **prepare**: schema fields split from unknown fields, values checked
//!    (strict) or coerced (lenient), identities resolved ([`prepare`]);
//! 5. **write**: entities, observations and raw fragments, folded into
//!    snapshots and written with them ([`write`]);
//! 6. **promote**: unknown fields that now qualify join the user's schema
//!    (`crate::evolution::auto_promote`);
//! 7. **finish**: the run's counts and status (written with the rows).
//!
//! Stages 5 to 7 are [`complete`], the same for every run. What an action
//! adds around them (related entities in `store`'s answer) is the action's.

pub mod files;
pub mod prepare;
pub mod runs;
pub mod structured;
pub mod write;

pub use prepare::PreparedBatch;
pub use write::{Origin, Stored};

use crate::db::{self, Arg};
use neotoma_core::NeotomaError;
use uuid::Uuid;

/// Refuses content whose source was erased but kept (it still fed other
/// entities): its observations' ids would be those of the first store, and
/// answering it as a duplicate would claim what is gone is stored.
pub fn refuse_erased(user: &Uuid, source: &Uuid) -> Result<(), NeotomaError> {
    let erased = db::text(
        "SELECT neotoma._iso(erased_at) FROM neotoma.sources
         WHERE user_id = $1::uuid AND id = $2::uuid AND erased_at IS NOT NULL",
        &[Arg::uuid(user), Arg::uuid(source)],
    )?;
    match erased {
        Some(at) => Err(NeotomaError::validation(format!(
            "this exact content was stored before and erased on {at}: it is not stored again \
             (change it, e.g. add a field, to store it as new content)"
        ))
        .with("source_id", source.to_string())
        .with("erased_at", at)),
        None => Ok(()),
    }
}

/// Stages 5 to 7 of a run whose entities are prepared: write them, promote
/// the unknown fields that now qualify, record what the run made.
pub fn complete(origin: &Origin, batch: &PreparedBatch) -> Result<Stored, NeotomaError> {
    let stored = write::store_entities(origin, batch)?;
    if stored.unknown_fields > 0 {
        crate::evolution::auto_promote(&origin.user, &batch.unknown_keys_by_type())?;
    }
    if !stored.run_finished {
        runs::finish_run(&origin.user, &origin.run_id, Some(&stored), None)?;
    }
    Ok(stored)
}
