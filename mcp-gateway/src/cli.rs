//! Command line: every flag also reads an environment variable.

use crate::embedded::EmbeddedOptions;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;
use uuid::Uuid;

/// The user of single-user local setups (stdio), when none is configured.
pub const DEFAULT_LOCAL_USER: &str = "00000000-0000-0000-0000-000000000001";

#[derive(Parser, Debug)]
#[command(
    name = "neotoma-mcp",
    version,
    about = "MCP server for Neotoma, a memory for AI agents inside Postgres",
    long_about = "MCP server for Neotoma, a memory for AI agents inside Postgres.\n\n\
        With no --database-url it runs a private Postgres cluster in its own data directory \
        (created on first start, reused after) and serves MCP over stdio; --http serves \
        Streamable HTTP at /mcp instead.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Log format on stderr (filter with NEOTOMA_LOG, e.g. NEOTOMA_LOG=debug).
    #[arg(
        long,
        value_enum,
        env = "NEOTOMA_LOG_FORMAT",
        default_value = "text",
        global = true
    )]
    pub log_format: LogFormat,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve MCP (the default when no command is given).
    Serve(ServeArgs),
    /// Inspect or stop the embedded Postgres cluster.
    #[command(subcommand)]
    Cluster(ClusterCommand),
}

#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Where the data lives and whether the cluster runs.
    Status(EmbeddedArgs),
    /// Stop the cluster (the next serve starts it again).
    Stop(EmbeddedArgs),
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Postgres URL of a database where `CREATE EXTENSION neotoma` has been run.
    /// Without it, the embedded private cluster is used.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    /// Serve Streamable HTTP on this address (endpoint /mcp) instead of stdio,
    /// e.g. 127.0.0.1:8080.
    #[arg(long, env = "NEOTOMA_HTTP", value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// The user tool calls act for (stdio, and HTTP without tokens).
    #[arg(long, env = "NEOTOMA_USER_ID", default_value = DEFAULT_LOCAL_USER)]
    pub user_id: Uuid,
    /// Database connections in the pool.
    #[arg(long, env = "NEOTOMA_POOL_SIZE", default_value_t = 8)]
    pub pool_size: usize,
    /// Longest an action may run before it is cancelled (DB_QUERY_FAILED).
    #[arg(long, env = "NEOTOMA_STATEMENT_TIMEOUT_MS", default_value_t = 30_000)]
    pub statement_timeout_ms: u64,
    /// Host names to accept over HTTP besides localhost (DNS-rebinding guard).
    #[arg(
        long = "allowed-host",
        env = "NEOTOMA_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
}

#[derive(Args, Debug, Clone)]
pub struct EmbeddedArgs {
    /// Data directory of the embedded cluster
    /// [default: $XDG_DATA_HOME/neotoma, /var/lib/neotoma for root].
    #[arg(long, env = "NEOTOMA_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Port of the embedded cluster (it listens on a Unix socket in the data
    /// directory only; the port names the socket).
    #[arg(long, env = "NEOTOMA_PG_PORT", default_value_t = 5433)]
    pub pg_port: u16,
    /// Directory of the Postgres server binaries (initdb, pg_ctl)
    /// [default: `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin].
    #[arg(long, env = "NEOTOMA_PG_BINDIR")]
    pub pg_bindir: Option<PathBuf>,
    /// OS user that owns and runs the embedded cluster [default: the current
    /// user; `postgres` when started as root, since initdb refuses root].
    #[arg(long, env = "NEOTOMA_OS_USER")]
    pub os_user: Option<String>,
}

impl EmbeddedArgs {
    pub fn options(&self) -> EmbeddedOptions {
        EmbeddedOptions {
            data_dir: self.data_dir.clone(),
            port: self.pg_port,
            pg_bindir: self.pg_bindir.clone(),
            os_user: self.os_user.clone(),
        }
    }
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub enum LogFormat {
    Text,
    Json,
}
