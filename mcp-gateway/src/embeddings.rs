//! A remote embeddings provider (`--embeddings-url`): any OpenAI-compatible
//! `/embeddings` endpoint (OpenAI, Ollama, LM Studio, …), for semantic
//! search by its model instead of the database's built-in one.
//!
//! Two uses: a search's query is embedded before its SQL call and handed to
//! the extension for that call (`neotoma.query_embedding`); and a worker
//! embeds, in the background, the entities the provider's model has no
//! embedding of, woken by the database's change notifications: those of
//! the transaction each notification names (`neotoma.pending_embeddings_of`),
//! and of every snapshot when it starts, when its connection comes back and
//! every five minutes (`neotoma.pending_embeddings`), written back with
//! `neotoma.put_embeddings`.
//! The extension stores them as the model `remote:<model>`; a snapshot whose
//! text changes loses them until the worker embeds it again, moments later.
//! On a router a worker serves each partition: it hears that partition's
//! changes and reads and writes its embeddings through the router
//! (`neotoma_router.pending_embeddings`, … with the partition's number).

use crate::database::{ChangeSource, Database, Listener};
use crate::subscriptions::CHANGES_CHANNEL;
use neotoma_core::actions::resources::ResourceUri;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct EmbeddingsOptions {
    /// Base URL of the API (the requests go to `{base}/embeddings`).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

/// Texts embedded in one request by the worker.
const BATCH: i32 = 64;
/// How long a text the provider refused waits before it is tried again.
const REFUSED_RETRY: Duration = Duration::from_secs(600);
/// How often the worker also looks through every snapshot (as it does when
/// it starts and whenever its connection comes back): a look at what one
/// notification names misses nothing the notification was sent for, so this
/// only catches what no notification named (about 0.3 s at 100,000
/// entities).
const FULL_POLL: Duration = Duration::from_secs(300);
/// Least time between two rounds that found no full batch: a stream of
/// changes is served in rounds, not once per change.
const MIN_GAP: Duration = Duration::from_secs(1);
/// Most transactions a worker keeps to look at: past that, it looks
/// through every snapshot once instead.
const MAX_QUEUED: usize = 1000;

/// Why the provider gave no embeddings; `refused` when it answered that
/// the input is wrong (4xx), so trying again will not help.
#[derive(Debug)]
pub struct ProviderError {
    pub refused: bool,
    /// Safe to tell clients: no URL, no key.
    pub message: String,
}

#[derive(Clone)]
pub struct Embedder {
    opts: EmbeddingsOptions,
    http: reqwest::Client,
}

impl Embedder {
    pub fn new(opts: EmbeddingsOptions) -> anyhow::Result<Embedder> {
        let http = reqwest::Client::builder().timeout(opts.timeout).build()?;
        Ok(Embedder { opts, http })
    }

    /// The name the extension stores this model's embeddings under.
    pub fn stored_model(&self) -> String {
        format!("remote:{}", self.opts.model)
    }

    /// The embeddings of `texts`, in order.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        let url = format!("{}/embeddings", self.opts.base_url.trim_end_matches('/'));
        let body = json!({"model": self.opts.model, "input": texts, "encoding_format": "float"});
        let mut request = self.http.post(&url).json(&body);
        if let Some(key) = &self.opts.api_key {
            request = request.bearer_auth(key);
        }
        let failed = |refused: bool, message: String| ProviderError { refused, message };
        let response = request.send().await.map_err(|e| {
            tracing::warn!(error = %e, "the embeddings provider did not answer");
            failed(false, "the embeddings provider did not answer".into())
        })?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            tracing::warn!(%status, body = %text.chars().take(300).collect::<String>(), "the embeddings provider refused");
            return Err(failed(
                status.is_client_error() && status.as_u16() != 429,
                format!("the embeddings provider answered {}", status.as_u16()),
            ));
        }
        let answer: Value = response
            .json()
            .await
            .map_err(|_| failed(false, "the embeddings provider's answer is not JSON".into()))?;
        parse_embeddings(&answer, texts.len()).map_err(|why| {
            tracing::warn!(%why, "the embeddings provider's answer");
            failed(false, format!("the embeddings provider's answer: {why}"))
        })
    }

    /// The settings that hand a search's query embedding to the extension
    /// for its call, or (when the provider fails) why there is none, so the
    /// extension answers with its own model and says so.
    pub async fn query_settings(&self, query: &str) -> Vec<(&'static str, String)> {
        match self.embed(&[query.to_string()]).await {
            Ok(mut vectors) => vec![
                ("neotoma.query_embedding_model", self.stored_model()),
                (
                    "neotoma.query_embedding",
                    serde_json::to_string(&vectors.remove(0)).unwrap_or_default(),
                ),
            ],
            Err(e) => vec![("neotoma.query_embedding_error", e.message)],
        }
    }
}

/// The vectors of an OpenAI embeddings answer (`{data: [{index,
/// embedding}]}`), ordered by index: as many as texts, each non-empty,
/// finite, all of one size.
pub fn parse_embeddings(answer: &Value, texts: usize) -> Result<Vec<Vec<f32>>, String> {
    let data = answer["data"].as_array().ok_or("no data")?;
    let mut indexed: Vec<(u64, Vec<f32>)> = Vec::with_capacity(data.len());
    for (i, item) in data.iter().enumerate() {
        let index = item["index"].as_u64().unwrap_or(i as u64);
        let vector: Vec<f32> = serde_json::from_value(item["embedding"].clone())
            .map_err(|_| "an embedding is not a list of numbers")?;
        indexed.push((index, vector));
    }
    indexed.sort_by_key(|(i, _)| *i);
    let vectors: Vec<Vec<f32>> = indexed.into_iter().map(|(_, v)| v).collect();
    if vectors.len() != texts {
        return Err(format!("{} embeddings for {texts} texts", vectors.len()));
    }
    let dims = vectors.first().map_or(0, Vec::len);
    if dims == 0 || dims > 4096 {
        return Err(format!("embeddings of {dims} numbers"));
    }
    if vectors
        .iter()
        .any(|v| v.len() != dims || v.iter().any(|x| !x.is_finite()))
    {
        return Err("embeddings of different sizes, or not finite".into());
    }
    Ok(vectors)
}

/// The query to embed for a call: `retrieve_entities` with `search` in a
/// mode that may use embeddings, or a read of `neotoma://search/{query}`.
pub fn search_query(action: &str, args: &Value) -> Option<String> {
    match action {
        "retrieve_entities" if args["search_mode"].as_str() != Some("lexical") => {
            args["search"].as_str().map(str::to_string)
        }
        "read_resource" => match ResourceUri::parse(args["uri"].as_str()?) {
            Ok(ResourceUri::Search(q)) => Some(q),
            _ => None,
        },
        _ => None,
    }
}

/// Embeds the entities the provider's model has no embedding of yet.
pub struct Worker {
    /// Where the embeddings are read and written.
    db: Database,
    /// The router's partition this worker serves; None on one server.
    partition: Option<i32>,
    embedder: Embedder,
    wake: tokio::sync::Notify,
    /// Texts the provider refused ('<user> <entity>'), until when.
    refused: Mutex<HashMap<String, Instant>>,
    /// The transactions notifications named ('<user id>', '<xid>'), to look
    /// at in turn: the entities each changed.
    changed: Mutex<VecDeque<(String, String)>>,
    /// Whether to look through every snapshot (at start, after the
    /// connection came back, every FULL_POLL, when too many were queued).
    full: AtomicBool,
}

impl Listener for Worker {
    fn listening(&self, up: bool) {
        if up {
            // Notifications may have been missed while it was down.
            self.full.store(true, Ordering::SeqCst);
            self.wake.notify_one();
        }
    }

    fn notified(&self, payload: &str) {
        // '<user id> <xid>' as the extension's trigger sends it; anything
        // else (any role may NOTIFY this channel) is dropped.
        let named = payload.split_once(' ').filter(|(user, xid)| {
            uuid::Uuid::parse_str(user).is_ok() && xid.parse::<u64>().is_ok()
        });
        if let Some((user, xid)) = named {
            let mut changed = self.changed();
            let named = (user.to_string(), xid.to_string());
            if changed.len() >= MAX_QUEUED {
                changed.clear();
                self.full.store(true, Ordering::SeqCst);
            } else if !changed.contains(&named) {
                changed.push_back(named);
            }
        }
        self.wake.notify_one();
    }
}

impl Worker {
    /// The queue of transactions to look at (a panic elsewhere while it was
    /// held leaves it usable).
    fn changed(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, String)>> {
        self.changed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the worker of the entities of `source`, read and written
    /// through `db`.
    pub async fn start(db: Database, source: ChangeSource, embedder: Embedder) {
        let worker = Arc::new(Worker {
            db,
            partition: source.partition,
            embedder,
            wake: tokio::sync::Notify::new(),
            refused: Mutex::new(HashMap::new()),
            changed: Mutex::new(VecDeque::new()),
            full: AtomicBool::new(true),
        });
        source.db.listen(CHANGES_CHANNEL, worker.clone());
        tokio::spawn(async move { worker.run().await });
    }

    async fn run(&self) {
        loop {
            match self.round().await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => tracing::debug!(error = %e, "embedding entities: will try again"),
            }
            tokio::time::sleep(MIN_GAP).await;
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(FULL_POLL) => self.full.store(true, Ordering::SeqCst),
            }
        }
    }

    /// One batch: the pending entities of every snapshot, or of the next
    /// transaction a notification named; embeds and writes them. True when
    /// more may wait.
    async fn round(&self) -> Result<bool, String> {
        let skip: Vec<String> = {
            let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            refused.retain(|_, until| *until > now);
            refused.keys().cloned().collect()
        };
        let model = self.embedder.stored_model();
        let full = self.full.load(Ordering::SeqCst);
        let named = match full {
            true => None,
            false => match self.changed().front() {
                Some(n) => Some(n.clone()),
                None => return Ok(false),
            },
        };
        let pending = match (&named, self.partition) {
            (None, None) => {
                self.db
                    .own_query_json_with(
                        "SELECT neotoma.pending_embeddings($1, $2, $3)",
                        &[&model, &BATCH, &skip]
                    )
                    .await
            }
            (None, Some(p)) => {
                self.db
                    .own_query_json_with(
                        "SELECT neotoma_router.pending_embeddings($4, $1, $2, $3)",
                        &[&model, &BATCH, &skip, &p]
                    )
                    .await
            }
            (Some((user, xid)), partition) => {
                let sql = match partition {
                    None => "SELECT neotoma.pending_embeddings_of($1, $2::text::uuid, $3::text::xid8, $4, $5)",
                    Some(_) => "SELECT neotoma_router.pending_embeddings_of($6, $1, $2::text::uuid, $3, $4, $5)",
                };
                let looked = match partition {
                    None => self.db.own_query_json_with(sql, &[&model, user, xid, &BATCH, &skip]).await,
                    Some(p) => self.db.own_query_json_with(sql, &[&model, user, xid, &BATCH, &skip, &p]).await,
                };
                if looked.is_err() {
                    // Not looked at again: the look through every snapshot
                    // (after a reconnection, or the next FULL_POLL) finds
                    // what it would have.
                    self.changed()
                        .retain(|n| n.0 != *user || n.1 != *xid);
                }
                looked
            }
        }
        .map_err(|e| e.message)?;
        let rows = pending.as_array().cloned().unwrap_or_default();
        // Less than a batch: this look is done once they are written (a
        // failure on the way leaves it to be done again).
        let done = || {
            if rows.len() < BATCH as usize {
                match &named {
                    None => self.full.store(false, Ordering::SeqCst),
                    Some(n) => {
                        let mut changed = self.changed();
                        if changed.front() == Some(n) {
                            changed.pop_front();
                        }
                    }
                }
            }
            rows.len() == BATCH as usize
                || self.full.load(Ordering::SeqCst)
                || !self.changed().is_empty()
        };
        if rows.is_empty() {
            return Ok(done());
        }
        let texts: Vec<String> = rows
            .iter()
            .map(|r| r["text"].as_str().unwrap_or_default().to_string())
            .collect();
        let vectors: Vec<Option<Vec<f32>>> = match self.embedder.embed(&texts).await {
            Ok(v) => v.into_iter().map(Some).collect(),
            Err(e) if !e.refused => return Err(e.message),
            // Refused: one at a time, so one bad text holds back no other.
            Err(_) => {
                let mut one_by_one = Vec::with_capacity(texts.len());
                for (row, text) in rows.iter().zip(&texts) {
                    match self.embedder.embed(std::slice::from_ref(text)).await {
                        Ok(mut v) => one_by_one.push(Some(v.remove(0))),
                        Err(e) if e.refused => {
                            let key = format!(
                                "{} {}",
                                row["user_id"].as_str().unwrap_or_default(),
                                row["entity_id"].as_str().unwrap_or_default()
                            );
                            self.refused
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .insert(key, Instant::now() + REFUSED_RETRY);
                            one_by_one.push(None);
                        }
                        Err(e) => return Err(e.message),
                    }
                }
                one_by_one
            }
        };
        let embedded: Vec<Value> = rows
            .iter()
            .zip(vectors)
            .filter_map(|(row, v)| {
                let v = v?;
                Some(
                    json!({"user_id": row["user_id"], "entity_id": row["entity_id"],
                            "text": row["text"], "embedding": v}),
                )
            })
            .collect();
        let embedded = Value::Array(embedded);
        let written = match self.partition {
            None => {
                self.db
                    .own_query_json_with(
                        "SELECT to_jsonb(neotoma.put_embeddings($1, $2))",
                        &[&model, &embedded],
                    )
                    .await
            }
            Some(p) => {
                self.db
                    .own_query_json_with(
                        "SELECT to_jsonb(neotoma_router.put_embeddings($3, $1, $2))",
                        &[&model, &embedded, &p],
                    )
                    .await
            }
        }
        .map_err(|e| e.message)?;
        tracing::debug!(%written, pending = rows.len(), "embedded entities");
        Ok(done())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_in_index_order_and_checked() {
        let answer = json!({"object": "list", "data": [
            {"object": "embedding", "index": 1, "embedding": [0.0, 1.0]},
            {"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}]});
        assert_eq!(
            parse_embeddings(&answer, 2).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
        assert!(parse_embeddings(&answer, 3).is_err());
        let uneven = json!({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]});
        assert!(parse_embeddings(&uneven, 2).is_err());
        assert!(parse_embeddings(&json!({"data": [{"embedding": []}]}), 1).is_err());
        assert!(parse_embeddings(&json!({"error": "x"}), 1).is_err());
    }

    #[test]
    fn searches_that_may_use_embeddings() {
        let q = |a: &str, args: Value| search_query(a, &args);
        assert_eq!(
            q("retrieve_entities", json!({"search": "x"})),
            Some("x".into())
        );
        assert_eq!(
            q(
                "retrieve_entities",
                json!({"search": "x", "search_mode": "hybrid"})
            ),
            Some("x".into())
        );
        assert_eq!(
            q(
                "retrieve_entities",
                json!({"search": "x", "search_mode": "lexical"})
            ),
            None
        );
        assert_eq!(
            q("retrieve_entities", json!({"entity_type": "person"})),
            None
        );
        assert_eq!(q("store", json!({"search": "x"})), None);
        assert_eq!(
            q(
                "read_resource",
                json!({"uri": "neotoma://search/grace%20hopper"})
            ),
            Some("grace hopper".into())
        );
        assert_eq!(
            q("read_resource", json!({"uri": "neotoma://sources"})),
            None
        );
    }
}
