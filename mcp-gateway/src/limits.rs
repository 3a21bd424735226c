//! Per-user rate limits per action (seed 000 section 9: store 100/min,
//! retrieve_entities 300/min; configurable). Counted in this process.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use neotoma_core::{ErrorCode, NeotomaError};
use std::collections::HashMap;
use std::num::NonZeroU32;
use uuid::Uuid;

pub struct RateLimits {
    by_action: HashMap<String, (u32, DefaultKeyedRateLimiter<Uuid>)>,
    clock: DefaultClock,
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
        let by_action = limits
            .iter()
            .filter_map(|(action, n)| {
                let per_minute = NonZeroU32::new(*n)?;
                Some((
                    action.clone(),
                    (*n, RateLimiter::keyed(Quota::per_minute(per_minute))),
                ))
            })
            .collect();
        RateLimits {
            by_action,
            clock: DefaultClock::default(),
        }
    }

    /// Counts one call of `action` by `user`; refuses it with
    /// `RATE_LIMIT_EXCEEDED` (and when to retry) past the limit.
    pub fn check(&self, action: &str, user: Uuid) -> Result<(), NeotomaError> {
        let Some((per_minute, limiter)) = self.by_action.get(action) else {
            return Ok(());
        };
        limiter.check_key(&user).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            let retry_after = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            NeotomaError::new(
                ErrorCode::RateLimitExceeded,
                format!("Rate limit exceeded for {action} ({per_minute}/min). Retry after {retry_after} seconds."),
            )
            .with("retry_after_seconds", retry_after.max(1))
            .with("limit_per_minute", *per_minute)
            .with("action", action)
        })
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
    fn parses_flags() {
        assert_eq!(
            parse_limit("store=100").unwrap(),
            ("store".to_string(), 100)
        );
        assert!(parse_limit("store").is_err());
        assert!(parse_limit("store=lots").is_err());
    }
}
