//! Rate limits: per user and action (seed 000 section 9: store 100/min,
//! retrieve_entities 300/min; configurable), and failed authentications per
//! client address.
//!
//! "N per minute" means at most N calls in any 60-second window (a sliding
//! log of admitted calls, not a bucket that refills while it is drained).
//! Counted in this gateway process: several gateways each allow N.

use neotoma_core::{ErrorCode, NeotomaError};
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// At most `limit` events per key in any window of `period`.
pub struct SlidingWindow<K> {
    limit: usize,
    period: Duration,
    log: Mutex<HashMap<K, VecDeque<Instant>>>,
}

/// Keys are dropped once their log is empty, checked every this many calls.
const PRUNE_EVERY: usize = 4096;

// Its users are the HTTP surface's (tokens, OAuth, the inspector).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
impl<K: Hash + Eq + Clone> SlidingWindow<K> {
    pub fn new(limit: u32, period: Duration) -> Self {
        SlidingWindow {
            limit: limit as usize,
            period,
            log: Mutex::new(HashMap::new()),
        }
    }

    /// How long until `key` may have another event (None: it may now).
    fn wait(&self, log: &mut VecDeque<Instant>, now: Instant) -> Option<Duration> {
        while log
            .front()
            .is_some_and(|t| now.duration_since(*t) >= self.period)
        {
            log.pop_front();
        }
        (log.len() >= self.limit).then(|| {
            let oldest = log.front().copied().unwrap_or(now);
            self.period.saturating_sub(now.duration_since(oldest))
        })
    }

    fn with_log<R>(&self, key: &K, f: impl FnOnce(&mut VecDeque<Instant>) -> R) -> R {
        let mut map = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= PRUNE_EVERY && map.len().is_multiple_of(PRUNE_EVERY) {
            let now = Instant::now();
            let period = self.period;
            map.retain(|_, log| log.back().is_some_and(|t| now.duration_since(*t) < period));
        }
        f(map.entry(key.clone()).or_default())
    }

    /// Counts an event for `key` if the window has room; else answers how
    /// long to wait.
    pub fn try_acquire(&self, key: &K) -> Result<(), Duration> {
        let now = Instant::now();
        self.with_log(key, |log| match self.wait(log, now) {
            Some(wait) => Err(wait),
            None => {
                log.push_back(now);
                Ok(())
            }
        })
    }

    /// Holds a place in the window for an attempt whose outcome is not
    /// known yet (a password being checked): concurrent attempts each take
    /// a place, so no more than the limit run at once or fail in a window.
    /// A failure keeps its place; [`SlidingWindow::forgive`] gives back
    /// the place of one that succeeded. Else how long to wait.
    pub fn reserve(&self, key: &K) -> Result<Instant, Duration> {
        let now = Instant::now();
        self.with_log(key, |log| match self.wait(log, now) {
            Some(wait) => Err(wait),
            None => {
                log.push_back(now);
                Ok(now)
            }
        })
    }

    /// Gives back the place [`SlidingWindow::reserve`] held at `at`.
    pub fn forgive(&self, key: &K, at: Instant) {
        self.with_log(key, |log| {
            if let Some(i) = log.iter().rposition(|t| *t == at) {
                log.remove(i);
            }
        });
    }

    /// How long `key` must wait, without counting anything.
    pub fn blocked(&self, key: &K) -> Option<Duration> {
        self.with_log(key, |log| self.wait(log, Instant::now()))
    }

    /// Counts an event for `key` regardless of the limit.
    pub fn record(&self, key: &K) {
        self.with_log(key, |log| log.push_back(Instant::now()));
    }
}

/// Whole seconds to wait, at least one.
pub fn retry_after_seconds(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

pub struct RateLimits {
    by_action: HashMap<String, (u32, SlidingWindow<Uuid>)>,
}

/// `ACTION=PER_MINUTE` (0 switches the limit off).
pub fn parse_limit(s: &str) -> Result<(String, u32), String> {
    let (action, n) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not ACTION=PER_MINUTE"))?;
    let n = n
        .trim()
        .parse::<u32>()
        .map_err(|_| format!("`{n}` is not a number of calls per minute"))?;
    Ok((action.trim().to_string(), n))
}

impl RateLimits {
    pub fn new(limits: &[(String, u32)]) -> RateLimits {
        RateLimits::with_period(limits, Duration::from_secs(60))
    }

    fn with_period(limits: &[(String, u32)], period: Duration) -> RateLimits {
        let by_action = limits
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(action, n)| (action.clone(), (*n, SlidingWindow::new(*n, period))))
            .collect();
        RateLimits { by_action }
    }

    /// Counts one call of `action` by `user`; refuses it with
    /// `RATE_LIMIT_EXCEEDED` (and when to retry) past the limit.
    pub fn check(&self, action: &str, user: Uuid) -> Result<(), NeotomaError> {
        let Some((per_minute, window)) = self.by_action.get(action) else {
            return Ok(());
        };
        window.try_acquire(&user).map_err(|wait| {
            let retry_after = retry_after_seconds(wait);
            NeotomaError::new(
                ErrorCode::RateLimitExceeded,
                format!("Rate limit exceeded for {action} ({per_minute}/min). Retry after {retry_after} seconds."),
            )
            .with("retry_after_seconds", retry_after)
            .with("limit_per_minute", *per_minute)
            .with("action", action)
        })
    }
}

/// Hands freed heap memory back to the system (glibc keeps it otherwise,
/// and a few large requests would leave the process large for good).
pub fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_per_user_and_action() {
        let limits = RateLimits::new(&[("store".into(), 3), ("off".into(), 0)]);
        let (a, b) = (Uuid::from_bytes([1; 16]), Uuid::from_bytes([2; 16]));
        for _ in 0..3 {
            limits.check("store", a).unwrap();
        }
        let e = limits.check("store", a).unwrap_err();
        assert_eq!(e.code, ErrorCode::RateLimitExceeded);
        assert!(e.details["retry_after_seconds"].as_u64().unwrap() >= 1);
        // Another user, another action, a switched-off limit: not affected.
        limits.check("store", b).unwrap();
        for _ in 0..10 {
            limits.check("retrieve_entities", a).unwrap();
            limits.check("off", a).unwrap();
        }
    }

    #[test]
    fn the_window_slides_and_never_admits_more_than_the_limit() {
        // A window of 200 ms: a burst of 5 fills it; nothing more is admitted
        // until the oldest call is 200 ms old, and then only as many as left.
        let limits = RateLimits::with_period(&[("store".into(), 5)], Duration::from_millis(200));
        let user = Uuid::from_bytes([3; 16]);
        let start = Instant::now();
        let mut admitted: Vec<Instant> = Vec::new();
        while start.elapsed() < Duration::from_millis(700) {
            if limits.check("store", user).is_ok() {
                admitted.push(Instant::now());
            }
            std::thread::sleep(Duration::from_millis(3));
        }
        for (i, t) in admitted.iter().enumerate() {
            let in_window = admitted[i..]
                .iter()
                .take_while(|u| u.duration_since(*t) < Duration::from_millis(200))
                .count();
            assert!(in_window <= 5, "{in_window} calls within one window");
        }
        assert!(
            admitted.len() >= 10,
            "the window refills: {}",
            admitted.len()
        );
    }

    #[test]
    fn reservations_count_until_forgiven() {
        let w = SlidingWindow::new(2, Duration::from_secs(60));
        let a = w.reserve(&1).unwrap();
        let b = w.reserve(&1).unwrap();
        // Two attempts in flight fill the window: a third waits.
        assert!(w.reserve(&1).is_err());
        w.forgive(&1, a);
        let c = w.reserve(&1).unwrap();
        w.forgive(&1, b);
        w.forgive(&1, c);
        assert!(w.blocked(&1).is_none());
    }

    #[test]
    fn blocked_does_not_count() {
        let w = SlidingWindow::new(2, Duration::from_secs(60));
        assert!(w.blocked(&1).is_none());
        w.record(&1);
        assert!(w.blocked(&1).is_none());
        w.record(&1);
        assert!(w.blocked(&1).is_some());
        assert!(w.try_acquire(&1).is_err());
        assert!(w.blocked(&2).is_none());
    }

    #[test]
    fn parses_flags() {
        assert_eq!(
            parse_limit("store=100").unwrap(),
            ("store".to_string(), 100)
        );
        assert!(parse_limit("store").is_err());
        assert!(parse_limit("store=lots").is_err());
    }
}
