//! The `neotoma` Postgres extension: the truth model of Neotoma inside the
//! database. One SQL function per action (`neotoma.<action>(jsonb)`), created
//! from the action catalog; the logic lives in the pure `neotoma-core` crate
//! and the modules here are the thin layer that talks to Postgres.

use pgrx::prelude::*;

::pgrx::pg_module_magic!(name, version);

mod actions;
mod catalog;
mod crypto;
mod db;
mod evolution;
mod ids;
mod registry;
mod settings;
mod snapshots;
mod tenancy;

extension_sql_file!("../sql/schema.sql", name = "schema", bootstrap);
extension_sql_file!(
    "../sql/views.sql",
    name = "views",
    requires = ["schema", tenancy::current_user_id]
);
extension_sql_file!("../sql/finalize.sql", name = "finalize", finalize);

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
