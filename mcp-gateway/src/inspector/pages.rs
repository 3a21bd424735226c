//! The inspector's pages, rendered from what the actions answered (plain
//! HTML: forms and links; no script but the graph's). Pure functions of
//! JSON, so they are unit-tested without a database.

use crate::html::{escape, url_component};
use serde_json::Value;
use std::collections::BTreeMap;

/// A page: the navigation, then `body`. `who` names the signed-in user.
pub fn layout(title: &str, who: Option<&str>, body: &str) -> String {
    let nav = [
        ("/inspector/overview", "Overview"),
        ("/inspector/entities", "Entities"),
        ("/inspector/timeline", "Timeline"),
        ("/inspector/sources", "Sources"),
        ("/inspector/schema", "Schema"),
    ]
    .iter()
    .map(|(href, label)| format!("<a href=\"{href}\">{label}</a>"))
    .collect::<Vec<_>>()
    .join(" ");
    let account = match who {
        Some(user) => format!(
            "<span class=\"who\">user {}</span>\
             <form method=\"post\" action=\"/inspector/logout\" class=\"inline\"><button type=\"submit\">Sign out</button></form>",
            escape(user)
        ),
        None => String::new(),
    };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{} · Neotoma inspector</title><link rel=\"stylesheet\" href=\"/inspector/static/style.css\">\
         <link rel=\"icon\" href=\"data:,\"></head><body>\
         <header><strong>Neotoma inspector</strong> <nav>{nav}</nav> {account}</header>\
         <main>{body}</main></body></html>",
        escape(title)
    )
}

pub fn message(text: &str, error: bool) -> String {
    let class = if error { "error" } else { "notice" };
    format!(
        "<p class=\"{class}\" role=\"{}\">{}</p>",
        if error { "alert" } else { "status" },
        escape(text)
    )
}

/// Sign in with an API token, or a username and password (or one-time
/// code) where OAuth logins exist.
pub fn login_page(error: Option<&str>, logins: bool) -> String {
    let password = if logins {
        "<fieldset><legend>or with your username and password</legend>\
         <label for=\"username\">Username</label><input type=\"text\" id=\"username\" name=\"username\" autocomplete=\"username\">\
         <label for=\"password\">Password</label><input type=\"password\" id=\"password\" name=\"password\" autocomplete=\"current-password\">\
         </fieldset>\
         <fieldset><legend>or with a one-time code from your operator</legend>\
         <label for=\"code\">One-time code (neotoma-mcp login code)</label>\
         <input type=\"text\" id=\"code\" name=\"code\" autocomplete=\"one-time-code\"></fieldset>"
    } else {
        ""
    };
    let body = format!(
        "<h1>Sign in</h1>{}<form method=\"post\" action=\"/inspector/login\" class=\"login\">\
         <fieldset><legend>with an API token</legend>\
         <label for=\"token\">Token (neotoma-mcp token create)</label>\
         <input type=\"password\" id=\"token\" name=\"token\" autocomplete=\"off\" autofocus></fieldset>\
         {password}<button type=\"submit\">Sign in</button></form>",
        error.map(|e| message(e, true)).unwrap_or_default()
    );
    layout("Sign in", None, &body)
}

/// A value as a person reads it: strings as they are, the rest as JSON.
pub fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// How a person names an entity: its `name`, else `title`, else the
/// canonical name the identity rules made, else its id.
pub fn display_name<'v>(entity: &'v Value, id: &'v str) -> &'v str {
    let snapshot = &entity["snapshot"];
    snapshot["name"]
        .as_str()
        .or_else(|| snapshot["title"].as_str())
        .or_else(|| entity["canonical_name"].as_str())
        .unwrap_or(id)
}

fn entity_link(id: &str, label: &str) -> String {
    format!(
        "<a href=\"/inspector/entities/{}\">{}</a>",
        url_component(id),
        escape(label)
    )
}

/// What the entities page shows and was asked.
pub struct EntitiesView<'a> {
    pub types: &'a [(String, i64)],
    pub list: &'a Value,
    pub search: &'a str,
    pub entity_type: &'a str,
    /// The user's workspaces, and the one asked for (empty: in context).
    pub workspaces: &'a [String],
    pub workspace: &'a str,
    pub offset: i64,
    pub limit: i64,
}

pub fn entities_page(v: &EntitiesView, who: Option<&str>) -> String {
    let type_options = v
        .types
        .iter()
        .map(|(t, n)| {
            format!(
                "<option value=\"{0}\"{1}>{0} ({n})</option>",
                escape(t),
                if t == v.entity_type { " selected" } else { "" }
            )
        })
        .collect::<String>();
    let counts = v
        .types
        .iter()
        .map(|(t, n)| {
            format!(
                "<li><a href=\"/inspector/entities?type={}&amp;workspace={}\">{}</a> <span class=\"count\">{n}</span></li>",
                url_component(t),
                url_component(v.workspace),
                escape(t)
            )
        })
        .collect::<String>();
    let rows = v.list["entities"]
        .as_array()
        .map(|entities| {
            entities
                .iter()
                .map(|e| {
                    let id = e["id"].as_str().unwrap_or_default();
                    let name = display_name(e, id);
                    let score = e["relevance_score"]
                        .as_f64()
                        .map(|s| format!("{s:.3}"))
                        .unwrap_or_default();
                    format!(
                        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        entity_link(id, name),
                        escape(e["entity_type"].as_str().unwrap_or_default()),
                        e["observation_count"].as_i64().unwrap_or(0),
                        escape(e["last_observation_at"].as_str().unwrap_or_default()),
                        score
                    )
                })
                .collect::<String>()
        })
        .unwrap_or_default();
    let total = v.list["total"].as_i64().unwrap_or(0);
    let page_link = |offset: i64, label: &str| {
        format!(
            "<a href=\"/inspector/entities?search={}&amp;type={}&amp;workspace={}&amp;offset={offset}\">{label}</a>",
            url_component(v.search),
            url_component(v.entity_type),
            url_component(v.workspace)
        )
    };
    let workspace_options = v
        .workspaces
        .iter()
        .map(|w| {
            format!(
                "<option value=\"{0}\"{1}>{0}</option>",
                escape(w),
                if w == v.workspace { " selected" } else { "" }
            )
        })
        .collect::<String>();
    let mut pages = String::new();
    if v.offset > 0 {
        pages.push_str(&page_link((v.offset - v.limit).max(0), "« Previous"));
    }
    if v.offset + v.limit < total {
        pages.push(' ');
        pages.push_str(&page_link(v.offset + v.limit, "Next »"));
    }
    let method = v.list["search_method"]
        .as_str()
        .map(|m| format!(" (search: {})", escape(m)))
        .unwrap_or_default();
    let body = format!(
        "<h1>Entities</h1><div class=\"columns\"><aside><h2>Types</h2><ul class=\"types\">{counts}</ul></aside><section>\
         <form method=\"get\" action=\"/inspector/entities\" class=\"search\" role=\"search\">\
         <label for=\"search\">Search</label><input type=\"search\" id=\"search\" name=\"search\" value=\"{}\">\
         <label for=\"type\">Type</label><select id=\"type\" name=\"type\"><option value=\"\">all</option>{type_options}</select>\
         <label for=\"workspace\">Workspace</label><select id=\"workspace\" name=\"workspace\">\
         <option value=\"\">in context</option>{workspace_options}</select>\
         <button type=\"submit\">Find</button></form>\
         <p class=\"total\">{total} entities{method}, {} to {}</p>\
         <table class=\"entities\"><thead><tr><th>Name</th><th>Type</th><th>Observations</th><th>Last observed</th><th>Score</th></tr></thead>\
         <tbody>{rows}</tbody></table><p class=\"pages\">{pages}</p></section></div>",
        escape(v.search),
        if total == 0 { 0 } else { v.offset + 1 },
        (v.offset + v.limit).min(total),
    );
    layout("Entities", who, &body)
}

/// What the entity page shows.
pub struct EntityView<'a> {
    pub snapshot: &'a Value,
    pub observations: &'a Value,
    pub relationships: &'a Value,
    /// retrieve_related_entities (one hop): the names of related entities.
    pub related: &'a Value,
    pub at: Option<&'a str>,
    /// Valid time asked (the snapshot as true in the world then).
    pub valid_at: Option<&'a str>,
    pub notice: Option<&'a str>,
    pub error: Option<&'a str>,
}

/// The competing values of each contradicted field (other than the chosen).
fn competing(snapshot: &Value) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for c in snapshot["contradictions"].as_array().into_iter().flatten() {
        let chosen = &c["chosen_value"];
        let others: Vec<String> = c["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| &v["value"] != chosen)
            .map(|v| show(&v["value"]))
            .collect();
        if let Some(field) = c["field"].as_str() {
            out.insert(field.to_string(), others);
        }
    }
    out
}

/// A slider over `times` (sorted and deduplicated here) that shows the
/// entity at the chosen one through the query parameter `param`
/// (static/asof.js); none without times.
fn time_slider(
    name: &str,
    param: &str,
    label: &str,
    mut times: Vec<&str>,
    chosen: Option<&str>,
) -> String {
    times.sort_unstable();
    times.dedup();
    let Some(last) = times.len().checked_sub(1) else {
        return String::new();
    };
    let at = chosen
        .and_then(|a| times.iter().position(|t| *t == a))
        .unwrap_or(last);
    format!(
        "<p class=\"slider\"><label for=\"{name}-slider\">{label}</label> \
         <input type=\"range\" id=\"{name}-slider\" class=\"time-slider\" min=\"0\" max=\"{last}\" step=\"1\" \
         value=\"{at}\" data-times=\"{}\" data-param=\"{param}\"> \
         <output id=\"{name}-label\" for=\"{name}-slider\">{}</output></p>\
         <script src=\"/inspector/static/asof.js\"></script>",
        escape(&serde_json::to_string(&times).unwrap_or_default()),
        escape(times[at]),
    )
}

pub fn entity_page(v: &EntityView, who: Option<&str>) -> String {
    let s = v.snapshot;
    let id = s["entity_id"].as_str().unwrap_or_default();
    let name = display_name(s, id);
    let entity_type = s["entity_type"].as_str().unwrap_or_default();
    let others = competing(s);
    let empty = serde_json::Map::new();
    let fields = s["snapshot"].as_object().unwrap_or(&empty);
    let rows = fields
        .iter()
        .map(|(field, value)| {
            let p = &s["field_provenance"][field];
            let source = p["source_id"].as_str().unwrap_or_default();
            let competing = others
                .get(field)
                .map(|vals| {
                    vals.iter()
                        .map(|x| format!("<span class=\"competing\">{}</span>", escape(x)))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            format!(
                "<tr data-field=\"{f}\"><th scope=\"row\">{f}</th><td class=\"value\">{}</td><td><a href=\"/inspector/sources/{}\">{}</a></td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{competing}</td></tr>",
                escape(&show(value)),
                url_component(source),
                escape(source.get(..8).unwrap_or(source)),
                escape(p["observed_at"].as_str().unwrap_or_default()),
                p["source_priority"].as_i64().map(|n| n.to_string()).unwrap_or_default(),
                escape(p["confidence"].as_str().unwrap_or_default()),
                f = escape(field),
            )
        })
        .collect::<String>();
    let history = v.observations["observations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let when = o["observed_at"].as_str().unwrap_or_default();
            // The agent that wrote it: its token's name, else the token's id.
            let by = o["written_with"]["name"]
                .as_str()
                .or_else(|| o["written_with"]["token_id"].as_str())
                .map(|w| format!(" <span class=\"agent\">by {}</span>", escape(w)))
                .unwrap_or_default();
            format!(
                "<li><time>{}</time> <span class=\"kind\">{}</span>{by} <code>{}</code> \
                 <a href=\"/inspector/entities/{}?at={}\">as of this</a></li>",
                escape(when),
                escape(o["kind"].as_str().unwrap_or_default()),
                escape(&o["fields"].to_string()),
                url_component(id),
                url_component(when),
            )
        })
        .collect::<String>();
    let relationships = v.relationships["relationships"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let (from, to) = (
                r["source_entity_id"].as_str().unwrap_or_default(),
                r["target_entity_id"].as_str().unwrap_or_default(),
            );
            let other = if from == id { to } else { from };
            let name = v.related["entities"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["id"] == other)
                .map_or(other, |e| display_name(e, other));
            format!(
                "<li>{} {} {}{}</li>",
                if from == id { "→" } else { "←" },
                escape(r["relationship_type"].as_str().unwrap_or_default()),
                entity_link(other, name),
                valid_during(&r["valid_during"])
            )
        })
        .collect::<String>();
    let field_options = fields
        .keys()
        .map(|f| format!("<option value=\"{0}\">{0}</option>", escape(f)))
        .collect::<String>();
    let deleted = match s["deleted_at"].as_str() {
        Some(at) => message(
            &format!("Deleted at {at}: agents do not see it until it is restored."),
            true,
        ),
        None => String::new(),
    };
    // The sliders' steps: the observations' times (record time), and the
    // starts and ends of the values stored with an interval (valid time),
    // oldest first.
    let observations = v.observations["observations"].as_array();
    let times: Vec<&str> = observations
        .into_iter()
        .flatten()
        .filter_map(|o| o["observed_at"].as_str())
        .collect();
    let slider = time_slider("asof", "at", "Observations in time", times, v.at);
    let ends: Vec<&str> = observations
        .into_iter()
        .flatten()
        .flat_map(|o| [o["valid_from"].as_str(), o["valid_to"].as_str()])
        .flatten()
        .collect();
    let valid_slider = time_slider("valid", "valid_at", "True in the world", ends, v.valid_at);
    let valid = match v.valid_at {
        Some(t) => format!(
            "<p class=\"notice\">True in the world at {} — <a href=\"/inspector/entities/{}\">now</a></p>",
            escape(t),
            url_component(id)
        ),
        None => String::new(),
    };
    let as_of = match v.at {
        Some(at) => format!(
            "<p class=\"notice\">As of {} — <a href=\"/inspector/entities/{}\">now</a></p>",
            escape(at),
            url_component(id)
        ),
        None => String::new(),
    };
    let body = format!(
        "<h1>{}</h1><p class=\"meta\"><span class=\"type\">{}</span> <code>{}</code> · {} observations · \
         <a href=\"/inspector/graph/{}\">graph</a></p>{}{}{deleted}{as_of}{valid}\
         <form method=\"get\" action=\"/inspector/entities/{}\" class=\"inline\">\
         <label for=\"at\">As of</label><input type=\"datetime-local\" id=\"at\" name=\"at\" step=\"1\">\
         <label for=\"valid_at\">True in the world at</label>\
         <input type=\"datetime-local\" id=\"valid_at\" name=\"valid_at\" step=\"1\">\
         <button type=\"submit\">Show</button></form>{slider}{valid_slider}\
         <h2>Snapshot</h2><table class=\"snapshot\"><thead><tr><th>Field</th><th>Value</th><th>Source</th><th>Observed</th>\
         <th>Priority</th><th>Confidence</th><th>Competing values</th></tr></thead><tbody>{rows}</tbody></table>\
         <h2>Correct a field</h2><form method=\"post\" action=\"/inspector/entities/{}/correct\" class=\"correct\">\
         <input type=\"hidden\" name=\"entity_type\" value=\"{}\">\
         <label for=\"field\">Field</label><input type=\"text\" id=\"field\" name=\"field\" list=\"fields\" required>\
         <datalist id=\"fields\">{field_options}</datalist>\
         <label for=\"value\">Value (text, or JSON)</label><input type=\"text\" id=\"value\" name=\"value\">\
         <button type=\"submit\">Correct</button></form>\
         <h2>Merge, delete, restore</h2>\
         <form method=\"post\" action=\"/inspector/entities/{}/merge\" class=\"correct\">\
         <label for=\"from\">Merge this duplicate into it (entity id)</label>\
         <input type=\"text\" id=\"from\" name=\"from_entity_id\" required><button type=\"submit\">Merge</button></form>\
         <form method=\"post\" action=\"/inspector/entities/{}/delete\" class=\"inline\"><button type=\"submit\">Delete</button></form> \
         <form method=\"post\" action=\"/inspector/entities/{}/restore\" class=\"inline\"><button type=\"submit\">Restore</button></form>\
         <h2>Relationships</h2><ul class=\"relationships\">{relationships}</ul>\
         <h2>History</h2><ol class=\"history\">{history}</ol>",
        escape(name),
        escape(entity_type),
        escape(id),
        s["observation_count"].as_i64().unwrap_or(0),
        url_component(id),
        v.notice.map(|n| message(n, false)).unwrap_or_default(),
        v.error.map(|e| message(e, true)).unwrap_or_default(),
        url_component(id),
        url_component(id),
        escape(entity_type),
        url_component(id),
        url_component(id),
        url_component(id),
    );
    layout(name, who, &body)
}

/// What the timeline is filtered by.
#[derive(Default)]
pub struct TimelineFilter<'a> {
    pub event_type: &'a str,
    pub after_date: &'a str,
    pub before_date: &'a str,
}

/// Timeline events grouped by month (`YYYY-MM`), newest month first.
pub fn timeline_page(events: &Value, filter: &TimelineFilter, who: Option<&str>) -> String {
    let mut months: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for e in events["events"].as_array().into_iter().flatten() {
        let at = e["event_timestamp"].as_str().unwrap_or_default();
        months
            .entry(at.get(..7).unwrap_or(at).to_string())
            .or_default()
            .push(e);
    }
    let body: String = months
        .iter()
        .rev()
        .map(|(month, events)| {
            let items = events
                .iter()
                .map(|e| {
                    let entity = e["entity_id"].as_str().unwrap_or_default();
                    format!(
                        "<li><time>{}</time> {} {}</li>",
                        escape(e["event_timestamp"].as_str().unwrap_or_default()),
                        escape(e["event_type"].as_str().unwrap_or_default()),
                        entity_link(entity, entity)
                    )
                })
                .collect::<String>();
            format!(
                "<h2>{}</h2><ul class=\"events\">{items}</ul>",
                escape(month)
            )
        })
        .collect();
    let form = format!(
        "<form method=\"get\" action=\"/inspector/timeline\" class=\"search\">\
         <label for=\"event_type\">Event type</label><input type=\"text\" id=\"event_type\" name=\"event_type\" value=\"{}\">\
         <label for=\"after_date\">From</label><input type=\"date\" id=\"after_date\" name=\"after_date\" value=\"{}\">\
         <label for=\"before_date\">Before</label><input type=\"date\" id=\"before_date\" name=\"before_date\" value=\"{}\">\
         <button type=\"submit\">Filter</button></form>",
        escape(filter.event_type),
        escape(filter.after_date),
        escape(filter.before_date)
    );
    layout("Timeline", who, &format!("<h1>Timeline</h1>{form}{body}"))
}

/// The neighborhood of an entity, drawn by the vendored graph library from
/// the JSON embedded in the page.
pub fn graph_page(
    id: &str,
    name: &str,
    relationship_type: &str,
    elements: &Value,
    who: Option<&str>,
) -> String {
    // Inside <script type="application/json">, "</" must not appear.
    let data = elements.to_string().replace("</", "<\\/");
    let body = format!(
        "<h1>Graph around {}</h1><p><a href=\"/inspector/entities/{}\">back to the entity</a> · \
         <a href=\"/inspector/graph/{1}?hops=1\">1 hop</a> <a href=\"/inspector/graph/{1}?hops=2\">2 hops</a> \
         <a href=\"/inspector/graph/{1}?hops=3\">3 hops</a></p>\
         <form method=\"get\" action=\"/inspector/graph/{1}\" class=\"inline\"><label for=\"type\">Relationship type</label>\
         <input type=\"text\" id=\"type\" name=\"type\" value=\"{}\"><button type=\"submit\">Filter</button></form>\
         <div id=\"graph\" role=\"img\" aria-label=\"relationship graph\"></div>\
         <script type=\"application/json\" id=\"graph-data\">{data}</script>\
         <script src=\"/inspector/static/cytoscape.min.js\"></script>\
         <script src=\"/inspector/static/graph.js\"></script>",
        escape(name),
        url_component(id),
        escape(relationship_type),
    );
    layout("Graph", who, &body)
}

/// The stored sources, newest first: files and structured stores.
pub fn sources_page(list: &Value, who: Option<&str>) -> String {
    let rows = list["sources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|src| {
            let id = src["source_id"].as_str().unwrap_or_default();
            format!(
                "<tr><td><a href=\"/inspector/sources/{}\"><code>{}</code></a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                url_component(id),
                escape(id.get(..8).unwrap_or(id)),
                escape(&show(&src["source_type"])),
                escape(&show(&src["original_filename"])),
                escape(&show(&src["mime_type"])),
                escape(&show(&src["file_size"])),
                escape(&show(&src["created_at"])),
            )
        })
        .collect::<String>();
    let body = format!(
        "<h1>Sources</h1><p>{} sources</p><table class=\"sources\"><thead><tr><th>Source</th><th>Type</th><th>File name</th>\
         <th>MIME type</th><th>Bytes</th><th>Stored</th></tr></thead><tbody>{rows}</tbody></table>",
        list["total"].as_i64().unwrap_or(0)
    );
    layout("Sources", who, &body)
}

/// A source: what it is, its file (signed URL), the entities it informed.
pub fn source_page(n: &Value, file_url: Option<&str>, who: Option<&str>) -> String {
    let m = &n["source_material"];
    let id = m["id"].as_str().unwrap_or_default();
    let facts = [
        ("Type", show(&m["source_type"])),
        ("MIME type", show(&m["mime_type"])),
        ("File name", show(&m["original_filename"])),
        ("Size (bytes)", show(&m["file_size"])),
        ("Stored", show(&m["created_at"])),
        ("Content hash", show(&m["content_hash"])),
    ]
    .iter()
    .map(|(k, v)| format!("<tr><th scope=\"row\">{k}</th><td>{}</td></tr>", escape(v)))
    .collect::<String>();
    let file = file_url
        .map(|u| {
            format!(
                "<p><a href=\"{}\" rel=\"noopener\">Open the file</a></p>",
                escape(u)
            )
        })
        .unwrap_or_default();
    let entities = n["related_entities"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let id = e["id"].as_str().unwrap_or_default();
            format!(
                "<li>{} <span class=\"type\">{}</span></li>",
                entity_link(id, display_name(e, id)),
                escape(e["entity_type"].as_str().unwrap_or_default())
            )
        })
        .collect::<String>();
    let runs = n["interpretation_runs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&show(&r["interpreter"])),
                escape(&show(&r["status"])),
                escape(&show(&r["entities_created"])),
                escape(&show(&r["observations_created"])),
                escape(&show(&r["unknown_fields_count"])),
                escape(&show(&r["started_at"])),
                escape(&show(&r["error"])),
            )
        })
        .collect::<String>();
    let body = format!(
        "<h1>Source <code>{}</code></h1><table class=\"source\">{facts}</table>{file}\
         <h2>Interpretation runs</h2><table class=\"runs\"><thead><tr><th>Interpreter</th><th>Status</th>\
         <th>Entities</th><th>Observations</th><th>Unknown fields</th><th>Started</th><th>Error</th></tr></thead>\
         <tbody>{runs}</tbody></table><h2>Entities it informed</h2><ul>{entities}</ul>",
        escape(id)
    );
    layout("Source", who, &body)
}

/// Entity types with their fields, and the fields waiting for promotion
/// (stored outside the schema) with a button each.
pub fn schema_page(
    types: &Value,
    candidates: &Value,
    notice: Option<&str>,
    who: Option<&str>,
) -> String {
    let types_rows = types["entity_types"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let fields = t["field_summary"]
                .as_object()
                .map(|f| {
                    f.iter()
                        .map(|(name, d)| {
                            let policy = d["merge_policy"]["strategy"]
                                .as_str()
                                .map(|p| format!(" ({p})"))
                                .unwrap_or_default();
                            format!(
                                "{}{}: {}{}",
                                escape(name),
                                if d["required"] == true { "!" } else { "" },
                                escape(d["type"].as_str().unwrap_or_default()),
                                escape(&policy)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            format!(
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{fields}</td></tr>",
                escape(t["entity_type"].as_str().unwrap_or_default()),
                escape(t["scope"].as_str().unwrap_or_default()),
                escape(&show(&t["schema_version"])),
                escape(&show(&t["identity_fields"])),
            )
        })
        .collect::<String>();
    let waiting = candidates["recommendations"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| {
            let entity_type = r["entity_type"].as_str().unwrap_or_default().to_string();
            r["fields"].as_array().cloned().unwrap_or_default().into_iter().map(move |f| (entity_type.clone(), f))
        })
        .map(|(entity_type, f)| {
            let field = f["field_name"].as_str().unwrap_or_default();
            let kind = f["field_type"].as_str().unwrap_or("string");
            format!(
                "<tr data-field=\"{f_}\"><td>{t}</td><th scope=\"row\">{f_}</th><td>{k}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td><form method=\"post\" action=\"/inspector/schema/promote\" class=\"inline\">\
                 <input type=\"hidden\" name=\"entity_type\" value=\"{t}\"><input type=\"hidden\" name=\"field_name\" value=\"{f_}\">\
                 <input type=\"hidden\" name=\"field_type\" value=\"{k}\"><button type=\"submit\">Promote</button></form></td></tr>",
                f["frequency"].as_i64().unwrap_or(0),
                escape(&show(&f["confidence"])),
                escape(
                    &f["sample_values"]
                        .as_array()
                        .map(|v| v.iter().map(show).collect::<Vec<_>>().join(", "))
                        .unwrap_or_default()
                ),
                t = escape(&entity_type),
                f_ = escape(field),
                k = escape(kind),
            )
        })
        .collect::<String>();
    let body = format!(
        "<h1>Schema</h1>{}<h2>Fields waiting for promotion</h2>\
         <table class=\"candidates\"><thead><tr><th>Type</th><th>Field</th><th>Kind</th><th>Times seen</th><th>Confidence</th>\
         <th>Samples</th><th></th></tr></thead><tbody>{waiting}</tbody></table>\
         <h2>Entity types</h2><table class=\"types\"><thead><tr><th>Type</th><th>Scope</th><th>Version</th><th>Identity</th>\
         <th>Fields (! required; merge policy)</th></tr></thead><tbody>{types_rows}</tbody></table>",
        notice.map(|n| message(n, false)).unwrap_or_default()
    );
    layout("Schema", who, &body)
}

/// Counts per workspace, the most recently observed entities, and (for
/// operators) the gateway's metrics.
pub fn overview_page(
    workspaces: &Value,
    recent: &Value,
    metrics: Option<&str>,
    who: Option<&str>,
) -> String {
    let spaces = workspaces["workspaces"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            format!(
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td></tr>",
                escape(w["name"].as_str().unwrap_or_default()),
                w["entities"].as_i64().unwrap_or(0),
                w["sources"].as_i64().unwrap_or(0)
            )
        })
        .collect::<String>();
    let recent = recent["entities"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let id = e["id"].as_str().unwrap_or_default();
            format!(
                "<li>{} <span class=\"type\">{}</span> <time>{}</time></li>",
                entity_link(id, display_name(e, id)),
                escape(e["entity_type"].as_str().unwrap_or_default()),
                escape(e["last_observation_at"].as_str().unwrap_or_default())
            )
        })
        .collect::<String>();
    let metrics = match metrics {
        Some(text) => format!(
            "<h2>Gateway metrics</h2><pre class=\"metrics\">{}</pre>",
            escape(text)
        ),
        None => {
            "<p>The gateway's metrics describe every user: operators see them here.</p>".to_string()
        }
    };
    let body = format!(
        "<h1>Overview</h1><h2>Workspaces</h2><table class=\"workspaces\"><thead><tr><th>Workspace</th><th>Entities</th>\
         <th>Sources</th></tr></thead><tbody>{spaces}</tbody></table><h2>Recently changed</h2><ul class=\"recent\">{recent}</ul>{metrics}"
    );
    layout("Overview", who, &body)
}

pub fn error_page(text: &str, who: Option<&str>) -> String {
    layout(
        "Error",
        who,
        &format!("<h1>Something went wrong</h1>{}", message(text, true)),
    )
}

/// When a relationship holds in the world, when not always: its stretches
/// as dates (" 2019-01-01 – 2022-03-01, since 2023-01-01").
fn valid_during(during: &Value) -> String {
    let day = |s: &Value, key: &str| {
        s[key]
            .as_str()
            .map(|t| t.get(..10).unwrap_or(t).to_string())
    };
    let stretches: Vec<String> = during
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| match (day(s, "valid_from"), day(s, "valid_to")) {
            (Some(f), Some(t)) => format!("{f} – {t}"),
            (Some(f), None) => format!("since {f}"),
            (None, Some(t)) => format!("until {t}"),
            (None, None) => "always".to_string(),
        })
        .collect();
    if stretches.is_empty() {
        return String::new();
    }
    format!(
        " <span class=\"valid-during\">{}</span>",
        escape(&stretches.join(", "))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_snapshot_shows_provenance_and_competing_values_escaped() {
        let snapshot = json!({
            "entity_id": "ent_1", "canonical_name": "<Ada>", "entity_type": "person",
            "snapshot": {"name": "Augusta <b>"},
            "field_provenance": {"name": {"source_id": "30f870dd-7f1c", "observed_at": "2026-01-02T00:00:00Z",
                                          "source_priority": 100, "confidence": "F3"}},
            "contradictions": [{"field": "name", "chosen_value": "Augusta <b>",
                                "values": [{"value": "Augusta <b>"}, {"value": "Ada Lovelace"}]}]
        });
        let html = entity_page(
            &EntityView {
                snapshot: &snapshot,
                observations: &json!({"observations": []}),
                relationships: &json!({"relationships": []}),
                related: &json!({}),
                at: None,
                valid_at: None,
                notice: None,
                error: None,
            },
            Some("u"),
        );
        assert!(html.contains("Augusta &lt;b&gt;"));
        assert!(!html.contains("<b>"));
        assert!(html.contains("<span class=\"competing\">Ada Lovelace</span>"));
        assert!(html.contains("/inspector/sources/30f870dd-7f1c"));
        assert!(html.contains("F3"));
    }

    #[test]
    fn the_history_says_which_agent_wrote_each_observation() {
        let observations = json!({"observations": [
            {"observed_at": "2026-01-03T00:00:00Z", "kind": "store", "fields": {"name": "A"},
             "written_with": {"token_id": "7c0d…", "name": "<reader> agent"}},
            {"observed_at": "2026-01-02T00:00:00Z", "kind": "store", "fields": {"name": "B"},
             "written_with": {"token_id": "5e1f-token", "name": null}},
            {"observed_at": "2026-01-01T00:00:00Z", "kind": "store", "fields": {"name": "C"}}
        ]});
        let html = entity_page(
            &EntityView {
                snapshot: &json!({"entity_id": "ent_1", "snapshot": {}}),
                observations: &observations,
                relationships: &json!({"relationships": []}),
                related: &json!({}),
                at: None,
                valid_at: None,
                notice: None,
                error: None,
            },
            None,
        );
        assert!(html.contains("by &lt;reader&gt; agent"));
        assert!(html.contains("by 5e1f-token"));
        assert_eq!(html.matches("class=\"agent\"").count(), 2);
    }

    #[test]
    fn a_relationship_says_when_it_holds() {
        let relationships = json!({"relationships": [
            {"source_entity_id": "ent_1", "target_entity_id": "ent_2", "relationship_type": "PART_OF",
             "valid_during": [{"valid_from": "2019-01-01T00:00:00.000000Z", "valid_to": "2022-03-01T00:00:00.000000Z"},
                              {"valid_from": "2023-01-01T00:00:00.000000Z"}]},
            {"source_entity_id": "ent_3", "target_entity_id": "ent_1", "relationship_type": "REFERS_TO"}
        ]});
        let html = entity_page(
            &EntityView {
                snapshot: &json!({"entity_id": "ent_1", "snapshot": {}}),
                observations: &json!({"observations": []}),
                relationships: &relationships,
                related: &json!({}),
                at: None,
                valid_at: None,
                notice: None,
                error: None,
            },
            None,
        );
        assert!(html.contains(
            "<span class=\"valid-during\">2019-01-01 – 2022-03-01, since 2023-01-01</span>"
        ));
        // One that holds always says nothing more.
        assert_eq!(html.matches("valid-during").count(), 1);
    }

    #[test]
    fn values_stored_with_intervals_get_a_valid_time_slider() {
        let observations = json!({"observations": [
            {"observed_at": "2026-01-03T00:00:00Z", "kind": "store", "fields": {"role": "manager"},
             "valid_from": "2022-03-01T00:00:00.000000Z"},
            {"observed_at": "2026-01-02T00:00:00Z", "kind": "store", "fields": {"role": "engineer"},
             "valid_from": "2019-01-01T00:00:00.000000Z", "valid_to": "2022-03-01T00:00:00.000000Z"}
        ]});
        let (snapshot, relationships, related) = (
            json!({"entity_id": "ent_1", "snapshot": {"role": "engineer"}}),
            json!({"relationships": []}),
            json!({}),
        );
        let view = |valid_at| EntityView {
            snapshot: &snapshot,
            observations: &observations,
            relationships: &relationships,
            related: &related,
            at: None,
            valid_at,
            notice: None,
            error: None,
        };
        let html = entity_page(&view(Some("2020-06-01T00:00:00Z")), None);
        assert!(html.contains("id=\"valid-slider\""));
        assert!(html.contains("data-param=\"valid_at\""));
        // Two distinct ends: 2019-01-01 and 2022-03-01.
        assert!(html.contains("max=\"1\""), "{html}");
        assert!(html.contains("True in the world at 2020-06-01T00:00:00Z"));
        let plain = json!({"observations": [{"observed_at": "2026-01-03T00:00:00Z", "kind": "store", "fields": {}}]});
        let html = entity_page(
            &EntityView {
                observations: &plain,
                ..view(None)
            },
            None,
        );
        assert!(!html.contains("valid-slider") && html.contains("asof-slider"));
    }

    #[test]
    fn timeline_groups_by_month_newest_first() {
        let events = json!({"events": [
            {"event_timestamp": "2025-01-05T00:00:00Z", "event_type": "a", "entity_id": "e1"},
            {"event_timestamp": "2025-03-01T00:00:00Z", "event_type": "b", "entity_id": "e2"}]});
        let html = timeline_page(&events, &TimelineFilter::default(), None);
        assert!(html.find("2025-03").unwrap() < html.find("2025-01").unwrap());
    }

    #[test]
    fn graph_data_cannot_close_its_script() {
        let html = graph_page(
            "e",
            "E",
            "",
            &json!([{"data": {"id": "</script><script>x"}}]),
            None,
        );
        assert!(!html.contains("</script><script>x"));
    }
}
