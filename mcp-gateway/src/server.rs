//! The MCP server: tools from the catalog, each call one SQL function call.

use crate::catalog::Catalog;
use crate::database::Database;
use neotoma_core::NeotomaError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use uuid::Uuid;

pub const SERVER_NAME: &str = "neotoma-mcp";
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

const INSTRUCTIONS: &str = "Neotoma is a memory for agents. Store what you learn with `store` \
(structured `entities` with an `entity_type`, or a file), then read it back with the \
`retrieve_*` tools: every field of an entity snapshot traces to the observation and source it \
came from. Call `list_entity_types` before choosing an entity_type. Use `correct` to fix a \
field. Errors come back as {\"error\": {code, message, details, trace_id}}.";

/// What every session shares.
pub struct AppState {
    pub db: Database,
    pub catalog: Catalog,
    /// The user of stdio sessions and of unauthenticated HTTP.
    pub default_user: Uuid,
}

#[derive(Clone)]
pub struct Gateway {
    pub state: Arc<AppState>,
}

pub fn new_trace_id() -> String {
    format!("trace_{}", Uuid::new_v4().simple())
}

impl Gateway {
    pub fn new(state: Arc<AppState>) -> Self {
        Gateway { state }
    }

    fn user_for(&self, _cx: &RequestContext<RoleServer>) -> Uuid {
        self.state.default_user
    }

    /// Runs one action and shapes the MCP result.
    async fn run_action(&self, name: &str, args: Value, user: Uuid) -> CallToolResult {
        let trace_id = new_trace_id();
        let started = Instant::now();
        let outcome = match self.state.catalog.get(name) {
            Some(action) => {
                tracing::debug!(trace_id, tool = name, action = %action.name, "calling");
                self.state
                    .db
                    .call(&action.sql_function, Some(user), &args, !action.read_only)
                    .await
            }
            None => Err(NeotomaError::validation(format!(
                "unknown tool `{name}`; call tools/list for the available tools"
            ))
            .with("tool", name)),
        };
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        match outcome {
            Ok(value) => {
                tracing::info!(trace_id, tool = name, elapsed_ms, "tool call ok");
                CallToolResult::structured(value)
            }
            Err(e) => {
                tracing::warn!(trace_id, tool = name, elapsed_ms, code = %e.code, message = %e.message, "tool call failed");
                CallToolResult::structured_error(e.envelope(Some(&trace_id)))
            }
        }
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new(SERVER_NAME, SERVER_VERSION)
                    .with_title("Neotoma")
                    .with_description("Memory for AI agents, inside Postgres"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.state.catalog.get(name).map(|a| a.tool.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.state.catalog.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let user = self.user_for(&cx);
        let args = Value::Object(request.arguments.unwrap_or_default());
        Ok(self.run_action(&request.name, args, user).await.into())
    }
}

/// Readiness: the database answers and the installed extension has the same
/// major.minor version as this gateway.
pub async fn check_ready(state: &AppState) -> Result<Value, Value> {
    let installed = state
        .db
        .query_json(
            "SELECT to_jsonb((SELECT extversion FROM pg_extension WHERE extname = 'neotoma'))",
        )
        .await
        .map_err(|e| serde_json::json!({"status": "unavailable", "error": e.to_json()}))?;
    let installed = installed.as_str().unwrap_or_default().to_string();
    let compatible = major_minor(&installed) == major_minor(SERVER_VERSION);
    let body = serde_json::json!({
        "status": if compatible { "ready" } else { "incompatible" },
        "extension_version": installed,
        "gateway_version": SERVER_VERSION,
        "catalog_version": state.catalog.version,
    });
    if compatible { Ok(body) } else { Err(body) }
}

fn major_minor(v: &str) -> Option<(u64, u64)> {
    let mut parts = v.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_major_and_minor() {
        assert_eq!(major_minor("0.1.0"), Some((0, 1)));
        assert_eq!(major_minor("0.1.7"), major_minor("0.1.0"));
        assert_ne!(major_minor("0.2.0"), major_minor("0.1.0"));
        assert_eq!(major_minor(""), None);
    }

    #[test]
    fn trace_ids_are_unique() {
        assert_ne!(new_trace_id(), new_trace_id());
        assert!(new_trace_id().starts_with("trace_"));
    }
}
