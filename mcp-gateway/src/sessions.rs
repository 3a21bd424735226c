//! Streamable HTTP sessions (in the protocol generations that have them)
//! belong to the user who opened them: a request naming another user's
//! session is answered as if the session did not exist, so it can neither be
//! used nor deleted by a stranger. Each user may keep a bounded number of
//! sessions (opening one more closes that user's least recently used one),
//! the whole process a bounded number, and idle sessions expire
//! (`SessionConfig::keep_alive`, set from `--session-idle-secs`).

use crate::identity::Caller;
use crate::web::refuse;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use neotoma_core::{ErrorCode, NeotomaError};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use uuid::Uuid;

const SESSION_HEADER: &str = "mcp-session-id";

pub struct Sessions {
    manager: Arc<LocalSessionManager>,
    /// Session id → (owner, last used).
    owners: Mutex<HashMap<String, (Uuid, Instant)>>,
    per_user: usize,
    total: usize,
}

enum Owner {
    Unknown,
    Caller,
    Stranger,
}

impl Sessions {
    pub fn new(manager: Arc<LocalSessionManager>, per_user: usize, total: usize) -> Sessions {
        Sessions {
            manager,
            owners: Mutex::default(),
            per_user: per_user.max(1),
            total: total.max(1),
        }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Uuid, Instant)>> {
        self.owners.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn owner(&self, id: &str, user: Uuid) -> Owner {
        match self.owners().get_mut(id) {
            None => Owner::Unknown,
            Some((owner, used)) if *owner == user => {
                *used = Instant::now();
                Owner::Caller
            }
            Some(_) => Owner::Stranger,
        }
    }

    /// Forgets sessions the transport has closed (idle, deleted, ended).
    async fn prune(&self) {
        let live = self.manager.sessions.read().await;
        self.owners().retain(|id, _| live.contains_key(id.as_str()));
    }

    /// Makes room for one more session of `user`: closes its least recently
    /// used one when it is at its limit. False when the process is full.
    async fn make_room(&self, user: Uuid) -> bool {
        self.prune().await;
        let evict = {
            let owners = self.owners();
            let mine: Vec<(&String, &Instant)> = owners
                .iter()
                .filter(|(_, (owner, _))| *owner == user)
                .map(|(id, (_, used))| (id, used))
                .collect();
            if mine.len() >= self.per_user {
                mine.iter()
                    .min_by_key(|(_, used)| **used)
                    .map(|(id, _)| (*id).clone())
            } else if owners.len() >= self.total {
                return false;
            } else {
                None
            }
        };
        if let Some(id) = evict {
            self.owners().remove(&id);
            let _ = self.manager.close_session(&id.into()).await;
        }
        true
    }

    #[cfg(test)]
    fn count(&self) -> usize {
        self.owners().len()
    }
}

fn no_such_session() -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        NeotomaError::new(ErrorCode::NotFound, "no such session"),
    )
}

/// Axum middleware in front of `/mcp`, after authentication.
pub async fn bind_sessions(
    State(sessions): State<Arc<Sessions>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(caller) = request.extensions().get::<Caller>().copied() else {
        return next.run(request).await;
    };
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match named {
        Some(id) => {
            match sessions.owner(&id, caller.user) {
                Owner::Stranger => return no_such_session(),
                Owner::Caller | Owner::Unknown => {}
            }
            let delete = request.method() == Method::DELETE;
            let response = next.run(request).await;
            if delete && response.status().is_success() {
                sessions.owners().remove(&id);
            }
            response
        }
        None => {
            if request.method() == Method::POST && !sessions.make_room(caller.user).await {
                return refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    NeotomaError::new(
                        ErrorCode::ServiceUnavailable,
                        "this server holds as many sessions as it may; retry later",
                    )
                    .with("retryable", true),
                );
            }
            let response = next.run(request).await;
            if let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                sessions
                    .owners()
                    .insert(id.to_string(), (caller.user, Instant::now()));
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sessions_belong_to_their_user() {
        let s = Sessions::new(Arc::new(LocalSessionManager::default()), 2, 10);
        let (a, b) = (Uuid::from_bytes([1; 16]), Uuid::from_bytes([2; 16]));
        s.owners().insert("s1".into(), (a, Instant::now()));
        assert!(matches!(s.owner("s1", a), Owner::Caller));
        assert!(matches!(s.owner("s1", b), Owner::Stranger));
        assert!(matches!(s.owner("nope", b), Owner::Unknown));
        // Sessions the transport does not know (closed) are forgotten.
        assert!(s.make_room(a).await);
        assert_eq!(s.count(), 0);
    }
}
