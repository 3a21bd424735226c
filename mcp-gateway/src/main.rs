//! `neotoma-mcp`: the MCP gateway of Neotoma. It serves the action catalog of
//! the `neotoma` Postgres extension to agents over stdio (default) or
//! Streamable HTTP, turning each tool call into one SQL function call.

#[cfg(feature = "http")]
mod auth;
mod catalog;
mod cli;
mod database;
mod embedded;
mod embeddings;
mod files;
mod handshake;
#[cfg(feature = "http")]
mod html;
#[cfg(feature = "http")]
mod http;
mod identity;
#[cfg(feature = "http")]
mod inspector;
mod instructions;
mod interpreter;
mod limits;
mod metrics;
#[cfg(any(feature = "http", feature = "services"))]
mod net;
#[cfg(feature = "http")]
mod oauth;
mod partition;
mod server;
#[cfg(feature = "services")]
mod services;
#[cfg(feature = "http")]
mod sessions;
mod subscriptions;
mod transfer;
mod upkeep;
#[cfg(feature = "http")]
mod web;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, ClusterCommand, Command, DbArgs, LogFormat, ServeArgs, TokenCommand};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

fn init_logging(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_env("NEOTOMA_LOG").unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"));
    // stdout belongs to the MCP stdio transport: logs go to stderr.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_logging(cli.log_format);
    let command = cli.command.unwrap_or(Command::Serve(Box::new(cli.serve)));
    if !matches!(command, Command::Serve(_)) {
        // A command's output piped into a reader that stops early (`| head`)
        // ends the command quietly, as any Unix tool does, rather than
        // panicking on the closed pipe. The server keeps ignoring SIGPIPE:
        // a client gone is an error to handle, not a reason to exit.
        // SAFETY: setting a signal's disposition before any thread writes.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    match command {
        Command::Serve(args) => serve(*args).await,
        Command::Cluster(ClusterCommand::Status(args)) => {
            let cluster = embedded::Embedded::new(&args.options())?;
            println!(
                "data directory: {}\nrunning: {}\nurl: {}",
                cluster.data_dir.display(),
                cluster.is_running(),
                cluster.url(embedded::APP_ROLE, "neotoma")
            );
            Ok(())
        }
        Command::Cluster(ClusterCommand::Stop(args)) => match args.partitions {
            0 => embedded::Embedded::new(&args.options())?.stop(),
            n => embedded::stop_partitioned(&args.options(), n),
        },
        Command::Token(command) => token(command).await,
        #[cfg(feature = "http")]
        Command::Login(command) => {
            let url = database_url(command.db(), true).await?;
            oauth::logins::command(command, &url).await
        }
        #[cfg(not(feature = "http"))]
        Command::Login(_) => anyhow::bail!(
            "this neotoma-mcp was built without HTTP (cargo feature `http`), where logins are used"
        ),
        Command::Partition(cli::PartitionCommand::Move { user, to, db }) => {
            let url = database_url(&db, true).await?;
            partition::move_user(&url, user, to).await
        }
        Command::Export { user, out, db } => {
            let url = database_url(&db, false).await?;
            transfer::export(&url, user, &out).await
        }
        Command::Import {
            user,
            file,
            format,
            db,
        } => {
            let url = database_url(&db, false).await?;
            match format {
                cli::ImportFormat::Neotoma => transfer::import(&url, user, &file).await,
                cli::ImportFormat::MemoryJsonl => transfer::import_memory(&url, user, &file).await,
            }
        }
    }
}

/// The database URL to use: the given one, or the embedded cluster's (started
/// and set up when needed) for `role`.
async fn database_url(db: &DbArgs, admin: bool) -> anyhow::Result<String> {
    if let Some(url) = &db.database_url {
        return Ok(url.clone());
    }
    let (cluster, app_url) = match db.embedded.partitions {
        0 => {
            let cluster = embedded::Embedded::new(&db.embedded.options())?;
            cluster.ensure_running()?;
            let app_url = cluster.ensure_database().await?;
            (cluster, app_url)
        }
        n => {
            let router = embedded::ensure_partitioned(&db.embedded.options(), n).await?;
            let app_url = router.url(embedded::APP_ROLE, "neotoma");
            (router, app_url)
        }
    };
    eprintln!(
        "neotoma-mcp: your Neotoma data lives in {} (private Postgres cluster, socket in {}, log {})",
        cluster.data_dir.display(),
        cluster.socket_dir.display(),
        cluster.log_file.display()
    );
    Ok(if admin { cluster.admin_url() } else { app_url })
}

async fn token(command: TokenCommand) -> anyhow::Result<()> {
    let db = match &command {
        TokenCommand::Create { db, .. }
        | TokenCommand::Revoke { db, .. }
        | TokenCommand::List { db } => db,
    };
    let url = database_url(db, true).await?;
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .with_context(|| "could not connect to the database")?;
    tokio::spawn(connection);
    match command {
        TokenCommand::Create {
            user,
            name,
            scope,
            expires_in,
            read_only,
            tools,
            workspaces,
            ..
        } => {
            let token = identity::new_token()?;
            let seconds = expires_in.map(|d| d.as_secs() as f64);
            let hash = identity::hash_token(&token);
            // Limits need 0.24.0's function; without them, any version's.
            let limited = read_only || tools.is_some() || workspaces.is_some();
            let workspaces: Option<Vec<&str>> =
                workspaces.as_deref().map(|w| w.split(',').collect());
            let row = if limited {
                client
                    .query_one(
                        "SELECT neotoma.create_api_token($1, $2, $3, $4, $5, $6, $7, $8)",
                        &[
                            &user,
                            &hash,
                            &name,
                            &scope.as_str(),
                            &seconds,
                            &read_only,
                            &tools,
                            &workspaces,
                        ],
                    )
                    .await
            } else {
                client
                    .query_one(
                        "SELECT neotoma.create_api_token($1, $2, $3, $4, $5)",
                        &[&user, &hash, &name, &scope.as_str(), &seconds],
                    )
                    .await
            }
            .context("could not create the token (token management needs an operator's or administrator's connection; limits need the extension 0.24.0; an operator token cannot be limited)")?;
            let created: serde_json::Value = row.get(0);
            let expires = created["expires_at"]
                .as_str()
                .map_or("never expires".to_string(), |e| format!("expires {e}"));
            let mut limits = Vec::new();
            if read_only {
                limits.push("read-only".to_string());
            }
            if let Some(t) = &tools {
                limits.push(format!("tools {t}"));
            }
            if let Some(w) = &workspaces {
                limits.push(format!("workspaces {}", w.join(",")));
            }
            eprintln!(
                "token {} for user {user}, scope {}{}, {expires} (shown once; store it safely):",
                created["id"].as_str().unwrap_or_default(),
                scope.as_str(),
                limits.iter().map(|l| format!(", {l}")).collect::<String>(),
            );
            println!("{token}");
        }
        TokenCommand::Revoke { token_id, .. } => {
            let row = client
                .query_one("SELECT neotoma.revoke_api_token($1)", &[&token_id])
                .await
                .context("could not revoke the token")?;
            let revoked: bool = row.get(0);
            anyhow::ensure!(revoked, "no active token {token_id}");
            println!("revoked {token_id}");
        }
        TokenCommand::List { .. } => {
            let row = client
                .query_one("SELECT neotoma.list_api_tokens()", &[])
                .await
                .context("could not list tokens")?;
            let tokens: serde_json::Value = row.get(0);
            println!("{}", serde_json::to_string_pretty(&tokens)?);
        }
    }
    Ok(())
}

/// Resolves the database (URL, or the embedded cluster), loads the catalog
/// and serves MCP until the client goes away or a signal arrives.
async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let url = database_url(
        &DbArgs {
            database_url: args.database_url.clone(),
            embedded: args.embedded.clone(),
        },
        false,
    )
    .await?;
    let public_url = args
        .public_url
        .clone()
        .or_else(|| args.http.map(|addr| format!("http://{addr}")));
    #[cfg(feature = "http")]
    let oauth_url = public_url.clone();
    #[cfg(not(feature = "http"))]
    anyhow::ensure!(
        args.http.is_none(),
        "this neotoma-mcp was built without HTTP (cargo feature `http`): serve over stdio"
    );
    let model = match &args.model_url {
        Some(url) => Some(interpreter::ModelInterpreter::new(
            interpreter::ModelOptions {
                base_url: url.clone(),
                model: args.model.clone(),
                api_key: args.model_api_key.clone(),
                timeout: std::time::Duration::from_secs(args.model_timeout_secs),
            },
        )?),
        None => None,
    };
    let embedder = match &args.embeddings_url {
        Some(url) => Some(embeddings::Embedder::new(embeddings::EmbeddingsOptions {
            base_url: url.clone(),
            model: args.embeddings_model.clone(),
            api_key: args.embeddings_api_key.clone(),
            timeout: std::time::Duration::from_secs(args.embeddings_timeout_secs.max(1)),
        })?),
        None => None,
    };
    let db = database::Database::connect(&database::DatabaseOptions {
        url,
        pool_size: args.pool_size,
        statement_timeout: std::time::Duration::from_millis(args.statement_timeout_ms),
        server_version: server::SERVER_VERSION.to_string(),
        model_interpreter: model.is_some(),
        public_url,
        replica_reads: (args.replica_reads != cli::ReplicaReads::Off)
            .then(|| args.replica_reads.as_str()),
    })?;
    let catalog_json = db
        .own_query_json("SELECT neotoma.action_catalog()")
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context(
            "could not read neotoma.action_catalog(); is the extension created in this database?",
        )?;
    let asked = db.handshake().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    handshake::supports_extension(&asked.extension_version).map_err(anyhow::Error::msg)?;
    #[cfg(feature = "http")]
    let oauth = match oauth_url {
        Some(public_url) if args.http.is_some() && !args.no_auth => {
            Some(Arc::new(oauth::OAuth::new(&oauth::OAuthOptions {
                public_url,
                access_token_secs: args.oauth_access_token_secs,
                refresh_token_secs: args.oauth_refresh_token_secs,
                allow_private_hosts: args.allow_private_hosts,
            })))
        }
        _ => None,
    };
    let catalog = catalog::Catalog::from_json(&catalog_json, &args.tools)?;
    for set in &args.tools.sets {
        anyhow::ensure!(
            catalog.actions.iter().any(|a| a.tool_set == *set),
            "the extension (version {}) has no tool set `{}`: ALTER EXTENSION neotoma UPDATE",
            catalog.extension_version,
            set.name()
        );
    }
    tracing::info!(
        actions = catalog.actions.len(),
        tools = catalog.tools().len(),
        tool_sets = %args.tools.sets.iter().map(|s| s.name()).collect::<Vec<_>>().join(","),
        groups = %args.tools.groups.iter().map(|g| g.name()).collect::<Vec<_>>().join(","),
        catalog_version = %catalog.version,
        extension_version = %catalog.extension_version,
        "loaded the action catalog"
    );
    if args.http.is_some() && args.no_auth {
        tracing::warn!(user = %args.user_id, "HTTP without tokens: every request acts for one user");
    }
    if !asked.operator {
        tracing::warn!(
            "the database role is not a member of neotoma_operator: operator tokens and stdio \
             act as ordinary users (global schemas cannot be changed through this gateway)"
        );
    }
    #[cfg(feature = "http")]
    let tokens = Arc::new(auth::TokenCache::default());
    #[cfg(feature = "http")]
    if args.http.is_some() && !args.no_auth {
        db.listen(auth::TOKEN_CHANNEL, tokens.clone());
    }
    let file_roots = files::FileRoots::new(&args.file_roots)?;
    let sources = match db.change_sources().await {
        Ok(sources) => sources,
        // A router not yet updated (neotoma_router 0.1.0): served as before,
        // without hearing the partitions' changes.
        Err(e)
            if e.to_string()
                .contains("partition_connections() does not exist") =>
        {
            tracing::warn!(error = %e, "subscriptions and the embeddings worker hear no partition: ALTER EXTENSION neotoma_router UPDATE");
            vec![database::ChangeSource {
                partition: None,
                db: db.clone(),
            }]
        }
        Err(e) => return Err(e),
    };
    let hub = subscriptions::Hub::new(db.clone(), sources.clone());
    hub.start();
    if let Some(embedder) = &embedder {
        for source in sources {
            embeddings::Worker::start(db.clone(), source, embedder.clone()).await;
        }
    }
    upkeep::start(db.clone(), asked.router);
    let state = Arc::new(server::AppState {
        db,
        catalog,
        default_user: args.user_id,
        limits: limits::RateLimits::new(&args.rate_limits),
        metrics: Arc::new(metrics::Metrics::new()),
        model,
        embedder,
        max_file_bytes: args.max_file_mb * 1024 * 1024,
        file_roots,
        #[cfg(feature = "services")]
        services: services::Services::new(&services::ServiceOptions {
            prometheus_url: args.prometheus_url.clone(),
            plaid: services::plaid::PlaidOptions {
                url: args.plaid_url.clone(),
                client_id: args.plaid_client_id.clone(),
                secret: args.plaid_secret.clone(),
                page_size: args.plaid_page_size,
            },
            secrets_key_file: args.secrets_key_file.clone().unwrap_or_else(|| {
                args.embedded
                    .data_dir
                    .clone()
                    .unwrap_or_else(embedded::default_data_dir)
                    .join("secrets.key")
            }),
            timeout: std::time::Duration::from_secs(args.service_timeout_secs.max(1)),
            allow_private_hosts: args.allow_private_hosts,
        })?,
        large_calls: tokio::sync::Semaphore::new(args.max_large_requests.max(1)),
        hub,
        verbose_answers: args.verbose_answers,
        denials: limits::SlidingWindow::new(1, std::time::Duration::from_secs(60)),
    });
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    #[cfg(not(feature = "http"))]
    return serve_stdio(state, shutdown).await;
    #[cfg(feature = "http")]
    match args.http {
        Some(addr) => {
            let opts = http::HttpOptions {
                addr,
                allowed_hosts: args.allowed_hosts,
                allowed_origins: args.allowed_origins,
                max_large_requests: args.max_large_requests,
                sessions_per_user: args.sessions_per_user,
                max_sessions: args.max_sessions,
                session_idle: std::time::Duration::from_secs(args.session_idle_secs.max(1)),
            };
            let web = http::Web {
                require_tokens: !args.no_auth,
                tokens,
                oauth,
                inspector: inspector::InspectorSessions::new(args.sessions_per_user),
            };
            http::serve(state, web, opts, shutdown).await
        }
        None => serve_stdio(state, shutdown).await,
    }
}

async fn serve_stdio(
    state: Arc<server::AppState>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    tracing::info!("serving MCP over stdio");
    let running = server::Gateway::new(state)
        .serve(rmcp::transport::stdio())
        .await?;
    let cancel = running.cancellation_token();
    tokio::select! {
        r = running.waiting() => { r?; }
        _ = shutdown.cancelled() => { cancel.cancel(); }
    }
    Ok(())
}

/// Cancels `token` on SIGINT or SIGTERM.
async fn cancel_on_signal(token: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    tracing::info!("shutting down");
    token.cancel();
}
