//! The gateway's only contact with Neotoma: a pool of Postgres connections and
//! one call per action, `SELECT neotoma.<action>($args)`, in one transaction,
//! with the acting user set for that transaction.

use crate::handshake::{self, Handshake};
use crate::identity::Caller;
#[cfg(feature = "http")]
use crate::identity::TokenIdentity;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
#[cfg(feature = "http")]
use std::time::SystemTime;
use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, NoTls};
use uuid::Uuid;

/// How long the gateway waits for a free connection or a new one.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The bound of the gateway's own reads and background work (see
/// [`Database::own_query_json`]), or the actions' own when that is longer.
const OWN_QUERY_LIMIT: Duration = Duration::from_secs(60);

#[derive(Clone)]
pub struct Database {
    pool: Pool,
    config: tokio_postgres::Config,
    statement_timeout: Duration,
    /// The login role may set `neotoma.operator` (it is a member of
    /// `neotoma_operator`); learnt by [`Database::handshake`].
    can_operate: Arc<std::sync::atomic::AtomicBool>,
    /// The login role may set `neotoma.token_id` (a member of
    /// `neotoma_service`).
    can_name_token: Arc<std::sync::atomic::AtomicBool>,
    /// The database is a router (docs/scale-out.md): files are read on
    /// their user's partition.
    router: Arc<std::sync::atomic::AtomicBool>,
}

/// Where changes happen and are heard: see [`Database::change_sources`].
#[derive(Clone)]
pub struct ChangeSource {
    /// The router's number of the partition; None on one server.
    pub partition: Option<i32>,
    pub db: Database,
}

#[derive(serde::Deserialize)]
struct PartitionConnection {
    partition: i32,
    connection: String,
}

/// Settings for [`Database::connect`].
pub struct DatabaseOptions {
    pub url: String,
    pub pool_size: usize,
    pub statement_timeout: Duration,
    /// Reported by `get_version` as `server_version`.
    pub server_version: String,
    /// The gateway can interpret files with a model (`neotoma.model_interpreter`).
    pub model_interpreter: bool,
    /// Base of signed file URLs (`neotoma.public_url`).
    pub public_url: Option<String>,
    /// `neotoma.replica_reads` (a router's read replicas), when not off.
    pub replica_reads: Option<&'static str>,
}

impl Database {
    /// Builds the pool. Connections are made lazily; call [`Database::ping`]
    /// to check the database is there.
    pub fn connect(opts: &DatabaseOptions) -> anyhow::Result<Self> {
        let mut pg: tokio_postgres::Config = opts.url.parse()?;
        pg.application_name("neotoma-mcp");
        pg.connect_timeout(CONNECT_TIMEOUT);
        // statement_timeout bounds every call; neotoma.server_version lets
        // get_version report the gateway's version.
        let mut options = format!(
            "-c statement_timeout={} -c neotoma.server_version={}",
            opts.statement_timeout.as_millis(),
            opts.server_version
        );
        if opts.model_interpreter {
            options.push_str(" -c neotoma.model_interpreter=on");
        }
        if let Some(mode) = opts.replica_reads {
            options.push_str(&format!(" -c neotoma.replica_reads={mode}"));
        }
        if let Some(url) = &opts.public_url {
            options.push_str(&format!(
                " -c neotoma.public_url={}",
                url.replace(' ', "%20")
            ));
        }
        pg.options(options);
        Self::with_config(pg, opts.pool_size, opts.statement_timeout)
    }

    fn with_config(
        pg: tokio_postgres::Config,
        pool_size: usize,
        statement_timeout: Duration,
    ) -> anyhow::Result<Self> {
        let manager = Manager::from_config(
            pg.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()?;
        Ok(Database {
            pool,
            config: pg,
            statement_timeout,
            can_operate: Arc::default(),
            can_name_token: Arc::default(),
            router: Arc::default(),
        })
    }

    /// Asks the database its installed version and what this gateway's
    /// role may do (crate::handshake), and remembers the latter: without
    /// `neotoma_operator`, operator tokens and stdio act as ordinary users
    /// (the database refuses what needs an operator). Asked at start and
    /// at each readiness check, so an update or a grant is seen.
    pub async fn handshake(&self) -> Result<Handshake, NeotomaError> {
        // Bounded as the gateway's own queries are.
        let answer = handshake::ask(|sql| self.own_query_json(sql)).await?;
        let remember = |flag: &std::sync::atomic::AtomicBool, value| {
            flag.store(value, std::sync::atomic::Ordering::SeqCst)
        };
        remember(&self.can_operate, answer.operator);
        remember(&self.can_name_token, answer.token_context);
        remember(&self.router, answer.router);
        Ok(answer)
    }

    /// Where this gateway hears of changes (the channel `neotoma_changes`):
    /// the database itself; on a router, each partition, which the router
    /// names (`neotoma_router.partition_connections`) and the gateway
    /// reaches as its own login (DATABASE_URL's user and password), with a
    /// pool of its own for the snapshot bounds the change feeds need
    /// (docs/scale-out.md). Read once, at start.
    pub async fn change_sources(&self) -> anyhow::Result<Vec<ChangeSource>> {
        if !self.is_router() {
            return Ok(vec![ChangeSource {
                partition: None,
                db: self.clone(),
            }]);
        }
        let named = self
            .own_query_json("SELECT neotoma_router.partition_connections()")
            .await
            .map_err(|e| anyhow::anyhow!("could not read the router's partitions: {e}"))?;
        let named: Vec<PartitionConnection> = serde_json::from_value(named)?;
        named
            .into_iter()
            .map(|p| {
                let mut pg: tokio_postgres::Config = p.connection.parse().map_err(|e| {
                    anyhow::anyhow!("partition {}'s connection string: {e}", p.partition)
                })?;
                if let Some(user) = self.config.get_user() {
                    pg.user(user);
                }
                if let Some(password) = self.config.get_password() {
                    pg.password(password);
                }
                pg.application_name("neotoma-mcp");
                pg.connect_timeout(CONNECT_TIMEOUT);
                Ok(ChangeSource {
                    partition: Some(p.partition),
                    db: Self::with_config(pg, 2, self.statement_timeout)?,
                })
            })
            .collect()
    }

    /// The database is a router (docs/scale-out.md), as the last handshake
    /// said.
    pub fn is_router(&self) -> bool {
        self.router.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Listens to `channel` for as long as the process runs, reconnecting
    /// when the connection is lost, and tells `listener` of each payload
    /// and of the channel going up and down.
    pub fn listen(&self, channel: &'static str, listener: Arc<dyn Listener>) {
        let config = self.config.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = listen_once(&config, channel, listener.as_ref()).await {
                    tracing::debug!(error = %e, channel, "notification channel lost");
                }
                listener.listening(false);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    /// Runs a query with parameters that returns one jsonb value.
    pub async fn query_json_with(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Value, NeotomaError> {
        let client = self.pool.get().await.map_err(unavailable)?;
        let row = client
            .query_one(sql, params)
            .await
            .map_err(|e| map_pg_error(e, ErrorCode::DbQueryFailed))?;
        row.try_get::<_, Value>(0)
            .map_err(|e| map_pg_error(e, ErrorCode::DbQueryFailed))
    }

    /// Runs a query that returns one jsonb value.
    pub async fn query_json(&self, sql: &str) -> Result<Value, NeotomaError> {
        self.query_json_with(sql, &[]).await
    }

    /// Runs one of the gateway's own queries (start-up reads, readiness,
    /// the embeddings worker, upkeep), which returns one jsonb value. They
    /// are not actions: `--statement-timeout-ms` bounds actions only, so a
    /// gateway told to cut actions short still starts on a busy server and
    /// still embeds. [`OWN_QUERY_LIMIT`] bounds them instead, or the
    /// actions' bound when that is longer (none when actions have none).
    pub async fn own_query_json(&self, sql: &str) -> Result<Value, NeotomaError> {
        self.own_query(sql, &[], Some(OWN_QUERY_LIMIT)).await
    }

    /// [`Database::own_query_json`] with parameters.
    pub async fn own_query_json_with(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Value, NeotomaError> {
        self.own_query(sql, params, Some(OWN_QUERY_LIMIT)).await
    }

    /// One of the gateway's own queries without any bound: a large user's
    /// list build takes minutes.
    pub async fn unbounded_query_json(&self, sql: &str) -> Result<Value, NeotomaError> {
        self.own_query(sql, &[], None).await
    }

    async fn own_query(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        limit: Option<Duration>,
    ) -> Result<Value, NeotomaError> {
        let failed = |e| map_pg_error(e, ErrorCode::DbQueryFailed);
        let mut client = self.pool.get().await.map_err(unavailable)?;
        let tx = client.transaction().await.map_err(failed)?;
        let ms = match limit {
            Some(l) if !self.statement_timeout.is_zero() => {
                l.max(self.statement_timeout).as_millis().max(1)
            }
            _ => 0,
        };
        tx.batch_execute(&format!("SET LOCAL statement_timeout = {ms}"))
            .await
            .map_err(failed)?;
        let row = tx.query_one(sql, params).await.map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        row.try_get::<_, Value>(0).map_err(failed)
    }

    #[cfg(feature = "http")]
    /// A stored file behind a signed URL: (MIME type, file name, bytes), or
    /// None when the signature is wrong, expired or revoked.
    pub async fn signed_file(
        &self,
        user: Uuid,
        source: Uuid,
        expires: i64,
        kid: Uuid,
        sig: &str,
    ) -> Result<Option<(Option<String>, Option<String>, Vec<u8>)>, NeotomaError> {
        let client = self.pool.get().await.map_err(unavailable)?;
        let sql = if self.is_router() {
            "SELECT mime_type, original_filename, content FROM neotoma_router.signed_file($1, $2, $3, $4, $5)"
        } else {
            "SELECT mime_type, original_filename, content FROM neotoma.signed_file($1, $2, $3, $4, $5)"
        };
        let row = client
            .query_opt(sql, &[&user, &source, &expires, &kid, &sig])
            .await
            .map_err(|e| map_pg_error(e, ErrorCode::DbQueryFailed))?;
        Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
    }

    /// The bytes of a stored file of `caller`'s, as bytea (for the model
    /// interpreter). Read with the caller's user set, so row level security
    /// decides as for any action.
    pub async fn file_content(
        &self,
        caller: &Caller,
        source: Uuid,
    ) -> Result<Vec<u8>, NeotomaError> {
        let read = |e| map_pg_error(e, ErrorCode::DbQueryFailed);
        let mut client = self.pool.get().await.map_err(unavailable)?;
        let tx = client.transaction().await.map_err(read)?;
        tx.execute(
            "SELECT set_config('neotoma.user_id', $1, true)",
            &[&caller.user.to_string()],
        )
        .await
        .map_err(read)?;
        // Through a router, on the user's partition (the user it names).
        let row = if self.is_router() {
            tx.query_opt(
                "SELECT neotoma_router.file_content($1, $2)",
                &[&caller.user, &source],
            )
            .await
        } else {
            tx.query_opt("SELECT neotoma.file_content($1)", &[&source])
                .await
        }
        .map_err(read)?;
        tx.commit().await.map_err(read)?;
        // Buffers as large as the file stay with the connection: closed, not pooled.
        drop(deadpool_postgres::Object::take(client));
        let content: Option<Vec<u8>> = row.and_then(|r| r.get(0));
        content.ok_or_else(|| {
            NeotomaError::new(
                ErrorCode::FileNotFound,
                format!("no file for source {source}"),
            )
        })
    }

    #[cfg(feature = "http")]
    /// What a token (by its hash) stands for, if it is valid.
    pub async fn authenticate(
        &self,
        token_hash: &str,
    ) -> Result<Option<TokenIdentity>, NeotomaError> {
        let client = self.pool.get().await.map_err(unavailable)?;
        let statement = client
            .prepare_cached(
                "SELECT t.user_id, t.scope, extract(epoch FROM t.expires_at)::float8, \
                        (to_jsonb(t) ->> 'id')::uuid, to_jsonb(t) ->> 'resource', \
                        coalesce((to_jsonb(t) ->> 'read_only')::boolean, false), to_jsonb(t) ->> 'tools', \
                        to_jsonb(t) -> 'workspaces' \
                 FROM neotoma.authenticate_token($1) t",
            )
            .await
            .map_err(|e| map_pg_error(e, ErrorCode::DbQueryFailed))?;
        let row = client
            .query_opt(&statement, &[&token_hash])
            .await
            .map_err(|e| map_pg_error(e, ErrorCode::DbQueryFailed))?;
        let Some(row) = row else { return Ok(None) };
        let read = |e| map_pg_error(e, ErrorCode::DbQueryFailed);
        let user: Uuid = row.try_get(0).map_err(read)?;
        let scope: String = row.try_get(1).map_err(read)?;
        let expires: Option<f64> = row.try_get(2).map_err(read)?;
        let id: Option<Uuid> = row.try_get(3).map_err(read)?;
        let resource: Option<String> = row.try_get(4).map_err(read)?;
        let read_only: bool = row.try_get(5).map_err(read)?;
        let tools: Option<String> = row.try_get(6).map_err(read)?;
        let workspaces: Option<serde_json::Value> = row.try_get(7).map_err(read)?;
        let workspaces: Option<Vec<String>> =
            workspaces.and_then(|w| serde_json::from_value(w).ok());
        Ok(Some(TokenIdentity {
            user,
            id,
            resource,
            limits: neotoma_core::token_limits::TokenLimits::new(read_only, tools.as_deref())
                .in_workspaces(workspaces),
            operator: scope == "operator",
            expires_at: expires
                .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs_f64(s.max(0.0))),
        }))
    }

    #[cfg(feature = "http")]
    /// Notes that a token (by its hash) was used, for `token list` (the
    /// database keeps the minute). A database before 0.24.0 cannot: its
    /// refusal is only logged.
    pub async fn touch_token(&self, token_hash: &str) {
        let touched = async {
            let client = self.pool.get().await.map_err(unavailable)?;
            client
                .execute("SELECT neotoma.touch_api_token($1)", &[&token_hash])
                .await
                .map_err(|e| map_pg_error(e, ErrorCode::DbQueryFailed))
        };
        if let Err(e) = touched.await {
            tracing::debug!(error = %e, "could not note a token's use");
        }
    }

    #[cfg(feature = "http")]
    /// Connections in use and idle, and the pool's size, for metrics.
    pub fn pool_status(&self) -> (usize, usize, usize) {
        let s = self.pool.status();
        (s.size.saturating_sub(s.available), s.available, s.max_size)
    }

    /// Runs `sql_function(args)` for `caller`, in one transaction (a single
    /// statement in autocommit mode: the user, and whether it acts as an
    /// operator, are set with `set_config(.., true)`, which lasts exactly that
    /// transaction).
    pub async fn call(
        &self,
        sql_function: &str,
        caller: &Caller,
        args: &Value,
        write: bool,
    ) -> Result<Value, NeotomaError> {
        self.call_with(sql_function, caller, args, write, &[]).await
    }

    /// [`Database::call`] with more `neotoma.*` settings for the call
    /// (`set_config(.., true)`: that transaction only).
    pub async fn call_with(
        &self,
        sql_function: &str,
        caller: &Caller,
        args: &Value,
        write: bool,
        settings: &[(&'static str, String)],
    ) -> Result<Value, NeotomaError> {
        // Postgres text holds no NUL character: refused here as the
        // extension refuses one inside a value it reads, naming where.
        if let Some(at) = nul_at(args, "") {
            return Err(NeotomaError::invalid_field(
                if at.is_empty() { "arguments" } else { &at },
                "text may not contain NUL characters (\\u0000)",
            ));
        }
        let fallback = if write {
            ErrorCode::DbInsertFailed
        } else {
            ErrorCode::DbQueryFailed
        };
        // A role that may not set neotoma.operator is never an operator, so
        // it need not (and could not) say so.
        let operator_setting = if self.can_operate.load(std::sync::atomic::Ordering::SeqCst) {
            "set_config('neotoma.operator', $3, true)"
        } else {
            "$3::text"
        };
        // Which token the call came with: its context applies.
        let token = caller
            .token
            .filter(|_| {
                self.can_name_token
                    .load(std::sync::atomic::Ordering::SeqCst)
            })
            .map(|t| ("neotoma.token_id", t.to_string()));
        let settings: Vec<(&'static str, String)> = settings.iter().cloned().chain(token).collect();
        let extra: String = settings
            .iter()
            .enumerate()
            .map(|(i, (name, _))| format!(", set_config('{name}', ${}, true)", i + 4))
            .collect();
        let sql = format!(
            "SELECT {sql_function}($2::jsonb) \
             FROM (SELECT set_config('neotoma.user_id', $1, true), {operator_setting}{extra}) AS acting_user"
        );
        let user = caller.user.to_string();
        let operator = if caller.operator { "on" } else { "off" };
        let work = || async {
            let client = self.pool.get().await.map_err(unavailable)?;
            let statement = client
                .prepare_cached(&sql)
                .await
                .map_err(|e| map_pg_error(e, fallback))?;
            let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                vec![&user, args, &operator];
            params.extend(
                settings
                    .iter()
                    .map(|(_, v)| v as &(dyn tokio_postgres::types::ToSql + Sync)),
            );
            let row = client
                .query_one(&statement, &params)
                .await
                .map_err(|e| map_pg_error(e, fallback));
            // A connection that carried a file keeps buffers as large as the
            // file for as long as it lives: it is closed, not pooled.
            if carries_file(args) {
                drop(deadpool_postgres::Object::take(client));
            }
            row?.try_get::<_, Value>(0)
                .map_err(|e| map_pg_error(e, fallback))
        };
        // A call that lost a deadlock or a serialization conflict was
        // rolled back whole: it runs again, a few times, before answering
        // the conflict. Postgres' statement_timeout ends a slow call; the
        // timeout here is the backstop for a connection that stops
        // answering altogether.
        let mut attempt = 1;
        loop {
            let result =
                match tokio::time::timeout(self.statement_timeout + CONNECT_TIMEOUT * 2, work())
                    .await
                {
                    Ok(result) => result,
                    Err(_) => Err(timeout_error(format!(
                        "no answer within {} ms",
                        (self.statement_timeout + CONNECT_TIMEOUT * 2).as_millis()
                    ))),
                };
            match result {
                Err(e) if attempt < CONFLICT_ATTEMPTS && lost_a_conflict(&e) => {
                    tokio::time::sleep(std::time::Duration::from_millis(5 * attempt)).await;
                    attempt += 1;
                }
                result => return result,
            }
        }
    }
}

/// Where `v` holds a NUL character, in a string or a key: the path of the
/// first (`a.b.2`), or None.
fn nul_at(v: &Value, path: &str) -> Option<String> {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match v {
        Value::String(s) => s.contains('\0').then(|| path.to_string()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| nul_at(x, &at(&i.to_string()))),
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            if k.contains('\0') {
                Some(at(&k.replace('\0', "\\u0000")))
            } else {
                nul_at(x, &at(k))
            }
        }),
        _ => None,
    }
}

/// How often a call that lost a deadlock or serialization conflict runs.
const CONFLICT_ATTEMPTS: u64 = 4;

/// A deadlock or serialization failure: the transaction was rolled back,
/// and running it again may succeed.
fn lost_a_conflict(e: &NeotomaError) -> bool {
    matches!(
        e.details.get("sqlstate").and_then(Value::as_str),
        Some("40P01") | Some("40001")
    )
}

/// What hears a channel's notifications ([`Database::listen`]).
pub trait Listener: Send + Sync + 'static {
    /// The channel is up (LISTEN done) or lost: notifications may have been
    /// missed while it was down.
    fn listening(&self, up: bool);
    fn notified(&self, payload: &str);
}

/// One life of the notification connection: LISTEN, then hand each payload
/// to `listener`, until the connection ends.
async fn listen_once(
    config: &tokio_postgres::Config,
    channel: &str,
    listener: &dyn Listener,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        use futures_util::StreamExt;
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if tx.send(n.payload().to_string()).is_err() {
                        break;
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    client.batch_execute(&format!("LISTEN {channel}")).await?;
    listener.listening(true);
    tracing::debug!(channel, "listening");
    while let Some(payload) = rx.recv().await {
        listener.notified(&payload);
    }
    listener.listening(false);
    match driver.await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}

/// Arguments count as large from this many bytes of one string (a file).
pub const LARGE_ARGUMENT_BYTES: usize = 1024 * 1024;

/// Whether a call's arguments carry a file (a string of a megabyte or more).
pub fn carries_file(args: &Value) -> bool {
    args.as_object().is_some_and(|o| {
        o.values()
            .any(|v| v.as_str().is_some_and(|s| s.len() >= LARGE_ARGUMENT_BYTES))
    })
}

fn unavailable(e: deadpool_postgres::PoolError) -> NeotomaError {
    NeotomaError::new(
        ErrorCode::ServiceUnavailable,
        "the database is unreachable; retry shortly",
    )
    .with("reason", e.to_string())
    .with("retryable", true)
}

fn timeout_error(reason: String) -> NeotomaError {
    NeotomaError::new(
        ErrorCode::DbQueryFailed,
        "the action timed out and was cancelled; retry, or narrow the request (smaller limit or batch)",
    )
    .with("reason", reason)
    .with("retryable", true)
}

/// Maps a Postgres failure to the seed's error codes: an NT001 error carries
/// the action's own envelope; anything else becomes `fallback` (or
/// `SERVICE_UNAVAILABLE` when the connection itself failed).
pub fn map_pg_error(e: tokio_postgres::Error, fallback: ErrorCode) -> NeotomaError {
    let Some(db) = e.as_db_error() else {
        return NeotomaError::new(
            ErrorCode::ServiceUnavailable,
            "lost the connection to the database; retry shortly",
        )
        .with("reason", e.to_string())
        .with("retryable", true);
    };
    if db.code().code() == neotoma_core::error::SQLSTATE
        && let Some(err) = db
            .detail()
            .and_then(|d| serde_json::from_str::<Value>(d).ok())
            .and_then(|v| NeotomaError::from_json(&v))
    {
        return err;
    }
    if *db.code() == SqlState::QUERY_CANCELED {
        return timeout_error(db.message().to_string());
    }
    if *db.code() == SqlState::UNDEFINED_FUNCTION || *db.code() == SqlState::INVALID_SCHEMA_NAME {
        return NeotomaError::new(
            ErrorCode::ServiceUnavailable,
            "the neotoma extension is missing or older than this gateway; run CREATE EXTENSION neotoma / ALTER EXTENSION neotoma UPDATE",
        )
        .with("sqlstate", db.code().code());
    }
    let retryable = matches!(
        db.code().code().get(..2),
        Some("40") | Some("53") | Some("57") | Some("08")
    );
    NeotomaError::new(fallback, format!("database error: {}", db.message()))
        .with("sqlstate", db.code().code())
        .with("retryable", retryable)
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_a_nul_character_anywhere() {
        use serde_json::json;
        assert_eq!(
            super::nul_at(&json!({"a": ["x", "y\u{0}"]}), ""),
            Some("a.1".into())
        );
        assert_eq!(
            super::nul_at(&json!({"k\u{0}": 1}), ""),
            Some("k\\u0000".into())
        );
        assert_eq!(
            super::nul_at(&json!({"a": "fine", "b": [1, {"c": null}]}), ""),
            None
        );
    }
}
