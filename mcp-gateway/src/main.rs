//! `neotoma-mcp`: the MCP gateway of Neotoma. It serves the action catalog of
//! the `neotoma` Postgres extension to agents over stdio (default) or
//! Streamable HTTP, turning each tool call into one SQL function call.

mod catalog;
mod cli;
mod database;
mod embedded;
mod http;
mod server;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, ClusterCommand, Command, LogFormat, ServeArgs};
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
    match cli.command.unwrap_or(Command::Serve(cli.serve)) {
        Command::Serve(args) => serve(args).await,
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
        Command::Cluster(ClusterCommand::Stop(args)) => {
            embedded::Embedded::new(&args.options())?.stop()
        }
    }
}

/// Resolves the database (URL, or the embedded cluster), loads the catalog
/// and serves MCP until the client goes away or a signal arrives.
async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let url = match &args.database_url {
        Some(url) => url.clone(),
        None => {
            let cluster = embedded::Embedded::new(&args.embedded.options())?;
            cluster.ensure_running()?;
            let url = cluster.ensure_database().await?;
            eprintln!(
                "neotoma-mcp: your Neotoma data lives in {} (private Postgres cluster, socket in {}, log {})",
                cluster.data_dir.display(),
                cluster.socket_dir.display(),
                cluster.log_file.display()
            );
            url
        }
    };
    let db = database::Database::connect(&database::DatabaseOptions {
        url,
        pool_size: args.pool_size,
        statement_timeout: std::time::Duration::from_millis(args.statement_timeout_ms),
        server_version: server::SERVER_VERSION.to_string(),
    })?;
    let catalog_json = db
        .query_json("SELECT neotoma.action_catalog()")
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context(
            "could not read neotoma.action_catalog(); is the extension created in this database?",
        )?;
    let catalog = catalog::Catalog::from_json(&catalog_json)?;
    tracing::info!(
        actions = catalog.actions.len(),
        catalog_version = %catalog.version,
        extension_version = %catalog.extension_version,
        "loaded the action catalog"
    );
    let state = Arc::new(server::AppState {
        db,
        catalog,
        default_user: args.user_id,
    });
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    match args.http {
        Some(addr) => {
            http::serve(
                state,
                http::HttpOptions {
                    addr,
                    allowed_hosts: args.allowed_hosts,
                },
                shutdown,
            )
            .await
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
