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
mod snapshots;
mod tenancy;

extension_sql_file!("../sql/schema.sql", name = "schema", bootstrap);
extension_sql_file!("../sql/views.sql", name = "views");
extension_sql_file!("../sql/finalize.sql", name = "finalize", finalize);
