//! Background upkeep the database asks of a long-running client: the
//! lists semantic search reads (`neotoma.maintain_embedding_lists`, see the
//! extension's sql/embeddings.sql) are rebuilt for a user whose entities
//! have doubled since their last build, and the round after, that user's
//! common words are posted (sql/word_postings.sql). One user per round, so
//! a round holds one pooled connection for one build at most. Through a
//! router (docs/scale-out.md), each round runs on every partition.

use crate::database::Database;
use std::time::Duration;

/// The wait before the first round (the gateway starts serving first).
const FIRST_ROUND: Duration = Duration::from_secs(10);
/// The wait between rounds that had nothing to build.
const EVERY: Duration = Duration::from_secs(60);

/// Starts the upkeep in the background: start-up does not wait for it.
/// `router`: the database is a router, whose partitions hold the lists.
pub fn start(db: Database, router: bool) {
    let round = if router {
        "SELECT neotoma_router.maintain_embedding_lists(1)"
    } else {
        "SELECT neotoma.maintain_embedding_lists(1)"
    };
    tokio::spawn(async move {
        tokio::time::sleep(FIRST_ROUND).await;
        loop {
            match db
                // A large user's build takes minutes: no statement timeout.
                .unbounded_query_json(round)
                .await
            {
                // Built one: there may be more.
                Ok(built) if built.as_array().is_some_and(|b| !b.is_empty()) => {
                    tracing::info!(%built, "semantic search lists rebuilt or common words posted");
                    continue;
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, "semantic search lists: will try again"),
            }
            tokio::time::sleep(EVERY).await;
        }
    });
}
