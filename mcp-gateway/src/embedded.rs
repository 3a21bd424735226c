//! The embedded default: with no database URL, the gateway runs a private
//! Postgres cluster in a data directory of its own, creates the `neotoma`
//! database and extension in it, and serves. A second start reuses it.
//!
//! The cluster listens on a Unix socket inside the data directory only (no
//! TCP port), so only this OS user (and root) can reach it. `initdb` refuses
//! to run as root, so when started as root the cluster runs as another OS
//! user (`postgres` by default) and lives under /var/lib/neotoma.

use anyhow::{Context, bail};
use nix::unistd::{User, geteuid};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use tokio_postgres::NoTls;

/// Superuser created by initdb; used only to set the database up.
const ADMIN_ROLE: &str = "neotoma";
/// Role the gateway acts as: not a superuser, so row level security applies.
pub const APP_ROLE: &str = "neotoma_app";
const DATABASE: &str = "neotoma";

#[derive(Debug, Clone)]
pub struct EmbeddedOptions {
    pub data_dir: Option<PathBuf>,
    pub port: u16,
    pub pg_bindir: Option<PathBuf>,
    pub os_user: Option<String>,
}

#[derive(Debug)]
pub struct Embedded {
    pub data_dir: PathBuf,
    pub pgdata: PathBuf,
    pub socket_dir: PathBuf,
    pub log_file: PathBuf,
    pub port: u16,
    bindir: PathBuf,
    run_as: Option<User>,
}

/// Where the data lives when not told: `$XDG_DATA_HOME/neotoma` (usually
/// `~/.local/share/neotoma`), or `/var/lib/neotoma` for root.
/// How long a start waits for an earlier, killed postmaster's processes
/// to exit.
const START_RETRIES_FOR: std::time::Duration = std::time::Duration::from_secs(30);

pub fn default_data_dir() -> PathBuf {
    if geteuid().is_root() {
        PathBuf::from("/var/lib/neotoma")
    } else {
        dirs::data_dir()
            .unwrap_or_else(|| PathBuf::from(".local/share"))
            .join("neotoma")
    }
}

/// Finds the Postgres server binaries: the given directory, else the
/// `bindir` of `pg_config` on PATH, else the newest /usr/lib/postgresql/*/bin.
fn find_bindir(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = given {
        return Ok(dir.to_path_buf());
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && dir.join("initdb").exists() {
            return Ok(dir);
        }
    }
    let mut candidates: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((major, bin))
        })
        .collect();
    candidates.sort();
    candidates
        .pop()
        .map(|(_, b)| b)
        .context("no Postgres server found: install postgresql-15, or pass --pg-bindir")
}

impl Embedded {
    pub fn new(opts: &EmbeddedOptions) -> anyhow::Result<Embedded> {
        let data_dir = opts.data_dir.clone().unwrap_or_else(default_data_dir);
        let run_as = match (&opts.os_user, geteuid().is_root()) {
            (Some(name), _) => Some(
                User::from_name(name)?
                    .with_context(|| format!("no OS user called {name}"))?,
            ),
            (None, true) => Some(
                User::from_name("postgres")?
                    .context("started as root: initdb refuses root, and there is no `postgres` OS user to run the cluster; pass --os-user")?,
            ),
            (None, false) => None,
        };
        Ok(Embedded {
            pgdata: data_dir.join("pgdata"),
            socket_dir: data_dir.join("run"),
            log_file: data_dir.join("postgres.log"),
            port: opts.port,
            bindir: find_bindir(opts.pg_bindir.as_deref())?,
            data_dir,
            run_as,
        })
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.bindir.join(program));
        cmd.current_dir(&self.data_dir);
        if let Some(user) = &self.run_as
            && user.uid != geteuid()
        {
            cmd.uid(user.uid.as_raw()).gid(user.gid.as_raw());
            cmd.env("HOME", &user.dir).env("USER", &user.name);
        }
        cmd
    }

    fn run(&self, mut cmd: Command, what: &str) -> anyhow::Result<()> {
        let out = cmd.output().with_context(|| match &self.run_as {
            Some(user) => format!(
                "could not run {what} as OS user {} in {} (that user must be able to reach \
                 the data directory: make its parents traversable, or pick another --data-dir)",
                user.name,
                self.data_dir.display()
            ),
            None => format!("could not run {what}"),
        })?;
        if !out.status.success() {
            bail!(
                "{what} failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// Creates the data directory (owned by the cluster's OS user).
    fn prepare_dirs(&self) -> anyhow::Result<()> {
        for dir in [&self.data_dir, &self.socket_dir] {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("could not create {}", dir.display()))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            if let Some(user) = &self.run_as {
                nix::unistd::chown(dir, Some(user.uid), Some(user.gid)).with_context(|| {
                    format!("could not hand {} to {}", dir.display(), user.name)
                })?;
            }
        }
        Ok(())
    }

    /// Initialises the cluster if it does not exist, and starts it if it is
    /// not running.
    pub fn ensure_running(&self) -> anyhow::Result<()> {
        self.prepare_dirs()?;
        if !self.pgdata.join("PG_VERSION").exists() {
            tracing::info!(pgdata = %self.pgdata.display(), "creating a private Postgres cluster");
            let mut initdb = self.command("initdb");
            initdb
                .arg("-D")
                .arg(&self.pgdata)
                .args([
                    "-U",
                    ADMIN_ROLE,
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--auth-local=trust",
                ])
                .args(["--auth-host=reject", "--no-instructions"]);
            self.run(initdb, "initdb")?;
        }
        if self.is_running() {
            return Ok(());
        }
        // After the postmaster was killed (kill -9, a crash), its backends
        // live on for a moment holding its shared memory, and a new
        // postmaster refuses to start until they are gone: wait for them,
        // trying again, and say so.
        let deadline = std::time::Instant::now() + START_RETRIES_FOR;
        loop {
            let logged = std::fs::metadata(&self.log_file).map_or(0, |m| m.len());
            match self.start_once() {
                Ok(()) => return Ok(()),
                Err(e)
                    if std::time::Instant::now() < deadline
                        && self.previous_still_exiting(logged) =>
                {
                    tracing::info!(
                        "the previous Postgres of {} is still exiting; starting again in a moment",
                        self.pgdata.display()
                    );
                    tracing::debug!(error = %e, "pg_ctl start");
                    std::thread::sleep(std::time::Duration::from_millis(250));
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("see {}", self.log_file.display()));
                }
            }
        }
    }

    fn start_once(&self) -> anyhow::Result<()> {
        let mut start = self.command("pg_ctl");
        start
            .arg("-D")
            .arg(&self.pgdata)
            .arg("-l")
            .arg(&self.log_file)
            .args(["-w", "-t", "60", "-o"])
            .arg(format!(
                "-k {} -c listen_addresses='' -p {}",
                self.socket_dir.display(),
                self.port
            ))
            .arg("start");
        self.run(start, "pg_ctl start")
    }

    /// Whether the start that logged from byte `from` on failed because
    /// processes of an earlier postmaster still hold the cluster.
    fn previous_still_exiting(&self, from: u64) -> bool {
        let log = std::fs::read(&self.log_file).unwrap_or_default();
        let new = String::from_utf8_lossy(log.get(from as usize..).unwrap_or_default());
        [
            "pre-existing shared memory block",
            "is another postmaster",
            "lock file",
        ]
        .iter()
        .any(|m| new.contains(m))
    }

    pub fn is_running(&self) -> bool {
        let mut status = self.command("pg_ctl");
        status.arg("-D").arg(&self.pgdata).arg("status");
        status.output().map(|o| o.status.success()).unwrap_or(false)
    }

    pub fn stop(&self) -> anyhow::Result<()> {
        if !self.is_running() {
            return Ok(());
        }
        let mut stop = self.command("pg_ctl");
        stop.arg("-D")
            .arg(&self.pgdata)
            .args(["-m", "fast", "-w", "stop"]);
        self.run(stop, "pg_ctl stop")
    }

    /// The port the running cluster uses: its postmaster.pid says, which
    /// matters when it was started earlier with another --pg-port.
    fn live_port(&self) -> u16 {
        std::fs::read_to_string(self.pgdata.join("postmaster.pid"))
            .ok()
            .and_then(|s| s.lines().nth(3).and_then(|l| l.trim().parse().ok()))
            .unwrap_or(self.port)
    }

    /// The superuser's URL of the `neotoma` database (for token management).
    pub fn admin_url(&self) -> String {
        self.url(ADMIN_ROLE, DATABASE)
    }

    pub fn url(&self, role: &str, database: &str) -> String {
        format!(
            "host={} port={} user={role} dbname={database}",
            self.socket_dir.display(),
            self.live_port()
        )
    }

    /// Creates the database, the extension and the gateway's role, or brings
    /// the extension up to date; answers the URL the gateway should use.
    pub async fn ensure_database(&self) -> anyhow::Result<String> {
        let admin = connect(&self.url(ADMIN_ROLE, "postgres")).await?;
        let exists = admin
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&DATABASE])
            .await?
            .is_some();
        if !exists {
            admin
                .batch_execute(&format!("CREATE DATABASE {DATABASE}"))
                .await?;
        }
        let db = connect(&self.url(ADMIN_ROLE, DATABASE)).await?;
        db.batch_execute(&format!(
            "DO $$ BEGIN
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
                 CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS;
               END IF;
             END $$;"
        ))
        .await?;
        let versions = db
            .query_opt(
                "SELECT default_version, installed_version FROM pg_available_extensions WHERE name = 'neotoma'",
                &[],
            )
            .await?;
        let Some(versions) = versions else {
            bail!(
                "the neotoma extension is not installed in the Postgres of {}; run ./scripts/setup \
                 (it builds the extension and runs `cargo pgrx install`)",
                self.bindir.display()
            );
        };
        let (available, installed): (String, Option<String>) = (versions.get(0), versions.get(1));
        match installed {
            None => db.batch_execute("CREATE EXTENSION neotoma").await?,
            Some(v) if v != available => db.batch_execute("ALTER EXTENSION neotoma UPDATE").await?,
            Some(_) => {}
        }
        // The gateway of the machine's owner: trusted to name users
        // (neotoma_service) and to act as an operator for stdio and
        // operator tokens (neotoma_operator, which includes the former).
        db.batch_execute(&format!(
            "DO $$ BEGIN
               IF NOT pg_has_role('{APP_ROLE}', 'neotoma_operator', 'MEMBER') THEN
                 GRANT neotoma_operator TO {APP_ROLE};
               END IF;
             END $$;"
        ))
        .await?;
        Ok(self.url(APP_ROLE, DATABASE))
    }
}

/// One cluster of the `--partitions` layout: `name` under the data directory.
fn layout_cluster(opts: &EmbeddedOptions, name: &str, port: u16) -> anyhow::Result<Embedded> {
    let base = opts.data_dir.clone().unwrap_or_else(default_data_dir);
    Embedded::new(&EmbeddedOptions {
        data_dir: Some(base.join(name)),
        port,
        ..opts.clone()
    })
}

/// Stops the router and the partitions of a `--partitions` layout.
pub fn stop_partitioned(opts: &EmbeddedOptions, partitions: u16) -> anyhow::Result<()> {
    layout_cluster(opts, "router", opts.port)?.stop()?;
    for k in 0..partitions {
        layout_cluster(opts, &format!("partition-{k}"), opts.port + 1 + k)?.stop()?;
    }
    Ok(())
}

/// The login a router uses on its partitions (a member of `neotoma_router`).
const ROUTER_LINK: &str = "neotoma_router_link";

/// `--partitions N` (docs/scale-out.md): a router cluster in
/// `<data-dir>/router` on the given port and N partition clusters in
/// `<data-dir>/partition-K` on the ports after it, each started and set up
/// as the single cluster is; the router gets the `neotoma_router`
/// extension and the partitions' connection strings. Answers the router.
pub async fn ensure_partitioned(
    opts: &EmbeddedOptions,
    partitions: u16,
) -> anyhow::Result<Embedded> {
    let mut connections = Vec::new();
    for k in 0..partitions {
        let partition = layout_cluster(opts, &format!("partition-{k}"), opts.port + 1 + k)?;
        partition.ensure_running()?;
        partition.ensure_database().await?;
        connect(&partition.admin_url())
            .await?
            .batch_execute(&format!(
                "DO $$ BEGIN
                   IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROUTER_LINK}') THEN
                     CREATE ROLE {ROUTER_LINK} LOGIN NOSUPERUSER NOBYPASSRLS IN ROLE neotoma_router;
                   END IF;
                 END $$;"
            ))
            .await?;
        connections.push(partition.url(ROUTER_LINK, DATABASE));
    }
    let router = layout_cluster(opts, "router", opts.port)?;
    router.ensure_running()?;
    router.ensure_database().await?;
    let db = connect(&router.admin_url()).await?;
    db.batch_execute("CREATE EXTENSION IF NOT EXISTS neotoma_router CASCADE")
        .await
        .context("the router needs PL/Proxy (Debian: postgresql-15-plproxy) and neotoma_router (scripts/setup installs both)")?;
    db.execute("SELECT neotoma_router.set_partitions($1)", &[&connections])
        .await?;
    db.batch_execute("CREATE USER MAPPING IF NOT EXISTS FOR PUBLIC SERVER neotoma_partitions")
        .await?;
    Ok(router)
}

async fn connect(url: &str) -> anyhow::Result<tokio_postgres::Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .with_context(|| format!("could not connect to the private cluster ({url})"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}
