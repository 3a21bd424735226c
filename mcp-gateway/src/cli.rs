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
    Serve(Box<ServeArgs>),
    /// Inspect or stop the embedded Postgres cluster.
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// Create, revoke and list the bearer tokens of the HTTP transport (needs
    /// an administrator's database connection; the embedded cluster's is used
    /// without --database-url).
    #[command(subcommand)]
    Token(TokenCommand),
    /// Set up who may authorize OAuth clients (ChatGPT, claude.ai) for a
    /// user: a username and password, or a one-time code (docs/oauth.md).
    /// Needs an operator's database connection, like `token`.
    #[command(subcommand)]
    Login(LoginCommand),
    /// Users spread over a router's partitions (docs/scale-out.md).
    #[command(subcommand)]
    Partition(PartitionCommand),
    /// Write a user's memory to a JSON Lines file (sources with their bytes,
    /// observations, relationships, corrections, schemas, merges, splits):
    /// enough to rebuild it with `import`.
    Export {
        /// The user whose memory is written.
        #[arg(long = "user")]
        user: Uuid,
        /// The file to write (`-` for standard output).
        #[arg(long = "out")]
        out: PathBuf,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Replay an export into a user's memory (ids stay the same; importing
    /// twice adds nothing; the snapshots are folded as it replays); or, with
    /// `--format memory-jsonl`, read the MCP memory server's memory.jsonl.
    Import {
        /// The user whose memory receives it.
        #[arg(long = "user")]
        user: Uuid,
        /// The file written by `export` (or the memory server's memory.jsonl).
        file: PathBuf,
        /// `neotoma` (a file written by `export`) or `memory-jsonl` (the
        /// knowledge graph of @modelcontextprotocol/server-memory).
        #[arg(long = "format", value_enum, default_value_t = ImportFormat::Neotoma)]
        format: ImportFormat,
        #[command(flatten)]
        db: DbArgs,
    },
}

fn parse_tools(s: &str) -> Result<neotoma_core::tool_sets::Selection, String> {
    neotoma_core::tool_sets::parse_selection(s)
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportFormat {
    Neotoma,
    MemoryJsonl,
}

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Create a token for a user; it is printed once and stored hashed.
    Create {
        /// The user the token acts for.
        #[arg(long = "user")]
        user: Uuid,
        /// A note to recognise the token by.
        #[arg(long)]
        name: Option<String>,
        /// `user` (the default): the user's own data. `operator`: also what
        /// all users share (global schemas); needs a gateway whose database
        /// role is a member of neotoma_operator.
        #[arg(long, value_enum, default_value = "user")]
        scope: TokenScope,
        /// The token stops working after this long, e.g. 3600s, 90m, 12h,
        /// 30d (default: never).
        #[arg(long, value_parser = parse_duration)]
        expires_in: Option<std::time::Duration>,
        /// The token calls only actions that write nothing: an agent that
        /// reads (a write answers FORBIDDEN).
        #[arg(long)]
        read_only: bool,
        /// The token calls only these tools: a list as `serve --tools`
        /// reads it (tool sets, groups of Neotoma's tools, or all), e.g.
        /// `memory` or `neotoma,review` (default: every tool).
        #[arg(long, value_name = "LIST", value_parser = parse_token_tools)]
        tools: Option<String>,
        /// The token reaches only these of the user's workspaces, e.g.
        /// `team` or `team,notes` (default: all): nothing elsewhere is
        /// found, listed, counted or changed through it.
        #[arg(long, value_name = "LIST", value_parser = parse_token_workspaces)]
        workspaces: Option<String>,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Revoke a token by its id.
    Revoke {
        token_id: Uuid,
        #[command(flatten)]
        db: DbArgs,
    },
    /// List tokens (ids, users, names, limits, last use; never the tokens).
    List {
        #[command(flatten)]
        db: DbArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum LoginCommand {
    /// Set (or replace) a user's username and password. The password is
    /// read from NEOTOMA_LOGIN_PASSWORD, else a line of standard input.
    Set {
        /// The user the login authorizes clients for.
        #[arg(long = "user")]
        user: Uuid,
        #[arg(long)]
        username: String,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Print a one-time code that logs the user in once on the consent page.
    Code {
        #[arg(long = "user")]
        user: Uuid,
        /// How long the code is good for, e.g. 15m, 1h.
        #[arg(long, value_parser = parse_duration, default_value = "15m")]
        expires_in: std::time::Duration,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Remove a user's login and unused codes (grants stay until revoked).
    Remove {
        #[arg(long = "user")]
        user: Uuid,
        #[command(flatten)]
        db: DbArgs,
    },
}

impl LoginCommand {
    #[cfg(feature = "http")]
    pub fn db(&self) -> &DbArgs {
        match self {
            LoginCommand::Set { db, .. }
            | LoginCommand::Code { db, .. }
            | LoginCommand::Remove { db, .. } => db,
        }
    }
}

/// Where the database is: a URL, or the embedded cluster.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// Postgres URL (an administrator's, for token management).
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
}

#[derive(Subcommand, Debug)]
pub enum PartitionCommand {
    /// Move a user's memory to another partition: its calls wait
    /// (SERVICE_UNAVAILABLE, retryable) while it is copied and checked,
    /// then go to the new partition; the old copy is erased. Needs a
    /// superuser's connection to the router (the embedded router's is used
    /// without --database-url).
    Move {
        /// The user to move.
        #[arg(long = "user")]
        user: Uuid,
        /// The partition to move it to.
        #[arg(long = "to")]
        to: i32,
        #[command(flatten)]
        db: DbArgs,
    },
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
    /// The tools to list, comma-separated, first first: tool sets (neotoma:
    /// Neotoma's core profile for agents; memory: the reference MCP memory
    /// server's; graphmem, workspace, engram), groups of Neotoma's own tools
    /// (lifecycle, review, workspaces, bulk, subgraphs, schema, connectors,
    /// admin), or all (every Neotoma tool). A tool of a set served that is
    /// not listed stays callable by its name. A tool name an earlier set has
    /// goes by its action's name, e.g. workspace_read_graph.
    /// docs/tool-sets.md says what each does.
    #[arg(
        long = "tools",
        env = "NEOTOMA_TOOLS",
        default_value = "neotoma",
        value_parser = parse_tools
    )]
    pub tools: neotoma_core::tool_sets::Selection,
    /// The user tool calls act for over stdio (and over HTTP with --no-auth).
    #[arg(long, env = "NEOTOMA_USER_ID", default_value = DEFAULT_LOCAL_USER)]
    pub user_id: Uuid,
    /// Serve HTTP without bearer tokens: every request acts for --user-id.
    /// Only for a trusted machine (the default listens on loopback only).
    #[arg(long, env = "NEOTOMA_NO_AUTH")]
    pub no_auth: bool,
    /// Calls per minute per user for an action, as ACTION=N (0 = unlimited);
    /// repeat the flag for several actions.
    #[arg(
        long = "rate-limit",
        env = "NEOTOMA_RATE_LIMITS",
        value_delimiter = ',',
        value_parser = crate::limits::parse_limit,
        default_values = ["store=100", "retrieve_entities=300"]
    )]
    pub rate_limits: Vec<(String, u32)>,
    /// Database connections in the pool.
    #[arg(long, env = "NEOTOMA_POOL_SIZE", default_value_t = 8)]
    pub pool_size: usize,
    /// Longest an action may run before it is cancelled (DB_QUERY_FAILED).
    #[arg(long, env = "NEOTOMA_STATEMENT_TIMEOUT_MS", default_value_t = 30_000)]
    pub statement_timeout_ms: u64,
    /// On a router with read replicas (docs/scale-out.md): where read-only
    /// actions run. off: on the partition (read-after-write); fresh: on its
    /// replica once it has what the partition had when the call began
    /// (else SERVICE_UNAVAILABLE, retryable); stale: on the replica as it is.
    #[arg(long, env = "NEOTOMA_REPLICA_READS", value_enum, default_value_t = ReplicaReads::Off)]
    pub replica_reads: ReplicaReads,
    /// OpenAI-compatible API (base URL, e.g. https://api.openai.com/v1) that
    /// interprets files the built-in readers cannot (PDFs, images, …).
    #[arg(long, env = "NEOTOMA_MODEL_URL")]
    pub model_url: Option<String>,
    /// Model to ask (interpretation_config.model_id overrides it per call).
    #[arg(long, env = "NEOTOMA_MODEL", default_value = "gpt-4o-mini")]
    pub model: String,
    /// API key of the model endpoint (sent as a bearer token).
    #[arg(long, env = "NEOTOMA_MODEL_API_KEY", hide_env_values = true)]
    pub model_api_key: Option<String>,
    /// Longest wait for the model, in seconds.
    #[arg(long, env = "NEOTOMA_MODEL_TIMEOUT_SECS", default_value_t = 120)]
    pub model_timeout_secs: u64,
    /// OpenAI-compatible embeddings API (base URL, e.g.
    /// https://api.openai.com/v1 or http://localhost:11434/v1 for Ollama; the
    /// requests go to `{base}/embeddings`): semantic search by its model
    /// instead of the database's built-in one. Entities are embedded in the
    /// background, moments after they are stored (pending_embeddings says
    /// how many are not yet).
    #[arg(long, env = "NEOTOMA_EMBEDDINGS_URL")]
    pub embeddings_url: Option<String>,
    /// Model of the embeddings API.
    #[arg(
        long,
        env = "NEOTOMA_EMBEDDINGS_MODEL",
        default_value = "text-embedding-3-small"
    )]
    pub embeddings_model: String,
    /// API key of the embeddings API (sent as a bearer token).
    #[arg(long, env = "NEOTOMA_EMBEDDINGS_API_KEY", hide_env_values = true)]
    pub embeddings_api_key: Option<String>,
    /// Longest wait for the embeddings API, in seconds.
    #[arg(long, env = "NEOTOMA_EMBEDDINGS_TIMEOUT_SECS", default_value_t = 30)]
    pub embeddings_timeout_secs: u64,
    /// Largest file `store` reads from a `file_path`, in MB (the database's own
    /// limit is the setting neotoma.max_file_bytes, 50 MB by default).
    #[arg(long, env = "NEOTOMA_MAX_FILE_MB", default_value_t = 50)]
    pub max_file_mb: u64,
    /// Base URL of signed file URLs (retrieve_file_url) [default: http://<--http address>].
    #[arg(long, env = "NEOTOMA_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// A directory under which `file_path` arguments may name files
    /// (repeatable; env colon-separated). Over HTTP, file_path is refused
    /// unless it resolves (symlinks and `..` followed) under one of these;
    /// over stdio any readable path is allowed unless some are given.
    #[arg(long = "file-root", env = "NEOTOMA_FILE_ROOTS", value_delimiter = ':')]
    pub file_roots: Vec<PathBuf>,
    /// HTTP requests with large bodies (over 1 MiB: files) handled at once;
    /// others wait (up to 30 s, then 503).
    #[arg(long, env = "NEOTOMA_MAX_LARGE_REQUESTS", default_value_t = 2)]
    pub max_large_requests: usize,
    /// Answer Neotoma's tools in full, as if every call passed `verbose:
    /// true` (a call may still pass `verbose: false`). By default answers
    /// leave out null, empty and bookkeeping fields (docs/actions.md).
    #[arg(long, env = "NEOTOMA_VERBOSE_ANSWERS")]
    pub verbose_answers: bool,
    /// Streamable HTTP sessions one user may keep open (opening another
    /// closes the user's least recently used one).
    #[arg(long, env = "NEOTOMA_SESSIONS_PER_USER", default_value_t = 16)]
    pub sessions_per_user: usize,
    /// Streamable HTTP sessions the process keeps open in all (then 503).
    #[arg(long, env = "NEOTOMA_MAX_SESSIONS", default_value_t = 1000)]
    pub max_sessions: usize,
    /// An HTTP session unused this many seconds is closed.
    #[arg(long, env = "NEOTOMA_SESSION_IDLE_SECS", default_value_t = 300)]
    pub session_idle_secs: u64,
    /// Host names to accept over HTTP besides localhost (DNS-rebinding guard).
    #[arg(
        long = "allowed-host",
        env = "NEOTOMA_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
    /// Browser origins to accept over HTTP besides loopback ones, e.g.
    /// https://app.example.com:443.
    #[arg(
        long = "allowed-origin",
        env = "NEOTOMA_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,
    /// Prometheus server that get_technical_metrics queries (base URL, e.g.
    /// http://127.0.0.1:9090); it should scrape this gateway's /metrics.
    #[arg(long, env = "NEOTOMA_PROMETHEUS_URL")]
    pub prometheus_url: Option<String>,
    /// Plaid API (https://sandbox.plaid.com, https://production.plaid.com).
    #[arg(
        long,
        env = "NEOTOMA_PLAID_URL",
        default_value = "https://sandbox.plaid.com"
    )]
    pub plaid_url: String,
    /// Plaid client_id (with --plaid-secret; without them the plaid_*
    /// actions answer PLAID_NOT_CONFIGURED).
    #[arg(long, env = "NEOTOMA_PLAID_CLIENT_ID")]
    pub plaid_client_id: Option<String>,
    /// Plaid secret.
    #[arg(long, env = "NEOTOMA_PLAID_SECRET", hide_env_values = true)]
    pub plaid_secret: Option<String>,
    /// Transactions per Plaid /transactions/sync page (1 to 500).
    #[arg(long, env = "NEOTOMA_PLAID_PAGE_SIZE", default_value_t = 100)]
    pub plaid_page_size: u32,
    /// File holding the key that encrypts connector secrets (Plaid access
    /// tokens, IMAP passwords) before they reach the database
    /// [default: <embedded data dir>/secrets.key, made on first use].
    #[arg(long, env = "NEOTOMA_SECRETS_KEY_FILE")]
    pub secrets_key_file: Option<PathBuf>,
    /// Let HTTP callers connect providers (IMAP servers) at private or
    /// loopback addresses; by default only stdio callers may (a stranger
    /// must not make this server reach its own network).
    #[arg(long, env = "NEOTOMA_ALLOW_PRIVATE_HOSTS")]
    pub allow_private_hosts: bool,
    /// How long an OAuth access token lives, in seconds.
    #[arg(long, env = "NEOTOMA_OAUTH_ACCESS_TOKEN_SECS", default_value_t = 3600)]
    pub oauth_access_token_secs: u64,
    /// How long an OAuth refresh token lives, in seconds (each use issues a
    /// new one).
    #[arg(long, env = "NEOTOMA_OAUTH_REFRESH_TOKEN_SECS", default_value_t = 30 * 86400)]
    pub oauth_refresh_token_secs: u64,
    /// Longest wait for an outside service (Plaid, IMAP, Prometheus), in seconds.
    #[arg(long, env = "NEOTOMA_SERVICE_TIMEOUT_SECS", default_value_t = 30)]
    pub service_timeout_secs: u64,
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
    /// Spread users over this many embedded partition clusters behind an
    /// embedded router (PL/Proxy), in <data-dir>/router and
    /// <data-dir>/partition-K on the ports after --pg-port
    /// (docs/scale-out.md); 0: one cluster.
    #[arg(long, env = "NEOTOMA_PARTITIONS", default_value_t = 0)]
    pub partitions: u16,
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

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq)]
pub enum TokenScope {
    User,
    Operator,
}

impl TokenScope {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenScope::User => "user",
            TokenScope::Operator => "operator",
        }
    }
}

/// A token's `--tools`: read as `serve --tools` reads it, kept in the
/// form it reads back as.
fn parse_token_tools(s: &str) -> Result<String, String> {
    neotoma_core::tool_sets::parse_selection(s).map(|selection| selection.describe())
}

/// A token's `--workspaces`: workspace names, kept sorted, without
/// repeats, comma-separated.
fn parse_token_workspaces(s: &str) -> Result<String, String> {
    neotoma_core::token_limits::TokenLimits::parse_workspaces(s)
        .map(|names| names.join(","))
        .map_err(|e| e.message)
}

/// `90`, `90s`, `15m`, `12h`, `30d`: a duration of at least a second.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration like 3600s, 90m, 12h or 30d"))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{s}`: the unit is s, m, h or d")),
    };
    match n.checked_mul(seconds) {
        Some(total) if total > 0 => Ok(std::time::Duration::from_secs(total)),
        _ => Err(format!("`{s}` is not a usable duration")),
    }
}

/// `neotoma.replica_reads`, as the extension takes it.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaReads {
    Off,
    Fresh,
    Stale,
}

impl ReplicaReads {
    pub fn as_str(self) -> &'static str {
        match self {
            ReplicaReads::Off => "off",
            ReplicaReads::Fresh => "fresh",
            ReplicaReads::Stale => "stale",
        }
    }
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub enum LogFormat {
    Text,
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap().as_secs(), 90);
        assert_eq!(parse_duration("15m").unwrap().as_secs(), 900);
        assert_eq!(parse_duration("12h").unwrap().as_secs(), 43_200);
        assert_eq!(parse_duration("30d").unwrap().as_secs(), 2_592_000);
        for bad in ["", "0", "5w", "h", "-5s", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn token_limits_parse_to_their_stored_form() {
        let cli = Cli::try_parse_from([
            "neotoma-mcp",
            "token",
            "create",
            "--user",
            "00000000-0000-0000-0000-000000000001",
            "--tools",
            "neotoma,memory",
            "--workspaces",
            "team, notes,team",
        ])
        .unwrap();
        let Some(Command::Token(TokenCommand::Create {
            tools, workspaces, ..
        })) = cli.command
        else {
            panic!("not token create");
        };
        assert_eq!(workspaces.as_deref(), Some("notes,team"));
        assert!(tools.is_some());
        for bad in ["", "Team", "a,,b"] {
            assert!(
                Cli::try_parse_from([
                    "neotoma-mcp",
                    "token",
                    "create",
                    "--user",
                    "00000000-0000-0000-0000-000000000001",
                    "--workspaces",
                    bad,
                ])
                .is_err(),
                "{bad}"
            );
        }
    }
}
