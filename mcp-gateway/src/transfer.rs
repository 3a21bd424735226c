//! `neotoma-mcp export` and `import`: a user's memory as JSON Lines, one
//! `{"table", "row"}` per line, as `neotoma.export_lines()` writes them and
//! `neotoma.import_lines()` replays them. The connection acts for the user
//! (`neotoma.user_id`), so row level security keeps both to that user.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use uuid::Uuid;

/// Lines per round trip (export) and per call of import_lines (import).
const BATCH: usize = 500;

async fn connect(url: &str, user: Uuid) -> anyhow::Result<tokio_postgres::Client> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .context("could not connect to the database")?;
    tokio::spawn(connection);
    client
        .execute(
            "SELECT set_config('neotoma.user_id', $1, false)",
            &[&user.to_string()],
        )
        .await
        .context("could not act for the user (the role must be granted neotoma_service)")?;
    Ok(client)
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
    if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_FUNCTION) {
        return anyhow::anyhow!(
            "{what}: the database's neotoma extension is older than 0.7.0 (run ALTER EXTENSION neotoma UPDATE)"
        );
    }
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
    let total: i64 = tx
        .query_one("SELECT count(*) FROM neotoma.export_lines()", &[])
        .await
        .map_err(|e| db_error(e, "could not read the memory"))?
        .get(0);
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
    let bar = progress(total as u64, "exporting");
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
    // Snapshots, identifiers and events from all the observations (an
    // observation a split moved is folded for its new entity only).
    let ids: Vec<String> = tx
        .query(
            "SELECT id FROM neotoma.entities WHERE user_id = $1 ORDER BY id",
            &[&user],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let bar = progress(ids.len() as u64, "recomputing");
    for chunk in ids.chunks(BATCH) {
        tx.execute(
            "SELECT neotoma._recompute($1, $2)",
            &[&user, &chunk.to_vec()],
        )
        .await
        .map_err(|e| db_error(e, "could not recompute the snapshots"))?;
        bar.inc(chunk.len() as u64);
    }
    tx.commit().await?;
    bar.finish_and_clear();
    let summary: Vec<String> = counts.iter().map(|(t, n)| format!("{t} {n}")).collect();
    eprintln!(
        "imported {} into user {user}'s memory: {} new rows ({}); {} entities recomputed",
        file.display(),
        counts.values().sum::<i64>(),
        if summary.is_empty() {
            "none".to_string()
        } else {
            summary.join(", ")
        },
        ids.len()
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

/// The active schema of `entity_type` this user stores with: theirs, else
/// the global one.
async fn active_schema(
    tx: &tokio_postgres::Transaction<'_>,
    user: Uuid,
    entity_type: &str,
) -> anyhow::Result<Option<neotoma_core::schema::EntitySchema>> {
    let row = tx
        .query_opt(
            "SELECT definition FROM neotoma.entity_schemas
             WHERE entity_type = $1 AND active AND user_id IN ($2, neotoma.global_user_id())
             ORDER BY user_id = $2 DESC LIMIT 1",
            &[&entity_type, &user],
        )
        .await
        .map_err(|e| db_error(e, "could not read the schemas"))?;
    match row {
        None => Ok(None),
        Some(r) => Ok(Some(
            serde_json::from_value(r.get::<_, Value>(0))
                .with_context(|| format!("the schema of {entity_type} is unreadable"))?,
        )),
    }
}

/// The type memory entities of `original` type go to, with a schema that
/// holds them (registered or extended for this user when needed): its
/// name, and what was done to its schema.
async fn memory_type(
    tx: &tokio_postgres::Transaction<'_>,
    user: Uuid,
    original: &str,
) -> anyhow::Result<(String, &'static str)> {
    use neotoma_core::memory_graph::{self as memory, Fit};
    let base = memory::type_name(original);
    for name in [base.clone(), memory::fallback_type_name(&base)] {
        let what = format!("could not prepare the type {name}");
        match memory::fit(active_schema(tx, user, &name).await?.as_ref()) {
            Fit::Missing => {
                action(
                    tx,
                    "register_schema",
                    &memory::register_args(&name, original),
                    &what,
                )
                .await?;
                return Ok((name, "registered"));
            }
            Fit::Fits {
                has_observations: false,
            } => {
                action(
                    tx,
                    "update_schema_incremental",
                    &memory::add_observations_args(&name),
                    &what,
                )
                .await?;
                return Ok((name, "observations added"));
            }
            Fit::Fits {
                has_observations: true,
            } => return Ok((name, "as is")),
            Fit::Unfit => continue,
        }
    }
    anyhow::bail!(
        "neither {base} nor {} can hold entities identified by name",
        memory::fallback_type_name(&base)
    )
}

/// `import --format memory-jsonl`: the MCP memory server's knowledge graph
/// into a user's memory, in one transaction. The file itself becomes a
/// source (its bytes kept); the entities are stored with provenance naming
/// it, each text observation one observation; relations become REFERS_TO
/// relationships keeping their type. Importing the same file again adds
/// nothing.
pub async fn import_memory(url: &str, user: Uuid, file: &Path) -> anyhow::Result<()> {
    use neotoma_core::memory_graph as memory;
    let bytes =
        std::fs::read(file).with_context(|| format!("could not read {}", file.display()))?;
    let text = std::str::from_utf8(&bytes)
        .with_context(|| format!("{} is not UTF-8 text", file.display()))?;
    let graph = memory::parse(text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let mut client = connect(url, user).await?;
    let tx = client.transaction().await?;

    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut prepared: Vec<String> = Vec::new();
    for e in &graph.entities {
        if !types.contains_key(&e.entity_type) {
            let (name, done) = memory_type(&tx, user, &e.entity_type).await?;
            prepared.push(format!("{} → {name} ({done})", e.entity_type));
            types.insert(e.entity_type.clone(), name);
        }
    }

    let filename = file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "memory.jsonl".into());
    let stored = action(
        &tx,
        "store",
        &serde_json::json!({
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
    let extracted_at: String = tx
        .query_one(
            "SELECT neotoma._iso(created_at) FROM neotoma.sources WHERE id = $1::text::uuid",
            &[&source],
        )
        .await
        .map_err(|e| db_error(e, "could not read the file's source"))?
        .get(0);
    let provenance = serde_json::json!({
        "source_refs": [source],
        "extracted_at": extracted_at,
        "extractor_version": format!("neotoma-mcp/{} memory-jsonl", env!("CARGO_PKG_VERSION")),
    });

    // (entity name, object) in file order; each object is one observation.
    let objects: Vec<(&str, Value)> = graph
        .entities
        .iter()
        .flat_map(|e| {
            memory::store_objects(e, &types[&e.entity_type])
                .into_iter()
                .map(move |o| (e.name.as_str(), o))
        })
        .collect();
    let bar = progress((objects.len() + graph.relations.len()) as u64, "importing");
    let mut ids: BTreeMap<&str, String> = BTreeMap::new();
    let mut observations = 0u64;
    for chunk in objects.chunks(STORE_BATCH) {
        let entities: Vec<&Value> = chunk.iter().map(|(_, o)| o).collect();
        let answer = action(
            &tx,
            "store",
            &serde_json::json!({"entities": entities, "provenance": provenance}),
            "the memory server's entities were refused",
        )
        .await?;
        for ((name, _), out) in chunk
            .iter()
            .zip(answer["entities"].as_array().into_iter().flatten())
        {
            if let Some(id) = out["entity_id"].as_str() {
                ids.entry(name).or_insert_with(|| id.to_string());
            }
        }
        observations += answer["interpretation"]["observations_created"]
            .as_u64()
            .unwrap_or(0);
        bar.inc(chunk.len() as u64);
    }

    let (mut related, mut dangling) = (0u64, 0u64);
    for r in &graph.relations {
        match (ids.get(r.from.as_str()), ids.get(r.to.as_str())) {
            (Some(from), Some(to)) => {
                action(
                    &tx,
                    "create_relationship",
                    &memory::relationship_args(r, from, to),
                    &format!(
                        "the relation {} -{}-> {} was refused",
                        r.from, r.relation_type, r.to
                    ),
                )
                .await?;
                related += 1;
            }
            _ => dangling += 1,
        }
        bar.inc(1);
    }
    tx.commit().await?;
    bar.finish_and_clear();
    eprintln!(
        "imported {} into user {user}'s memory (source {source}): {} entities, {observations} new observations, \
         {related} relations{}; types: {}",
        file.display(),
        ids.len(),
        if dangling > 0 {
            format!(" ({dangling} naming an entity the file lacks, skipped)")
        } else {
            String::new()
        },
        if prepared.is_empty() {
            "none".to_string()
        } else {
            prepared.join(", ")
        }
    );
    Ok(())
}
