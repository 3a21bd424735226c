//! Resource subscriptions: a client subscribed to `neotoma://` resources is
//! told (`notifications/resources/updated`) when one changes, whichever
//! gateway or SQL session changed it.
//!
//! The extension notifies the channel `neotoma_changes`
//! with `<user id> <transaction id>` when a transaction that added to a
//! user's change feed commits. The hub reads that user's feed
//! (`list_recent_changes`, as the user, so under row level security) from its
//! cursor and hands each subscriber of the user the subscribed URIs a change
//! touched ([`ResourceUri::changed_by`]). The feed shows a change only once
//! every older transaction has ended, so the hub reads again, backing off,
//! until the database's horizon has passed the last transaction it heard of:
//! nothing is missed, even behind a long transaction.

use crate::database::{Database, Listener};
use crate::identity::Caller;
use neotoma_core::actions::lifecycle::{ChangeCursor, ListRecentChangesResponse};
use neotoma_core::actions::resources::ResourceUri;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use uuid::Uuid;

pub const CHANGES_CHANNEL: &str = "neotoma_changes";
/// URIs one subscriber (a session, or one `subscriptions/listen`) may hold.
pub const MAX_URIS: usize = 1000;
/// Subscribers one user may have in this process at once.
pub const MAX_SUBSCRIBERS_PER_USER: usize = 64;
/// Longest URI a subscription may name.
const MAX_URI_BYTES: usize = 2048;
/// Changes read per call while catching up.
const PAGE: i64 = 500;
/// Longest wait between two reads of a feed that has not settled.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How long the hub remembers users without subscribers it heard of.
const RECENT: Duration = Duration::from_secs(5);
/// Most such users remembered.
const MAX_RECENT: usize = 10_000;

pub struct Hub {
    db: Database,
    state: Mutex<State>,
    /// The channel is up.
    listening: AtomicBool,
}

#[derive(Default)]
struct State {
    next_id: u64,
    subscribers: HashMap<u64, Subscriber>,
    feeds: HashMap<Uuid, Feed>,
    /// Users without subscribers heard of lately: the oldest transaction
    /// and when. A subscription acknowledged just before its feed starts
    /// (`subscriptions/listen` acknowledges first) still hears of a change
    /// that committed in between.
    recent: HashMap<Uuid, (u64, Instant)>,
}

struct Subscriber {
    user: Uuid,
    /// Each URI, with what it names (none: another scheme, never told).
    uris: BTreeMap<String, Option<ResourceUri>>,
    tx: mpsc::UnboundedSender<String>,
}

/// Where the hub is in one user's feed (while the user has subscribers).
#[derive(Default)]
struct Feed {
    /// Tells this feed from an earlier one of the same user (dropped when
    /// its last subscriber left), whose reader may still be running.
    id: u64,
    /// Read after this; unknown until the first read.
    cursor: Option<ChangeCursor>,
    /// The oldest transaction heard of before the cursor was known.
    oldest_heard: Option<u64>,
    /// Read until the horizon has passed this transaction.
    pending: Option<u64>,
    /// A reader runs for this feed.
    reading: bool,
}

/// A subscriber's place in the hub: dropping it unsubscribes.
pub struct Registration {
    hub: Arc<Hub>,
    id: u64,
}

impl Hub {
    pub fn new(db: Database) -> Arc<Hub> {
        Arc::new(Hub {
            db,
            state: Mutex::default(),
            listening: AtomicBool::new(false),
        })
    }

    /// Starts listening to the database's changes.
    pub fn start(self: &Arc<Hub>) {
        self.db
            .listen(CHANGES_CHANNEL, Arc::new(ChangesListener(self.clone())));
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new subscriber of `user` with no URIs yet; it hears the URIs that
    /// change on the receiver.
    pub fn register(
        self: &Arc<Hub>,
        user: Uuid,
    ) -> Result<(Registration, mpsc::UnboundedReceiver<String>), NeotomaError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.state();
        let mine = state
            .subscribers
            .values()
            .filter(|s| s.user == user)
            .count();
        if mine >= MAX_SUBSCRIBERS_PER_USER {
            return Err(NeotomaError::new(
                ErrorCode::RateLimitExceeded,
                format!(
                    "at most {MAX_SUBSCRIBERS_PER_USER} subscriptions per user at once; end one first"
                ),
            ));
        }
        state.next_id += 1;
        let id = state.next_id;
        state.subscribers.insert(
            id,
            Subscriber {
                user,
                uris: BTreeMap::new(),
                tx,
            },
        );
        let new_feed = !state.feeds.contains_key(&user);
        if new_feed {
            state.next_id += 1;
            let oldest_heard = state
                .recent
                .remove(&user)
                .filter(|(_, at)| at.elapsed() < RECENT)
                .map(|(xid, _)| xid);
            let feed = Feed {
                id: state.next_id,
                oldest_heard,
                ..Feed::default()
            };
            state.feeds.insert(user, feed);
        }
        drop(state);
        if new_feed {
            // Learns where the feed stands now: later changes are news.
            self.wake(user, None);
        }
        Ok((
            Registration {
                hub: self.clone(),
                id,
            },
            rx,
        ))
    }

    /// Wakes the reader of `user`'s feed (starting one if none runs), to read
    /// at least until the horizon passes `xid`.
    fn wake(self: &Arc<Hub>, user: Uuid, xid: Option<u64>) {
        let mut state = self.state();
        let Some(feed) = state.feeds.get_mut(&user) else {
            if let Some(xid) = xid {
                remember(&mut state.recent, user, xid);
            }
            return;
        };
        if let Some(xid) = xid {
            feed.pending = feed.pending.max(Some(xid));
            if feed.cursor.is_none() {
                feed.oldest_heard = Some(feed.oldest_heard.map_or(xid, |o| o.min(xid)));
            }
        }
        if !feed.reading {
            feed.reading = true;
            tokio::spawn(self.clone().read(user, feed.id));
        }
    }

    /// Reads `user`'s feed until it has settled past what was heard of, and
    /// tells the subscribers; ends when the user has no subscribers left.
    async fn read(self: Arc<Hub>, user: Uuid, feed: u64) {
        let mut backoff = Duration::from_millis(25);
        loop {
            let outcome = self.read_once(user, feed).await;
            if let Err(e) = &outcome {
                tracing::debug!(%user, error = %e, "could not read the change feed");
            }
            if self.settled(user, feed, outcome.ok()) {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Whether the reader of `user`'s feed may stop: the user has no
    /// subscribers left, or the read that began at `horizon` saw every
    /// transaction heard of (then the feed is marked idle).
    fn settled(&self, user: Uuid, feed: u64, horizon: Option<u64>) -> bool {
        let mut state = self.state();
        let Some(feed) = state.feeds.get_mut(&user).filter(|f| f.id == feed) else {
            return true;
        };
        match horizon {
            Some(h) if feed.pending.is_none_or(|p| p < h) => {
                feed.pending = None;
                feed.reading = false;
                true
            }
            _ => false,
        }
    }

    /// One catch-up: the horizon (every transaction below it has ended),
    /// then every change after the cursor. Answers the horizon.
    async fn read_once(&self, user: Uuid, feed: u64) -> Result<u64, NeotomaError> {
        let horizon = self.horizon().await?;
        let mut cursor = {
            let mut state = self.state();
            let Some(feed) = state.feeds.get_mut(&user).filter(|f| f.id == feed) else {
                return Ok(horizon);
            };
            *feed.cursor.get_or_insert_with(|| ChangeCursor {
                xid: feed.oldest_heard.map_or(horizon, |o| o.min(horizon)),
                seq: 0,
            })
        };
        let caller = Caller {
            user,
            operator: false,
            remote: false,
            token: None,
        };
        loop {
            let page = self
                .db
                .call(
                    "neotoma.list_recent_changes",
                    &caller,
                    // Every workspace's changes: a subscription is to a URI,
                    // whichever workspace it is in.
                    &json!({"since": cursor.encode(), "limit": PAGE, "workspace": "*"}),
                    false,
                )
                .await?;
            let page: ListRecentChangesResponse = serde_json::from_value(page)
                .map_err(|e| NeotomaError::new(ErrorCode::DbQueryFailed, e.to_string()))?;
            if let Some(next) = page.next_cursor.as_deref().and_then(ChangeCursor::decode) {
                cursor = next;
            }
            {
                let mut state = self.state();
                match state.feeds.get_mut(&user).filter(|f| f.id == feed) {
                    Some(f) => f.cursor = Some(cursor),
                    None => return Ok(horizon),
                }
                deliver(&state, user, &page);
            }
            if !page.has_more {
                return Ok(horizon);
            }
        }
    }

    /// The oldest transaction still running (or the next one): every
    /// transaction below it has ended.
    async fn horizon(&self) -> Result<u64, NeotomaError> {
        self.snapshot_bound("pg_snapshot_xmin").await
    }

    /// The next transaction id: every change committed so far is below it.
    async fn next_xid(&self) -> Result<u64, NeotomaError> {
        self.snapshot_bound("pg_snapshot_xmax").await
    }

    /// `bound` (pg_snapshot_xmin or _xmax) of a snapshot taken now.
    async fn snapshot_bound(&self, bound: &str) -> Result<u64, NeotomaError> {
        let v = self
            .db
            .query_json(&format!(
                "SELECT to_jsonb({bound}(pg_current_snapshot())::text)"
            ))
            .await?;
        v.as_str().and_then(|s| s.parse().ok()).ok_or_else(|| {
            NeotomaError::new(ErrorCode::DbQueryFailed, format!("unreadable {bound}"))
        })
    }
}

/// Remembers that `user`, without subscribers, changed in transaction `xid`.
fn remember(recent: &mut HashMap<Uuid, (u64, Instant)>, user: Uuid, xid: u64) {
    if recent.len() >= MAX_RECENT {
        recent.retain(|_, (_, at)| at.elapsed() < RECENT);
        if recent.len() >= MAX_RECENT {
            recent.clear();
        }
    }
    let now = Instant::now();
    let entry = recent.entry(user).or_insert((xid, now));
    if entry.1.elapsed() >= RECENT {
        *entry = (xid, now);
    } else {
        entry.0 = entry.0.min(xid);
    }
}

/// Tells each subscriber of `user` which of its URIs `page` touched.
fn deliver(state: &State, user: Uuid, page: &ListRecentChangesResponse) {
    if page.changes.is_empty() {
        return;
    }
    for subscriber in state.subscribers.values().filter(|s| s.user == user) {
        for (uri, resource) in &subscriber.uris {
            let Some(resource) = resource else { continue };
            if page.changes.iter().any(|c| resource.changed_by(c)) {
                let _ = subscriber.tx.send(uri.clone());
            }
        }
    }
}

/// The hub's ear on `neotoma_changes`.
struct ChangesListener(Arc<Hub>);

impl Listener for ChangesListener {
    /// Back after an outage (or at start): what committed meanwhile went
    /// unheard, so every feed reads until all of it has settled.
    fn listening(&self, up: bool) {
        let hub = self.0.clone();
        if !up || hub.listening.swap(true, Ordering::SeqCst) {
            hub.listening.store(up, Ordering::SeqCst);
            return;
        }
        tokio::spawn(async move {
            match hub.next_xid().await {
                Ok(next) => {
                    let users: Vec<Uuid> = hub.state().feeds.keys().copied().collect();
                    for user in users {
                        hub.wake(user, Some(next.saturating_sub(1)));
                    }
                }
                Err(e) => tracing::debug!(error = %e, "could not catch up with the change feeds"),
            }
        });
    }

    /// `<user id> <transaction id>`.
    fn notified(&self, payload: &str) {
        let mut parts = payload.split(' ');
        let (Some(user), Some(xid)) = (
            parts.next().and_then(|u| Uuid::parse_str(u).ok()),
            parts.next().and_then(|x| x.parse::<u64>().ok()),
        ) else {
            tracing::debug!(payload, "ignored a change notification");
            return;
        };
        self.0.wake(user, Some(xid));
    }
}

impl Registration {
    /// Adds a URI to hear of; refused when it is a malformed `neotoma://`
    /// URI or the subscriber holds [`MAX_URIS`] already. A URI of another
    /// scheme is served by no one here: accepted, and never changes.
    pub fn add(&self, uri: &str) -> Result<(), NeotomaError> {
        if uri.len() > MAX_URI_BYTES {
            return Err(NeotomaError::invalid_field(
                "uri",
                format!("a URI of at most {MAX_URI_BYTES} bytes"),
            ));
        }
        let resource = if uri.starts_with(neotoma_core::actions::resources::SCHEME) {
            Some(ResourceUri::parse(uri)?)
        } else {
            None
        };
        let mut state = self.hub.state();
        let Some(s) = state.subscribers.get_mut(&self.id) else {
            return Ok(());
        };
        if s.uris.len() >= MAX_URIS && !s.uris.contains_key(uri) {
            return Err(NeotomaError::invalid_field(
                "uri",
                format!("at most {MAX_URIS} resource subscriptions at once"),
            ));
        }
        s.uris.insert(uri.to_string(), resource);
        Ok(())
    }

    pub fn remove(&self, uri: &str) {
        if let Some(s) = self.hub.state().subscribers.get_mut(&self.id) {
            s.uris.remove(uri);
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut state = self.hub.state();
        if let Some(gone) = state.subscribers.remove(&self.id)
            && !state.subscribers.values().any(|s| s.user == gone.user)
        {
            state.feeds.remove(&gone.user);
        }
    }
}
