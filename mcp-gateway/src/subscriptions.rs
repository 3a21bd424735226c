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
//!
//! On a router (docs/scale-out.md) the changes happen on the partitions:
//! the hub listens on each ([`ChangeSource`]), reads a user's feed through
//! the router, and waits for the horizon of the user's partition. A user
//! heard of on another partition than its feed's may have been moved there:
//! the hub asks the router where the user is, and a moved feed starts over
//! on its new partition from the oldest transaction heard of there (the
//! move's copy, when it was heard of: told twice rather than missed).

use crate::database::{ChangeSource, Database, Listener};
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
    /// Where actions run: each feed is read through it.
    db: Database,
    /// Where changes are heard, each with whether its channel is up.
    sources: Vec<(ChangeSource, AtomicBool)>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    subscribers: HashMap<u64, Subscriber>,
    feeds: HashMap<Uuid, Feed>,
    /// Users without subscribers heard of lately, per source: the oldest
    /// transaction and when. A subscription acknowledged just before its
    /// feed starts (`subscriptions/listen` acknowledges first) still hears
    /// of a change that committed in between.
    recent: HashMap<(Uuid, usize), (u64, Instant)>,
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
    /// The source the user's changes happen on (its partition), and the
    /// place read up to there; both unknown until the first read.
    source: Option<usize>,
    cursor: Option<ChangeCursor>,
    /// Transactions heard of, per source, that the feed has not placed
    /// yet (the oldest and the newest): of any source before the first
    /// read; later of another source than the feed's (a move?).
    heard: BTreeMap<usize, (u64, u64)>,
    /// The oldest transaction heard of, per other source, when the router
    /// said the user was not there (a move's copy being made): where the
    /// feed starts if the user turns out to have moved there.
    copied: BTreeMap<usize, u64>,
    /// Read until the horizon of the feed's source has passed this
    /// transaction.
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
    /// A hub reading feeds through `db` that hears of changes on `sources`
    /// ([`Database::change_sources`]).
    pub fn new(db: Database, sources: Vec<ChangeSource>) -> Arc<Hub> {
        Arc::new(Hub {
            db,
            sources: sources
                .into_iter()
                .map(|s| (s, AtomicBool::new(false)))
                .collect(),
            state: Mutex::default(),
        })
    }

    /// Starts listening to every source's changes.
    pub fn start(self: &Arc<Hub>) {
        for (k, (source, _)) in self.sources.iter().enumerate() {
            source
                .db
                .listen(CHANGES_CHANNEL, Arc::new(ChangesListener(self.clone(), k)));
        }
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
            let heard = (0..self.sources.len())
                .filter_map(|k| {
                    let (xid, at) = state.recent.remove(&(user, k))?;
                    (at.elapsed() < RECENT).then_some((k, (xid, xid)))
                })
                .collect();
            let feed = Feed {
                id: state.next_id,
                heard,
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
    /// at least until the horizon passes transaction `xid` of source
    /// `heard.0`.
    fn wake(self: &Arc<Hub>, user: Uuid, heard: Option<(usize, u64)>) {
        let mut state = self.state();
        let Some(feed) = state.feeds.get_mut(&user) else {
            if let Some((source, xid)) = heard {
                remember(&mut state.recent, (user, source), xid);
            }
            return;
        };
        match heard {
            Some((source, xid)) if feed.source == Some(source) => {
                feed.pending = feed.pending.max(Some(xid));
            }
            Some((source, xid)) => {
                let (oldest, newest) = feed.heard.entry(source).or_insert((xid, xid));
                (*oldest, *newest) = ((*oldest).min(xid), (*newest).max(xid));
            }
            None => {}
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
            Some(h) if feed.heard.is_empty() && feed.pending.is_none_or(|p| p < h) => {
                feed.pending = None;
                feed.reading = false;
                true
            }
            _ => false,
        }
    }

    /// One catch-up: where the user is (at the first read, or when heard
    /// of elsewhere), that source's horizon (every transaction below it has
    /// ended), then every change after the cursor. Answers the horizon.
    async fn read_once(&self, user: Uuid, feed: u64) -> Result<u64, NeotomaError> {
        let (known, asked) = {
            let state = self.state();
            let Some(f) = state.feeds.get(&user).filter(|f| f.id == feed) else {
                return Ok(0);
            };
            (f.source, f.heard.clone())
        };
        let source = match known {
            Some(s) if asked.is_empty() => s,
            _ => self.source_of(user).await?,
        };
        let horizon = self.horizon(source).await?;
        let mut cursor = {
            let mut state = self.state();
            let Some(feed) = state.feeds.get_mut(&user).filter(|f| f.id == feed) else {
                return Ok(horizon);
            };
            let here = feed.heard.remove(&source);
            let cursor = match feed.cursor {
                Some(cursor) if feed.source == Some(source) => {
                    if let Some((_, newest)) = here {
                        feed.pending = feed.pending.max(Some(newest));
                    }
                    cursor
                }
                // The first read, or the user was moved: the feed starts on
                // `source` from the oldest transaction heard of there (its
                // copy, when it was heard of before the switch: a change
                // told twice rather than one missed).
                _ => {
                    let copied = feed.copied.remove(&source);
                    let oldest = [here.map(|(oldest, _)| oldest), copied, Some(horizon)];
                    feed.source = Some(source);
                    feed.pending = here.map(|(_, newest)| newest);
                    feed.copied.clear();
                    ChangeCursor {
                        xid: oldest.into_iter().flatten().min().unwrap_or(horizon),
                        seq: 0,
                    }
                }
            };
            feed.cursor = Some(cursor);
            // What was heard of elsewhere when the router was asked is not
            // where the user is (a move's copy, or the erasure of the old
            // one); anything heard since is asked about again.
            let copied = &mut feed.copied;
            feed.heard.retain(|k, seen| {
                if asked.get(k) != Some(seen) {
                    return true;
                }
                let oldest = copied.entry(*k).or_insert(seen.0);
                *oldest = (*oldest).min(seen.0);
                false
            });
            cursor
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

    /// The source `user`'s changes happen on: the only one, or on a router
    /// the user's partition.
    async fn source_of(&self, user: Uuid) -> Result<usize, NeotomaError> {
        if self.sources.len() == 1 {
            return Ok(0);
        }
        let number = self
            .db
            .own_query_json_with(
                "SELECT to_jsonb(neotoma_router.partition_number($1))",
                &[&user],
            )
            .await?;
        self.sources
            .iter()
            .position(|(s, _)| s.partition.map(i64::from) == number.as_i64())
            .ok_or_else(|| {
                NeotomaError::new(
                    ErrorCode::ServiceUnavailable,
                    format!("the router placed the user on partition {number}, which this gateway does not listen to: restart it"),
                )
            })
    }

    /// The oldest transaction still running on `source` (or the next one):
    /// every transaction below it has ended.
    async fn horizon(&self, source: usize) -> Result<u64, NeotomaError> {
        self.snapshot_bound(source, "pg_snapshot_xmin").await
    }

    /// The next transaction id of `source`: every change committed so far
    /// is below it.
    async fn next_xid(&self, source: usize) -> Result<u64, NeotomaError> {
        self.snapshot_bound(source, "pg_snapshot_xmax").await
    }

    /// `bound` (pg_snapshot_xmin or _xmax) of a snapshot taken now on
    /// `source`.
    async fn snapshot_bound(&self, source: usize, bound: &str) -> Result<u64, NeotomaError> {
        let v = self.sources[source]
            .0
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

/// Remembers that `user`, without subscribers, changed in transaction `xid`
/// of a source.
fn remember(recent: &mut HashMap<(Uuid, usize), (u64, Instant)>, user: (Uuid, usize), xid: u64) {
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

/// The hub's ear on one source's `neotoma_changes`.
struct ChangesListener(Arc<Hub>, usize);

impl Listener for ChangesListener {
    /// Back after an outage (or at start): what committed meanwhile went
    /// unheard, so every feed of the source reads until all of it has
    /// settled.
    fn listening(&self, up: bool) {
        let (hub, source) = (self.0.clone(), self.1);
        let flag = &hub.sources[source].1;
        if !up || flag.swap(true, Ordering::SeqCst) {
            flag.store(up, Ordering::SeqCst);
            return;
        }
        tokio::spawn(async move {
            match hub.next_xid(source).await {
                Ok(next) => {
                    let users: Vec<Uuid> = (hub.state().feeds.iter())
                        .filter(|(_, f)| f.source.is_none_or(|s| s == source))
                        .map(|(u, _)| *u)
                        .collect();
                    for user in users {
                        hub.wake(user, Some((source, next.saturating_sub(1))));
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
        self.0.wake(user, Some((self.1, xid)));
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
