//! The seed's error envelope and canonical error codes (seed 000, sections 4 and 5).
//!
//! Every action fails with a [`NeotomaError`]. Inside Postgres it is raised with
//! SQLSTATE [`SQLSTATE`] and the envelope as JSON in the error DETAIL, so SQL
//! callers and the MCP gateway read the same thing.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use strum::{Display, EnumIter, EnumString, IntoStaticStr};

/// The SQLSTATE every Neotoma action error is raised with.
pub const SQLSTATE: &str = "NT001";

/// Canonical error codes: seed 000 section 5, the per-action codes of section 3,
/// plus `RATE_LIMIT_EXCEEDED` (section 9) and `FORBIDDEN`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    Display,
    EnumString,
    IntoStaticStr,
    EnumIter,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    ValidationError,
    EntityNotFound,
    /// A record of the deprecated record actions (an entity) that is not there.
    RecordNotFound,
    /// A product metric that does not exist (or is not recorded here).
    MetricNotFound,
    SourceNotFound,
    FileNotFound,
    FileTooLarge,
    UnsupportedFileType,
    FieldNotFound,
    NotFound,
    InvalidRelationshipType,
    CycleDetected,
    EntityAlreadyMerged,
    SchemaNotFound,
    SchemaExists,
    UserIdRequired,
    QuotaExceeded,
    RateLimitExceeded,
    Forbidden,
    Unauthorized,
    FileReadError,
    UnknownCapability,
    DbInsertFailed,
    DbUpdateFailed,
    DbDeleteFailed,
    DbQueryFailed,
    SigningFailed,
    AnalysisFailed,
    ServiceUnavailable,
    /// Plaid (seed 001 §3.22–3.25): no credentials configured.
    PlaidNotConfigured,
    /// Plaid answered an error, or could not be reached.
    PlaidApiError,
    /// A public token Plaid refuses (invalid or expired).
    PlaidInvalidToken,
    PlaidItemNotFound,
    /// A provider sync (seed 001 §3.24, §3.27) that could not complete.
    SyncFailed,
    ProviderNotFound,
    ConnectorNotFound,
    /// Prometheus answered an error to a metrics query (seed 001 §3.28).
    PrometheusQueryFailed,
    /// No Prometheus is configured, or it cannot be reached.
    MetricsServiceUnavailable,
    /// A workspace the user has neither written to nor chosen.
    WorkspaceNotFound,
    /// What an action names lies in another workspace than the one it
    /// writes to.
    WorkspaceMismatch,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<ErrorCode> {
        s.parse().ok()
    }

    /// The HTTP status the seed gives this code.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::ValidationError
            | ErrorCode::UnknownCapability
            | ErrorCode::FileTooLarge
            | ErrorCode::UnsupportedFileType
            | ErrorCode::InvalidRelationshipType
            | ErrorCode::CycleDetected
            | ErrorCode::EntityAlreadyMerged
            | ErrorCode::UserIdRequired
            | ErrorCode::PlaidInvalidToken
            | ErrorCode::WorkspaceMismatch => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::EntityNotFound
            | ErrorCode::RecordNotFound
            | ErrorCode::MetricNotFound
            | ErrorCode::SourceNotFound
            | ErrorCode::FileNotFound
            | ErrorCode::FieldNotFound
            | ErrorCode::NotFound
            | ErrorCode::SchemaNotFound
            | ErrorCode::PlaidItemNotFound
            | ErrorCode::ProviderNotFound
            | ErrorCode::ConnectorNotFound
            | ErrorCode::WorkspaceNotFound => 404,
            ErrorCode::SchemaExists => 409,
            ErrorCode::QuotaExceeded | ErrorCode::RateLimitExceeded => 429,
            ErrorCode::ServiceUnavailable
            | ErrorCode::PlaidNotConfigured
            | ErrorCode::MetricsServiceUnavailable => 503,
            ErrorCode::FileReadError
            | ErrorCode::DbInsertFailed
            | ErrorCode::DbUpdateFailed
            | ErrorCode::DbDeleteFailed
            | ErrorCode::DbQueryFailed
            | ErrorCode::SigningFailed
            | ErrorCode::AnalysisFailed
            | ErrorCode::PlaidApiError
            | ErrorCode::SyncFailed
            | ErrorCode::PrometheusQueryFailed => 500,
        }
    }

    /// Whether the seed says a caller may retry the same request: server-side
    /// failures (5xx, except a missing configuration) and rate limits.
    pub fn retryable(self) -> bool {
        (self.http_status() >= 500 && self != ErrorCode::PlaidNotConfigured)
            || self == ErrorCode::RateLimitExceeded
    }
}

/// An action failure: the body of the seed's `ErrorEnvelope` (without `trace_id`,
/// which the gateway adds).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct NeotomaError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Map<String, Value>,
}

pub type Result<T, E = NeotomaError> = std::result::Result<T, E>;

impl NeotomaError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        NeotomaError {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Adds one entry to `details`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    pub fn validation(message: impl Into<String>) -> Self {
        NeotomaError::new(ErrorCode::ValidationError, message)
    }

    /// A validation error that names the offending field.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        NeotomaError::validation(message).with("field", field)
    }

    /// The same error naming field `to` where it named `from` (a check
    /// shared by actions whose fields are named differently).
    pub fn renamed_field(mut self, from: &str, to: &str) -> Self {
        if self.details.get("field").and_then(Value::as_str) == Some(from) {
            self.details.insert("field".into(), to.into());
            self.message = self.message.replace(from, to);
        }
        self
    }

    /// `{code, message, details}`, the envelope body.
    pub fn to_json(&self) -> Value {
        json!({
            "code": self.code.as_str(),
            "message": self.message,
            "details": Value::Object(self.details.clone()),
        })
    }

    /// `{"error": {code, message, details[, trace_id]}}`, the full envelope.
    pub fn envelope(&self, trace_id: Option<&str>) -> Value {
        let mut body = self.to_json();
        if let Some(t) = trace_id {
            body["trace_id"] = Value::String(t.to_string());
        }
        json!({ "error": body })
    }

    /// Reads an envelope body (`{code, message, details}`) or a full envelope.
    pub fn from_json(value: &Value) -> Option<Self> {
        let body = value.get("error").unwrap_or(value);
        let code = ErrorCode::parse(body.get("code")?.as_str()?)?;
        let message = body
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let details = match body.get("details") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        Some(NeotomaError {
            code,
            message,
            details,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_through_their_names() {
        use strum::IntoEnumIterator;
        for code in ErrorCode::iter() {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            let via_serde: ErrorCode = serde_json::from_value(json!(code.as_str())).unwrap();
            assert_eq!(via_serde, code);
        }
        assert_eq!(ErrorCode::parse("NOPE"), None);
    }

    #[test]
    fn envelope_has_the_seed_shape() {
        let e =
            NeotomaError::invalid_field("limit", "limit must be between 1 and 1000").with("got", 0);
        let env = e.envelope(Some("trace_1"));
        assert_eq!(env["error"]["code"], "VALIDATION_ERROR");
        assert_eq!(env["error"]["details"]["field"], "limit");
        assert_eq!(env["error"]["details"]["got"], 0);
        assert_eq!(env["error"]["trace_id"], "trace_1");
        assert_eq!(NeotomaError::from_json(&env), Some(e.clone()));
        assert_eq!(NeotomaError::from_json(&e.to_json()), Some(e));
    }

    #[test]
    fn seed_http_statuses() {
        assert_eq!(ErrorCode::ValidationError.http_status(), 400);
        assert_eq!(ErrorCode::EntityNotFound.http_status(), 404);
        assert_eq!(ErrorCode::SchemaExists.http_status(), 409);
        assert_eq!(ErrorCode::QuotaExceeded.http_status(), 429);
        assert_eq!(ErrorCode::ServiceUnavailable.http_status(), 503);
        assert!(ErrorCode::DbQueryFailed.retryable());
        assert!(!ErrorCode::ValidationError.retryable());
        assert!(
            ErrorCode::ServiceUnavailable.retryable() && ErrorCode::RateLimitExceeded.retryable()
        );
        assert!(!ErrorCode::FileNotFound.retryable() && !ErrorCode::QuotaExceeded.retryable());
    }
}
