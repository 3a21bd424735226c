//! The MCP server: tools and resources from the catalog, each call one SQL
//! function call. No business logic: who the caller is, how often it may
//! call, and how the answer is shaped for MCP.

use crate::catalog::{Action, Catalog, ReadFile};
use crate::database::Database;
use crate::files::FileRoots;
use crate::identity::Caller;
use crate::interpreter::ModelInterpreter;
use crate::limits::RateLimits;
use crate::metrics::Metrics;
use crate::subscriptions::{Hub, Registration};
use neotoma_core::tool_sets::{ErrorStyle, ToolSet};
use neotoma_core::{ErrorCode, NeotomaError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceUpdatedNotificationParam,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

pub const SERVER_NAME: &str = "neotoma-mcp";
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How often a call that asked for progress hears that it is still running.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// What every session shares.
pub struct AppState {
    pub db: Database,
    pub catalog: Catalog,
    /// The user of stdio sessions (and of HTTP when tokens are not required).
    pub default_user: Uuid,
    pub limits: RateLimits,
    pub metrics: Arc<Metrics>,
    /// Reads files the built-in interpreters cannot, when configured.
    pub model: Option<ModelInterpreter>,
    /// Embeds search queries and entities by a remote model, when configured.
    pub embedder: Option<crate::embeddings::Embedder>,
    /// Largest file read from a `file_path`.
    pub max_file_bytes: u64,
    /// Directories `file_path` may name (--file-root).
    pub file_roots: FileRoots,
    /// Prometheus, Plaid, IMAP: what some actions ask the gateway to reach.
    #[cfg(feature = "services")]
    pub services: crate::services::Services,
    /// Calls carrying files that may run at once (--max-large-requests):
    /// each holds a few copies of its file in memory.
    pub large_calls: tokio::sync::Semaphore,
    /// Resource subscriptions, fed by the database's change notifications.
    pub hub: Arc<Hub>,
    /// Neotoma's answers in full unless a call asks otherwise
    /// (`--verbose-answers`).
    pub verbose_answers: bool,
    /// Calls a token's limits refused, noted for the owner's audit trail
    /// at most once a minute per token, action and limit.
    pub denials: crate::limits::SlidingWindow<(Uuid, String, String)>,
}

#[derive(Clone)]
pub struct Gateway {
    pub state: Arc<AppState>,
    /// What this session subscribed to (`resources/subscribe`, before
    /// protocol 2026-07-28); a gateway value lives as long as its session.
    session: Arc<SessionSubscriptions>,
}

/// A session's resource subscriptions: its place in the hub and the task
/// that forwards what changes to the session's peer.
#[derive(Default)]
struct SessionSubscriptions(std::sync::Mutex<Option<(Registration, tokio::task::JoinHandle<()>)>>);

impl Drop for SessionSubscriptions {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.0.lock()
            && let Some((_, forward)) = slot.take()
        {
            forward.abort();
        }
    }
}

pub fn new_trace_id() -> String {
    format!("trace_{}", Uuid::new_v4().simple())
}

/// A failure as MCP tool result: `isError`, answered the way the tool's
/// set answers (Neotoma's: the envelope with its trace id).
fn tool_error(e: &NeotomaError, trace_id: &str, style: ErrorStyle) -> CallToolResult {
    match neotoma_core::tool_sets::shape_error(style, e, trace_id) {
        (Some(body), _) => CallToolResult::structured_error(body),
        (None, text) => CallToolResult::error(vec![rmcp::model::ContentBlock::text(text)]),
    }
}

impl Gateway {
    /// Whether the tool sets served list this resource: Neotoma's own
    /// (`neotoma://`) with Neotoma's tools, the reference memory server's
    /// (`memory://knowledge-graph`) with its tools. Any can be read.
    fn serves_resource(&self, uri: &str) -> bool {
        let sets = &self.state.catalog.tool_sets;
        if uri.starts_with("memory://") {
            sets.contains(&neotoma_core::tool_sets::ToolSet::Memory)
        } else {
            sets.contains(&neotoma_core::tool_sets::ToolSet::Neotoma)
        }
    }

    pub fn new(state: Arc<AppState>) -> Self {
        Gateway {
            state,
            session: Arc::default(),
        }
    }

    /// Who this request acts for: the HTTP request's authenticated caller
    /// (the transport always sets one), else the machine's owner (stdio).
    fn caller_for(&self, cx: &RequestContext<RoleServer>) -> Caller {
        #[cfg(feature = "http")]
        if let Some(parts) = cx.extensions.get::<axum::http::request::Parts>() {
            return parts.extensions.get::<Caller>().copied().unwrap_or(Caller {
                user: self.state.default_user,
                operator: false,
                remote: true,
                token: None,
            });
        }
        #[cfg(not(feature = "http"))]
        let _ = cx;
        Caller::local(self.state.default_user)
    }

    /// Does the outside work an action's answer describes (its
    /// `external`: Prometheus, Plaid, IMAP) and completes the answer.
    async fn complete_externally(
        &self,
        work: Value,
        answer: Value,
        caller: &Caller,
    ) -> Result<Value, NeotomaError> {
        #[cfg(feature = "services")]
        return self
            .state
            .services
            .complete(work, answer, caller, &self.state.db)
            .await;
        #[cfg(not(feature = "services"))]
        {
            let _ = (answer, caller);
            Err(NeotomaError::new(
                ErrorCode::ServiceUnavailable,
                format!(
                    "this neotoma-mcp was built without outside services (cargo feature `services`): it cannot reach {}",
                    work["service"]
                ),
            ))
        }
    }

    /// Runs one action for `caller`, checking its rate limit first: reads the
    /// files it names (where the caller may), makes its SQL call, and
    /// completes the model interpretation it leaves pending (one more SQL
    /// call records it).
    async fn run(
        &self,
        action: &Action,
        mut args: Value,
        caller: Caller,
    ) -> Result<Value, NeotomaError> {
        self.state.limits.check(&action.name, caller.user)?;
        // A bulk call's operations count as calls of their own actions (a
        // bulk of stores is held to the store limit), as do a batch's
        // relationships.
        for nested in nested_actions(&action.name, &args) {
            self.state.limits.check(nested, caller.user)?;
        }
        neotoma_core::limits::check_input(&args)?;
        for spec in &action.read_files {
            self.read_file(&mut args, spec, &caller).await?;
        }
        // A call carrying a file holds a few copies of it: a few at a time
        // (over HTTP the transport already bounds the bodies it reads; this
        // also bounds stdio, and the work after the body).
        let large_call =
            if crate::database::carries_file(&args) {
                let permit = self.state.large_calls.acquire().await;
                Some(permit.map_err(|_| {
                    NeotomaError::new(ErrorCode::ServiceUnavailable, "shutting down")
                })?)
            } else {
                None
            };
        let settings = self.query_embedding(&action.name, &args).await;
        let result = self
            .state
            .db
            .call_with(
                &action.sql_function,
                &caller,
                &args,
                !action.read_only,
                &settings,
            )
            .await;
        if large_call.is_some() {
            drop(args);
            crate::limits::release_memory();
        }
        if let Err(refused) = &result {
            self.note_denial(&action.name, refused, &caller);
        }
        let mut result = result?;
        if let Some(work) = result.as_object_mut().and_then(|r| r.remove("external")) {
            result = self.complete_externally(work, result, &caller).await?;
        }
        if let Some(work) = result
            .as_object_mut()
            .and_then(|r| r.remove("external_interpretation"))
        {
            let mut recorded = self.interpret_externally(&work, &caller).await?;
            let entities = recorded.as_object_mut().and_then(|r| r.remove("entities"));
            match result.get_mut("interpretation") {
                // store: the run's summary, and the entities it made.
                Some(slot) => {
                    *slot = recorded;
                    if let Some(entities) = entities {
                        result["entities"] = entities;
                    }
                }
                // reinterpret: the run's fields at the top.
                None => {
                    for (k, v) in recorded.as_object().into_iter().flatten() {
                        result[k] = v.clone();
                    }
                }
            }
        }
        Ok(result)
    }

    /// Notes a call its token's limits refused (FORBIDDEN naming the limit)
    /// in the owner's audit trail (`neotoma.denied_calls`), beside the
    /// call: its own transaction was rolled back with the refusal. At most
    /// once a minute per token, action and limit, so a looping agent adds
    /// a row a minute, not one per call. A database before 0.24.0 has no
    /// such table: its refusal is only logged.
    fn note_denial(&self, action: &str, refused: &NeotomaError, caller: &Caller) {
        let (Some(token), Some(limit)) = (
            caller.token,
            refused.details.get("limit").and_then(Value::as_str),
        ) else {
            return;
        };
        if refused.code != ErrorCode::Forbidden
            || self
                .state
                .denials
                .try_acquire(&(token, action.to_string(), limit.to_string()))
                .is_err()
        {
            return;
        }
        let (state, caller) = (self.state.clone(), *caller);
        let note = json!({"action": action, "limit": limit});
        tokio::spawn(async move {
            if let Err(e) = state
                .db
                .call_with("neotoma.note_denied_call", &caller, &note, true, &[])
                .await
            {
                tracing::debug!(error = %e.message, "could not note a refused call");
            }
        });
    }

    /// Replaces a file path argument by the file's bytes (base64) and name,
    /// where the caller may have this server read it.
    async fn read_file(
        &self,
        args: &mut Value,
        spec: &ReadFile,
        caller: &Caller,
    ) -> Result<(), NeotomaError> {
        use base64::Engine;
        let Some(obj) = args.as_object_mut() else {
            return Ok(());
        };
        let Some(path) = obj.get(&spec.path_field) else {
            return Ok(());
        };
        let Some(path) = path.as_str().map(str::to_string) else {
            return Err(NeotomaError::invalid_field(
                &spec.path_field,
                format!("`{}` must be a string", spec.path_field),
            ));
        };
        let roots = self.state.file_roots.clone();
        let (remote, max) = (caller.remote, self.state.max_file_bytes);
        let read = tokio::task::spawn_blocking(move || roots.read(&path, remote, max))
            .await
            .map_err(|e| NeotomaError::new(ErrorCode::FileReadError, e.to_string()))??;
        obj.remove(&spec.path_field);
        obj.insert(
            spec.content_field.clone(),
            json!(base64::engine::general_purpose::STANDARD.encode(&read.bytes)),
        );
        if let Some(name_field) = &spec.name_field
            && !obj.contains_key(name_field)
            && let Some(name) = read.name
        {
            obj.insert(name_field.clone(), json!(name));
        }
        Ok(())
    }

    /// Asks the model to read a pending run's file and records the outcome.
    async fn interpret_externally(
        &self,
        work: &Value,
        caller: &Caller,
    ) -> Result<Value, NeotomaError> {
        let (Some(model), Some(record)) =
            (&self.state.model, &self.state.catalog.record_interpretation)
        else {
            return Err(NeotomaError::new(
                ErrorCode::AnalysisFailed,
                "no model interpreter is configured",
            ));
        };
        let run_id = work["run_id"].clone();
        // The file's bytes come straight from the database (bytea), not
        // through the action's JSON answer.
        let source: Uuid = work["source_id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                NeotomaError::new(ErrorCode::AnalysisFailed, "the pending run names no source")
            })?;
        let bytes = self.state.db.file_content(caller, source).await?;
        let args = match model.read(work, &bytes).await {
            Ok(reading) => {
                json!({"run_id": run_id, "entities": reading.entities, "details": reading.details})
            }
            Err(message) => {
                tracing::warn!(run_id = %run_id, %message, "model interpretation failed");
                json!({"run_id": run_id, "error": message})
            }
        };
        self.state.db.call(record, caller, &args, true).await
    }

    /// Runs an action, sending progress notifications while it runs when the
    /// client asked for them.
    async fn run_with_progress(
        &self,
        action: &Action,
        args: Value,
        caller: Caller,
        progress: Option<(ProgressToken, Peer<RoleServer>)>,
    ) -> Result<Value, NeotomaError> {
        let Some((token, peer)) = progress else {
            return self.run(action, args, caller).await;
        };
        let work = self.run(action, args, caller);
        tokio::pin!(work);
        let started = Instant::now();
        let mut ticks = 0u32;
        let mut ticker = tokio::time::interval(PROGRESS_EVERY);
        let result = loop {
            tokio::select! {
                r = &mut work => break r,
                _ = ticker.tick() => {
                    let message = format!("{} running ({:.1}s)", action.name, started.elapsed().as_secs_f64());
                    let _ = peer
                        .notify_progress(ProgressNotificationParam::new(token.clone(), f64::from(ticks)).with_message(message))
                        .await;
                    ticks += 1;
                }
            }
        };
        let done = f64::from(ticks + 1);
        let _ = peer
            .notify_progress(
                ProgressNotificationParam::new(token, done)
                    .with_total(done)
                    .with_message(format!("{} finished", action.name)),
            )
            .await;
        result
    }

    /// A search's query embedded by the remote provider, as settings for
    /// its SQL call (none without a provider or a search).
    async fn query_embedding(&self, action: &str, args: &Value) -> Vec<(&'static str, String)> {
        match (
            &self.state.embedder,
            crate::embeddings::search_query(action, args),
        ) {
            (Some(embedder), Some(query)) => embedder.query_settings(&query).await,
            _ => vec![],
        }
    }

    /// A session whose token is limited to some workspaces subscribes only
    /// to one entity or one source, one it can read: the change feed's
    /// notices name no workspace, so a collection's would tell of changes
    /// in the others.
    async fn permit_subscription(
        &self,
        cx: &RequestContext<RoleServer>,
        caller: &Caller,
        uri: &str,
    ) -> Result<(), ErrorData> {
        if session_limits(cx).is_none_or(|l| l.workspaces.is_none()) {
            return Ok(());
        }
        use neotoma_core::actions::resources::ResourceUri;
        if !matches!(
            ResourceUri::parse(uri),
            Ok(ResourceUri::Entity(_)
                | ResourceUri::EntityObservations(_)
                | ResourceUri::Source(_))
        ) {
            return Err(resource_error(
                NeotomaError::new(
                    ErrorCode::Forbidden,
                    "this token may use only some workspaces: it subscribes to one entity or \
                     source at a time, not to a collection",
                )
                .with("limit", "workspaces")
                .with("uri", uri),
            ));
        }
        self.resource_call(
            self.state.catalog.read_resource.as_ref(),
            json!({"uri": uri}),
            caller,
        )
        .await
        .map(|_| ())
    }

    /// Calls one of the resource functions of the catalog.
    async fn resource_call(
        &self,
        function: Option<&String>,
        args: Value,
        caller: &Caller,
    ) -> Result<Value, ErrorData> {
        let Some(function) = function else {
            return Err(ErrorData::internal_error(
                "this extension serves no resources",
                None,
            ));
        };
        let settings = self.query_embedding("read_resource", &args).await;
        self.state
            .db
            .call_with(function, caller, &args, false, &settings)
            .await
            .map_err(resource_error)
    }
}

/// A failure of a resource request as a JSON-RPC error carrying the envelope.
/// The limits of the token the session came with (HTTP; none over stdio).
fn session_limits(
    cx: &RequestContext<RoleServer>,
) -> Option<neotoma_core::token_limits::TokenLimits> {
    #[cfg(feature = "http")]
    return cx
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| {
            p.extensions
                .get::<neotoma_core::token_limits::TokenLimits>()
        })
        .cloned();
    #[cfg(not(feature = "http"))]
    {
        let _ = cx;
        None
    }
}

fn resource_error(e: NeotomaError) -> ErrorData {
    let data = Some(e.envelope(None));
    match e.code {
        ErrorCode::NotFound | ErrorCode::EntityNotFound | ErrorCode::SourceNotFound => {
            ErrorData::resource_not_found(e.message, data)
        }
        ErrorCode::ValidationError => ErrorData::invalid_params(e.message, data),
        _ => ErrorData::internal_error(e.message, data),
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        #[allow(deprecated)] // logging is deprecated by SEP-2577 but clients still set levels
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_resources()
            .enable_tools()
            .build();
        if let Some(resources) = capabilities.resources.as_mut() {
            resources.subscribe = Some(true);
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new(SERVER_NAME, SERVER_VERSION)
                    .with_title("Neotoma")
                    .with_description("Memory for AI agents, inside Postgres"),
            )
            .with_instructions(crate::instructions::for_selection(
                &self.state.catalog.selection,
            ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.state.catalog.get(name).map(|a| a.tool.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // A limited token's session sees the tools it may call.
        if let Some(limits) = session_limits(&cx).filter(|l| l.limited()) {
            return Ok(ListToolsResult::with_all_items(
                self.state.catalog.tools_within(&limits),
            ));
        }
        Ok(ListToolsResult::with_all_items(self.state.catalog.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let trace_id = new_trace_id();
        let started = Instant::now();
        let name = request.name.to_string();
        let caller = self.caller_for(&cx);
        let user = caller.user;
        let mut args = request.arguments.unwrap_or_default();
        let action = self
            .state
            .catalog
            .get(&name)
            .filter(|a| a.callable)
            .cloned();
        let outcome = match &action {
            Some(action) => {
                let progress = cx.meta.get_progress_token().map(|t| (t, cx.peer.clone()));
                // Neotoma's answers are lean unless the call asks for all.
                let lean = action.tool_set == ToolSet::Neotoma;
                let verbose = if lean {
                    args.remove(crate::catalog::VERBOSE)
                } else {
                    None
                };
                match verbose {
                    Some(v) if !v.is_boolean() => Err(NeotomaError::invalid_field(
                        crate::catalog::VERBOSE,
                        "verbose is true or false",
                    )),
                    v => {
                        let whole = v
                            .and_then(|v| v.as_bool())
                            .unwrap_or(self.state.verbose_answers);
                        let answer = self
                            .run_with_progress(action, Value::Object(args), caller, progress)
                            .await;
                        answer.map(|mut a| {
                            if lean && !whole {
                                neotoma_core::lean::lean(&mut a);
                            }
                            a
                        })
                    }
                }
            }
            None => Err(NeotomaError::validation(format!(
                "unknown tool `{name}`; call tools/list for the available tools"
            ))
            .with("tool", name.as_str())),
        };
        let elapsed = started.elapsed();
        let measured_as = action.as_ref().and_then(|a| a.measured_as.as_deref());
        let m = &self.state.metrics;
        m.observe_call(&name, measured_as, elapsed, &outcome);
        let elapsed_ms = elapsed.as_secs_f64() * 1000.0;
        Ok(match outcome {
            Ok(value) => {
                tracing::info!(trace_id, tool = name, %user, elapsed_ms, "tool call ok");
                CallToolResult::structured(value)
            }
            Err(e) => {
                tracing::warn!(trace_id, tool = name, %user, elapsed_ms, code = %e.code, message = %e.message, "tool call failed");
                let set = match &action {
                    Some(a) => a.tool_set,
                    None => self.state.catalog.tool_sets[0],
                };
                tool_error(&e, &trace_id, set.error_style())
            }
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = self.caller_for(&cx);
        let listed = self
            .resource_call(
                self.state.catalog.list_resources.as_ref(),
                json!({}),
                &caller,
            )
            .await?;
        let resources = listed["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| self.serves_resource(r["uri"].as_str().unwrap_or_default()))
            .filter_map(|r| {
                let mut resource = Resource::new(r["uri"].as_str()?, r["name"].as_str()?);
                if let Some(d) = r["description"].as_str() {
                    resource = resource.with_description(d);
                }
                Some(resource.with_mime_type(r["mime_type"].as_str().unwrap_or("application/json")))
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = if self.serves_resource(neotoma_core::actions::resources::SCHEME) {
            self.state.catalog.resource_templates.clone()
        } else {
            Vec::new()
        };
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = self.caller_for(&cx);
        let uri = request.uri.clone();
        let read = self
            .resource_call(
                self.state.catalog.read_resource.as_ref(),
                json!({"uri": uri}),
                &caller,
            )
            .await;
        let outcome = if read.is_ok() { "ok" } else { "error" };
        self.state
            .metrics
            .resource_reads
            .with_label_values(&[outcome])
            .inc();
        let mut body = read?;
        // The memory server's graph, as it reads it: entities and relations.
        if uri.starts_with("memory://")
            && let Some(map) = body.as_object_mut()
        {
            map.remove("workspace_context");
        }
        let text = serde_json::to_string_pretty(&body).unwrap_or_default();
        let contents = ResourceContents::text(text, uri).with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller_for(&cx);
        self.permit_subscription(&cx, &caller, &request.uri).await?;
        let mut slot = self.session.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let (registration, mut changed) = self
                .state
                .hub
                .register(caller.user)
                .map_err(resource_error)?;
            let peer = cx.peer.clone();
            let forward = tokio::spawn(async move {
                while let Some(uri) = changed.recv().await {
                    let update = ResourceUpdatedNotificationParam::new(uri);
                    if peer.notify_resource_updated(update).await.is_err() {
                        break;
                    }
                }
            });
            *slot = Some((registration, forward));
        }
        if let Some((registration, _)) = slot.as_ref() {
            registration.add(&request.uri).map_err(resource_error)?;
        }
        tracing::debug!(uri = %request.uri, "resource subscription");
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some((registration, _)) = self
            .session
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            registration.remove(&request.uri);
        }
        tracing::debug!(uri = %request.uri, "resource unsubscription");
        Ok(())
    }

    /// Protocol 2026-07-28: the neotoma:// URIs of a `subscriptions/listen`
    /// filter (at most [`crate::subscriptions::MAX_URIS`]); nothing else.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| neotoma_core::actions::resources::ResourceUri::parse(uri).is_ok())
            .take(crate::subscriptions::MAX_URIS)
            .cloned()
            .collect();
        Some(
            SubscriptionFilter::builder()
                .resource_subscriptions(uris)
                .build(),
        )
    }

    /// Hears what changes until the client cancels the request.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let caller = self.caller_for(context.request_context());
        let (registration, mut changed) = self
            .state
            .hub
            .register(caller.user)
            .map_err(resource_error)?;
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            // What the session may not hear of is not heard (a filter has no
            // refusal per URI).
            if self
                .permit_subscription(context.request_context(), &caller, uri)
                .await
                .is_ok()
            {
                registration.add(uri).map_err(resource_error)?;
            }
        }
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                uri = changed.recv() => {
                    let Some(uri) = uri else { return Ok(()) };
                    if context.sink().notify_resource_updated(uri).await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tracing::debug!(level = ?request.level, "client log level");
        Ok(())
    }
}

/// The actions a call runs inside it, one per operation: `bulk`'s
/// operations, `create_relationships`' relationships (none for others).
fn nested_actions<'a>(action: &str, args: &'a Value) -> Vec<&'a str> {
    match action {
        "bulk" => args["operations"]
            .as_array()
            .map(|ops| ops.iter().filter_map(|op| op["action"].as_str()).collect())
            .unwrap_or_default(),
        "create_relationships" => args["relationships"]
            .as_array()
            .map(|rels| rels.iter().map(|_| "create_relationship").collect())
            .unwrap_or_default(),
        _ => vec![],
    }
}

#[cfg(feature = "http")]
/// Readiness: the database answers and its extension is a version this
/// gateway serves (its own, or the release before it while the database
/// awaits `ALTER EXTENSION neotoma UPDATE`, which `update` then names).
pub async fn check_ready(state: &AppState) -> Result<Value, Value> {
    let asked = state
        .db
        .handshake()
        .await
        .map_err(|e| json!({"status": "unavailable", "error": e.to_json()}))?;
    let installed = &asked.extension_version;
    let served = crate::handshake::supports_extension(installed);
    let mut body = json!({
        "status": if served.is_ok() { "ready" } else { "incompatible" },
        "extension_version": installed,
        "gateway_version": SERVER_VERSION,
        "catalog_version": state.catalog.version,
    });
    // A router (docs/scale-out.md): each partition, reachable or not. One
    // down leaves the others' users served: degraded, not unavailable.
    if asked.router {
        match state
            .db
            .own_query_json("SELECT neotoma_router.partitions_status()")
            .await
        {
            Ok(partitions) => {
                let down = partitions
                    .as_array()
                    .is_some_and(|p| p.iter().any(|p| p["ready"] != json!(true)));
                if down && served.is_ok() {
                    body["status"] = json!("degraded");
                }
                body["partitions"] = partitions;
            }
            Err(e) => body["partitions"] = json!({"error": e.to_json()}),
        }
    }
    match served {
        Ok(()) if asked.awaits_update() => {
            body["update"] = json!("ALTER EXTENSION neotoma UPDATE");
            Ok(body)
        }
        Ok(()) => Ok(body),
        Err(why) => {
            body["error"] = json!(why);
            Err(body)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_operations_are_counted_as_their_actions() {
        let args = json!({"operations": [{"action": "store"}, {"action": "correct"}, {"action": "store"}]});
        assert_eq!(nested_actions("bulk", &args), ["store", "correct", "store"]);
        let rels = json!({"relationships": [{}, {}]});
        assert_eq!(
            nested_actions("create_relationships", &rels),
            ["create_relationship", "create_relationship"]
        );
        assert!(nested_actions("store", &args).is_empty());
        assert!(nested_actions("bulk", &json!({"operations": "x"})).is_empty());
    }

    #[test]
    fn trace_ids_are_unique() {
        assert_ne!(new_trace_id(), new_trace_id());
        assert!(new_trace_id().starts_with("trace_"));
    }
}
