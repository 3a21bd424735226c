//! `neotoma-mcp partition move --user U --to N` (docs/scale-out.md): moves a
//! user's memory to another partition of a router. The router refuses the
//! user's calls from the moment the calls in flight have ended
//! (`neotoma_router.start_move`), the memory is copied with export and
//! import, the copy is checked (the same counts, `verify()` clean), the
//! routing switches in one statement (`finish_move`), and the old copy is
//! erased. A failure before the switch aborts: the user stays where it was,
//! and the partial copy is erased.

use anyhow::{Context, bail};
use std::collections::BTreeMap;
use tokio_postgres::NoTls;
use uuid::Uuid;

use crate::transfer;

/// The tables whose rows of the user must be the same on both copies.
const COUNTED: &[&str] = &[
    "sources",
    "entities",
    "observations",
    "relationships",
    "timeline_events",
];

async fn connect(url: &str) -> anyhow::Result<tokio_postgres::Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .with_context(|| "could not connect")?;
    tokio::spawn(connection);
    Ok(client)
}

/// Moves `user` to partition `to` of the router at `router_url` (a
/// superuser's connection: it reads the partitions' connection strings).
pub async fn move_user(router_url: &str, user: Uuid, to: i32) -> anyhow::Result<()> {
    let router = connect(router_url).await.context("the router")?;
    let partitions: BTreeMap<i32, String> = router
        .query(
            "SELECT number, connection FROM neotoma_router.partitions",
            &[],
        )
        .await
        .context("could not read the router's partitions (a superuser's connection is needed)")?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let from: i32 = router
        .query_one("SELECT neotoma_router.start_move($1, $2)", &[&user, &to])
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "{}",
                e.as_db_error()
                    .map_or(e.to_string(), |d| d.message().to_string())
            )
        })?
        .get(0);
    eprintln!(
        "neotoma-mcp: moving user {user} from partition {from} to partition {to}; its calls wait meanwhile"
    );
    let (source, target) = (&partitions[&from], &partitions[&to]);
    match copy(source, target, user).await {
        Ok(()) => {
            router
                .execute("SELECT neotoma_router.finish_move($1)", &[&user])
                .await
                .context("could not switch the routing")?;
            erase(source, user)
                .await
                .context("moved, but the old copy could not be erased")?;
            eprintln!(
                "neotoma-mcp: user {user} is on partition {to}; the copy on partition {from} is erased"
            );
            Ok(())
        }
        Err(e) => {
            router
                .execute("SELECT neotoma_router.abort_move($1)", &[&user])
                .await
                .context("the copy failed, and the move could not be aborted")?;
            erase(target, user).await.ok();
            Err(e.context(format!("the user stays on partition {from}")))
        }
    }
}

/// Copies the user's memory from `source` to `target` and checks the copy.
async fn copy(source: &str, target: &str, user: Uuid) -> anyhow::Result<()> {
    if counts(target, user).await?.values().any(|n| *n > 0) {
        bail!("the target partition already has rows of user {user}");
    }
    let file = std::env::temp_dir().join(format!("neotoma-move-{user}.jsonl"));
    let result = async {
        transfer::export(source, user, &file).await?;
        transfer::import(target, user, &file).await
    }
    .await;
    std::fs::remove_file(&file).ok();
    result?;
    let (before, after) = (counts(source, user).await?, counts(target, user).await?);
    if before != after {
        bail!("the copy differs from the original: {before:?} there, {after:?} here");
    }
    let client = acting_for(target, user).await?;
    let verified: serde_json::Value = client
        .query_one("SELECT neotoma.verify()", &[])
        .await?
        .get(0);
    if verified["ok"] != serde_json::json!(true) {
        bail!("verify() on the copy: {verified}");
    }
    Ok(())
}

async fn acting_for(url: &str, user: Uuid) -> anyhow::Result<tokio_postgres::Client> {
    let client = connect(url).await?;
    client
        .execute(
            "SELECT set_config('neotoma.user_id', $1, false)",
            &[&user.to_string()],
        )
        .await?;
    Ok(client)
}

/// The user's rows in the tables both copies must agree on.
async fn counts(url: &str, user: Uuid) -> anyhow::Result<BTreeMap<&'static str, i64>> {
    let client = acting_for(url, user).await?;
    let mut out = BTreeMap::new();
    for table in COUNTED {
        let sql = format!("SELECT count(*) FROM neotoma.{table} WHERE user_id = $1");
        out.insert(*table, client.query_one(&sql, &[&user]).await?.get(0));
    }
    Ok(out)
}

/// Erases every row of the user on one partition (as its router's login,
/// acting as an operator).
async fn erase(url: &str, user: Uuid) -> anyhow::Result<()> {
    let client = connect(url).await?;
    client
        .batch_execute("SELECT set_config('neotoma.operator', 'on', false)")
        .await?;
    client
        .execute("SELECT neotoma.erase_user($1, true)", &[&user])
        .await?;
    Ok(())
}
