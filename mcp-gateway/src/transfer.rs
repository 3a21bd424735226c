//! `neotoma-mcp export` and `import`: a user's memory as JSON Lines, one
//! `{"table", "row"}` per line, as `neotoma.export_lines()` writes them and
//! `neotoma.import_lines()` replays them. The connection acts for the user
//! (`neotoma.user_id`), so row level security keeps both to that user.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use uuid::Uuid;

use crate::handshake;

/// Lines per round trip (export) and per call of import_lines (import).
const BATCH: usize = 500;

/// A connection acting for `user`, to a database this gateway serves; on a
/// router (docs/scale-out.md), to the user's partition, where its rows are
/// (the router's superuser reads where that is, as `partition move` does).
async fn connect(url: &str, user: Uuid) -> anyhow::Result<tokio_postgres::Client> {
    let (mut client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .context("could not connect to the database")?;
    tokio::spawn(connection);
    let mut asked = handshake::ask_client(&client)
        .await
        .map_err(|e| db_error(e, "could not ask the database its version"))?;
    if asked.router {
        let partition: String = client
            .query_one(
                "SELECT p.connection FROM neotoma_router.partitions p
                 WHERE p.number = neotoma_router.partition_number($1)
                   AND NOT EXISTS (SELECT FROM neotoma_router.moves m WHERE m.user_id = $1)",
                &[&user],
            )
            .await
            .map_err(|e| {
                db_error(
                    e,
                    "on a router, export and import run on the user's partition: a superuser's \
                     connection to the router finds it (and not while the user is being moved)",
                )
            })?
            .get(0);
        // The user's move lock, shared, for as long as the transfer runs:
        // a move begins only once it has ended (start_move takes it
        // exclusively), so no move copies a memory half imported.
        client
            .execute(
                "SELECT pg_advisory_lock_shared(1852797549, hashtext($1::text))",
                &[&user.to_string()],
            )
            .await
            .context("could not hold the user's move lock on the router")?;
        let (partition_client, connection) =
            tokio_postgres::connect(&partition, tokio_postgres::NoTls)
                .await
                .context("could not connect to the user's partition")?;
        let router = client;
        tokio::spawn(async move {
            let _held = router; // the lock's session lives as long as the transfer's
            connection.await
        });
        client = partition_client;
        asked = handshake::ask_client(&client)
            .await
            .map_err(|e| db_error(e, "could not ask the partition its version"))?;
    }
    handshake::supports_extension(&asked.extension_version).map_err(anyhow::Error::msg)?;
    client
        .execute(
            "SELECT set_config('neotoma.user_id', $1, false)",
            &[&user.to_string()],
        )
        .await
        .context("could not act for the user (the role must be granted neotoma_service)")?;
    Ok(client)
}

/// A count of what is done, for work whose size is not known beforehand.
fn spinner(what: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{msg} {pos} ({per_sec})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(what.to_string());
    bar
}

/// A progress bar on the terminal (hidden when stderr is not one).
fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// The error of a failed statement, with the database's message (and the
/// Neotoma error envelope, when there is one).
fn db_error(e: tokio_postgres::Error, what: &str) -> anyhow::Error {
    match e.as_db_error() {
        Some(d) => anyhow::anyhow!(
            "{what}: {}{}",
            d.message(),
            d.detail().map(|x| format!(" ({x})")).unwrap_or_default()
        ),
        None => anyhow::anyhow!("{what}: {e}"),
    }
}

pub async fn export(url: &str, user: Uuid, out: &Path) -> anyhow::Result<()> {
    let mut client = connect(url, user).await?;
    let tx = client.transaction().await?;
    tx.execute(
        "DECLARE lines NO SCROLL CURSOR FOR SELECT l::text FROM neotoma.export_lines() AS l",
        &[],
    )
    .await
    .map_err(|e| db_error(e, "could not read the memory"))?;
    let mut writer: Box<dyn Write> = if out == Path::new("-") {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(std::io::BufWriter::new(
            std::fs::File::create(out)
                .with_context(|| format!("could not create {}", out.display()))?,
        ))
    };
    // A count of the lines written: counting them first would read the
    // whole memory twice.
    let bar = spinner("exporting");
    let mut written = 0u64;
    loop {
        let rows = tx
            .query(&format!("FETCH {BATCH} FROM lines"), &[])
            .await
            .map_err(|e| db_error(e, "could not read the memory"))?;
        if rows.is_empty() {
            break;
        }
        for row in &rows {
            let line: &str = row.get(0);
            writeln!(writer, "{line}")?;
        }
        written += rows.len() as u64;
        bar.set_position(written);
    }
    writer.flush()?;
    tx.commit().await?;
    bar.finish_and_clear();
    eprintln!(
        "exported {written} lines of user {user}'s memory to {}",
        out.display()
    );
    Ok(())
}

pub async fn import(url: &str, user: Uuid, file: &Path) -> anyhow::Result<()> {
    let reader = std::io::BufReader::new(
        std::fs::File::open(file).with_context(|| format!("could not open {}", file.display()))?,
    );
    let mut lines: Vec<Value> = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("could not read {}", file.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(&line)
            .with_context(|| format!("line {} of {} is not JSON", n + 1, file.display()))?;
        if value["table"] == "entity_schemas" {
            let row = &value["row"];
            let text = |k: &str| row[k].as_str().unwrap_or_default();
            neotoma_core::schema::check_stored(
                text("entity_type"),
                text("schema_version"),
                &row["definition"],
            )
            .map_err(|e| {
                anyhow::anyhow!(
                    "line {} of {} is an entity schema that cannot be used, so nothing was imported: {}",
                    n + 1,
                    file.display(),
                    e.message
                )
            })?;
        }
        lines.push(value);
    }
    let mut client = connect(url, user).await?;
    // All or nothing: one transaction for the whole file.
    let tx = client.transaction().await?;
    let bar = progress(lines.len() as u64, "importing");
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for (n, chunk) in lines.chunks(BATCH).enumerate() {
        let answer: Value = tx
            .query_one("SELECT neotoma.import_lines($1::jsonb[])", &[&chunk])
            .await
            .map_err(|e| {
                db_error(
                    e,
                    &format!(
                        "lines {}–{} of {} were refused",
                        n * BATCH + 1,
                        n * BATCH + chunk.len(),
                        file.display()
                    ),
                )
            })?
            .get(0);
        for (table, written) in answer.as_object().into_iter().flatten() {
            *counts.entry(table.clone()).or_default() += written.as_i64().unwrap_or(0);
        }
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    tx.commit().await?;
    let summary: Vec<String> = counts.iter().map(|(t, n)| format!("{t} {n}")).collect();
    eprintln!(
        "imported {} into user {user}'s memory: {} new rows ({})",
        file.display(),
        counts.values().sum::<i64>(),
        if summary.is_empty() {
            "none".to_string()
        } else {
            summary.join(", ")
        },
    );
    Ok(())
}

/// Objects per `store` call of a memory-jsonl import.
const STORE_BATCH: usize = 200;

/// Calls one action as the connection's user; a refusal names `what`.
async fn action(
    tx: &tokio_postgres::Transaction<'_>,
    name: &str,
    args: &Value,
    what: &str,
) -> anyhow::Result<Value> {
    let sql = format!("SELECT neotoma.{name}($1::jsonb)");
    Ok(tx
        .query_one(&sql, &[args])
        .await
        .map_err(|e| db_error(e, what))?
        .get(0))
}

/// `import --format memory-jsonl`: the MCP memory server's knowledge graph
/// into a user's memory, in one transaction, through the `memory` tool
/// set's actions. The file itself becomes a source (its bytes kept) that
/// new entities and relations name in their provenance. Importing the same
/// file again adds nothing.
pub async fn import_memory(url: &str, user: Uuid, file: &Path) -> anyhow::Result<()> {
    use neotoma_core::memory_graph as memory;
    let bytes =
        std::fs::read(file).with_context(|| format!("could not read {}", file.display()))?;
    let text = std::str::from_utf8(&bytes)
        .with_context(|| format!("{} is not UTF-8 text", file.display()))?;
    let graph = memory::parse(text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let mut client = connect(url, user).await?;
    let tx = client.transaction().await?;

    let filename = file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "memory.jsonl".into());
    let stored = action(
        &tx,
        "store",
        &json!({
            "file_content": neotoma_core::interpret::encode_base64(&bytes),
            "original_filename": filename,
            "mime_type": "application/x-ndjson",
            "interpret": false,
        }),
        "could not keep the file",
    )
    .await?;
    let source = stored["source_id"].as_str().unwrap_or_default().to_string();
    // The file source's own time: the same file gives the same provenance,
    // so importing it again stores nothing new.
    let extracted_at = action(
        &tx,
        "read_resource",
        &json!({"uri": format!("neotoma://source/{source}")}),
        "could not read the file's source",
    )
    .await?["created_at"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let provenance = json!({
        "source_refs": [source],
        "extracted_at": extracted_at,
        "extractor_version": format!("neotoma-mcp/{} memory-jsonl", env!("CARGO_PKG_VERSION")),
    });

    // Through the memory tool set's own actions: what the memory tools
    // then read is what the file said.
    let names: std::collections::BTreeSet<&str> =
        graph.entities.iter().map(|e| e.name.as_str()).collect();
    let relations: Vec<&memory::Relation> = graph
        .relations
        .iter()
        .filter(|r| names.contains(r.from.as_str()) && names.contains(r.to.as_str()))
        .collect();
    let dangling = graph.relations.len() - relations.len();
    let bar = progress((graph.entities.len() + relations.len()) as u64, "importing");
    let (mut created, mut added, mut related) = (0usize, 0usize, 0usize);
    for chunk in graph.entities.chunks(STORE_BATCH) {
        let entities: Vec<Value> = chunk
            .iter()
            .map(|e| json!({"name": e.name, "entityType": e.entity_type, "observations": e.observations}))
            .collect();
        let answer = action(
            &tx,
            "memory_create_entities",
            &json!({"entities": entities, "provenance": provenance}),
            "the memory server's entities were refused",
        )
        .await?;
        created += answer["entities"].as_array().map_or(0, Vec::len);
        // Entities the memory had already get the file's observations too.
        let additions: Vec<Value> = chunk
            .iter()
            .filter(|e| !e.observations.is_empty())
            .map(|e| json!({"entityName": e.name, "contents": e.observations}))
            .collect();
        let answer = action(
            &tx,
            "memory_add_observations",
            &json!({"observations": additions}),
            "the memory server's observations were refused",
        )
        .await?;
        added += answer["results"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r["addedObservations"].as_array().map_or(0, Vec::len))
            .sum::<usize>();
        bar.inc(chunk.len() as u64);
    }
    for chunk in relations.chunks(STORE_BATCH) {
        let list: Vec<Value> = chunk
            .iter()
            .map(|r| json!({"from": r.from, "to": r.to, "relationType": r.relation_type}))
            .collect();
        let answer = action(
            &tx,
            "memory_create_relations",
            &json!({"relations": list, "provenance": provenance}),
            "the memory server's relations were refused",
        )
        .await?;
        related += answer["relations"].as_array().map_or(0, Vec::len);
        bar.inc(chunk.len() as u64);
    }
    tx.commit().await?;
    bar.finish_and_clear();
    eprintln!(
        "imported {} into user {user}'s memory (source {source}): {} entities ({created} new), \
         {added} observations added to entities it had, {} relations ({related} new){}",
        file.display(),
        graph.entities.len(),
        relations.len(),
        if dangling > 0 {
            format!("; {dangling} naming an entity the file lacks, skipped")
        } else {
            String::new()
        },
    );
    Ok(())
}
