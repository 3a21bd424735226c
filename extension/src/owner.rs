//! Running a statement as the extension's owner, from the extension's own
//! code: what `SECURITY DEFINER` does for a SQL function. Used where the
//! extension writes or reads what the session's role may not (a store's
//! derived rows; analytics across users), always with its own SQL, the
//! rows it touches chosen by that SQL, never by the caller.

use crate::db;
use neotoma_core::{ErrorCode, NeotomaError};
use pgrx::pg_sys;
use std::cell::Cell;

thread_local! {
    /// The owner's role, read once per backend.
    static OWNER: Cell<Option<pg_sys::Oid>> = const { Cell::new(None) };
}

/// The extension's owner: the owner of its tables.
fn owner() -> Result<pg_sys::Oid, NeotomaError> {
    if let Some(oid) = OWNER.get() {
        return Ok(oid);
    }
    let v = db::json(
        "SELECT to_jsonb(relowner::bigint) FROM pg_catalog.pg_class
         WHERE oid = 'neotoma.entities'::pg_catalog.regclass",
        &[],
    )?;
    let oid = v
        .as_u64()
        .and_then(|o| u32::try_from(o).ok())
        .map(pg_sys::Oid::from)
        .ok_or_else(|| NeotomaError::new(ErrorCode::DbQueryFailed, "the extension has no owner"))?;
    OWNER.set(Some(oid));
    Ok(oid)
}

/// Runs `f` as the extension's owner; the session's role comes back
/// afterwards, also when `f` fails.
pub fn as_owner<R>(f: impl FnOnce() -> Result<R, NeotomaError>) -> Result<R, NeotomaError> {
    struct Restore {
        user: pg_sys::Oid,
        context: std::ffi::c_int,
    }
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: restores what GetUserIdAndSecContext answered below.
            unsafe { pg_sys::SetUserIdAndSecContext(self.user, self.context) }
        }
    }
    let owner = owner()?;
    let mut restore = Restore {
        user: pg_sys::InvalidOid,
        context: 0,
    };
    // SAFETY: plain reads and writes of the backend's current user, as
    // fmgr_security_definer does around a SECURITY DEFINER function.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut restore.user, &mut restore.context);
        pg_sys::SetUserIdAndSecContext(
            owner,
            restore.context | pg_sys::SECURITY_LOCAL_USERID_CHANGE as std::ffi::c_int,
        );
    }
    f()
}
