//! The tool list, built from `neotoma.action_catalog()` at start for the
//! tool sets `--tools` chose. Nothing here knows any action by name.

use neotoma_core::tool_sets::{Selection, ToolGroup, ToolSet};
use rmcp::model::{JsonObject, ResourceTemplate, Tool, ToolAnnotations};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The argument every Neotoma tool takes for its whole answer.
pub const VERBOSE: &str = "verbose";

/// One action as the gateway needs it.
#[derive(Clone, Debug)]
pub struct Action {
    pub name: String,
    /// Schema-qualified function name, e.g. `neotoma.store`.
    pub sql_function: String,
    pub read_only: bool,
    /// Callable as a tool (the resource functions are not).
    pub callable: bool,
    /// An action of the earlier specification: callable, not listed.
    pub legacy: bool,
    /// Arguments naming a local file the gateway reads and passes as content.
    pub read_files: Vec<ReadFile>,
    /// Which of the seed's metrics time it (`record_upload`, `search`).
    pub measured_as: Option<String>,
    /// The set listing it; its failures answer the way that set's server does.
    pub tool_set: ToolSet,
    /// Its group among Neotoma's tools (`--tools`): what a limited token's
    /// session lists.
    pub group: ToolGroup,
    /// Its tool, named as its set names it.
    pub tool: Tool,
}

impl Action {
    /// A tool to list: callable, and not a legacy name.
    pub fn listable(&self) -> bool {
        self.callable && !self.legacy
    }
}

/// An input property holding a path to a file on the gateway's machine
/// (schema annotation `x-neotoma-read-file`): the gateway reads the file and
/// sends its bytes, base64-encoded, as `content_field` instead.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadFile {
    pub path_field: String,
    pub content_field: String,
    /// Filled with the file's name when the caller gave none.
    pub name_field: Option<String>,
}

#[derive(Debug, Default)]
pub struct Catalog {
    pub version: String,
    pub extension_version: String,
    /// In catalog order.
    pub actions: Vec<Arc<Action>>,
    /// The tool sets served, first first.
    pub tool_sets: Vec<ToolSet>,
    /// What `--tools` chose (the sets, and the groups of Neotoma's tools).
    pub selection: Selection,
    /// The tools listed, in order: by their set's name, or by the action's
    /// when a set chosen earlier lists that name already.
    listed: Vec<Arc<Action>>,
    /// What a call may name: listed names, then the actions' own names and
    /// legacy aliases (of the sets served).
    by_name: HashMap<String, Arc<Action>>,
    /// SQL functions serving MCP resources/list and resources/read.
    pub list_resources: Option<String>,
    pub read_resource: Option<String>,
    pub resource_templates: Vec<ResourceTemplate>,
    /// SQL function recording what an external model read for a pending run.
    pub record_interpretation: Option<String>,
}

/// `schema.function`, lower-case identifiers only: safe to put in SQL text.
fn is_qualified_identifier(s: &str) -> bool {
    let ident = |p: &str| {
        !p.is_empty()
            && !p.starts_with(|c: char| c.is_ascii_digit())
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    matches!(s.split_once('.'), Some((a, b)) if ident(a) && ident(b))
}

fn object(v: &Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

impl Catalog {
    /// Reads the JSON served by `neotoma.action_catalog()`, serving the tool
    /// sets (and listing the groups of Neotoma's tools) `selection` chose.
    pub fn from_json(v: &Value, selection: &Selection) -> anyhow::Result<Catalog> {
        let tool_sets = selection.sets.as_slice();
        let mut catalog = Catalog {
            version: v["catalog_version"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            extension_version: v["extension_version"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            ..Catalog::default()
        };
        let entries = v["actions"]
            .as_array()
            .ok_or_else(|| anyhow::anyhow!("action catalog has no `actions` array"))?;
        for e in entries {
            let name = e["name"]
                .as_str()
                .ok_or_else(|| anyhow::anyhow!("catalog entry without a name: {e}"))?
                .to_string();
            let input = object(&e["input_schema"])
                .ok_or_else(|| anyhow::anyhow!("action {name} has no input schema"))?;
            let read_files = input
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(path_field, p)| {
                    let spec = p.get("x-neotoma-read-file")?;
                    Some(ReadFile {
                        path_field: path_field.clone(),
                        content_field: spec["content_field"].as_str()?.to_string(),
                        name_field: spec["name_field"].as_str().map(str::to_string),
                    })
                })
                .collect();
            let ann = &e["annotations"];
            let read_only = ann["read_only"].as_bool().unwrap_or(false);
            // What a model reads of the schema: the workspace argument only
            // where workspaces are served.
            let mut listed_schema = object(&neotoma_core::catalog::agent_schema(
                &Value::Object(input.clone()),
                selection.groups.contains(&ToolGroup::Workspaces),
            ))
            .unwrap_or_default();
            // Neotoma's answers are lean unless asked (neotoma_core::lean).
            let neotoma = e["tool_set"]
                .as_str()
                .is_none_or(|s| s == ToolSet::Neotoma.name());
            if neotoma && let Some(Value::Object(props)) = listed_schema.get_mut("properties") {
                props.insert(
                    VERBOSE.into(),
                    serde_json::json!({"type": "boolean", "description": "Answer every field, bookkeeping and empty ones too (default false)."}),
                );
            }
            let mut tool = Tool::new(
                name.clone(),
                e["description"].as_str().unwrap_or_default().to_string(),
                Arc::new(listed_schema),
            )
            .with_annotations(
                ToolAnnotations::with_title(e["title"].as_str().unwrap_or(&name))
                    .read_only(read_only)
                    .destructive(ann["destructive"].as_bool().unwrap_or(false))
                    .idempotent(ann["idempotent"].as_bool().unwrap_or(false))
                    .open_world(false),
            );
            if let Some(title) = e["title"].as_str() {
                tool = tool.with_title(title);
            }
            if let Some(out) = object(&e["output_schema"]) {
                let out = if neotoma {
                    object(&neotoma_core::lean::lenient_schema(&Value::Object(out)))
                        .unwrap_or_default()
                } else {
                    out
                };
                tool = tool.with_raw_output_schema(Arc::new(out));
            }
            let sql_function = e["sql_function"].as_str().unwrap_or_default().to_string();
            anyhow::ensure!(
                is_qualified_identifier(&sql_function),
                "action {name} has an unusable sql_function {sql_function:?}"
            );
            // A catalog from before tool sets has Neotoma's only.
            let tool_set = match e["tool_set"].as_str() {
                None => ToolSet::Neotoma,
                Some(s) => match ToolSet::parse(s) {
                    Some(set) => set,
                    None => continue,
                },
            };
            // A catalog from before groups has every tool in `core`.
            let group = e["tool_group"]
                .as_str()
                .and_then(ToolGroup::parse)
                .unwrap_or(ToolGroup::Core);
            let action = Action {
                sql_function,
                name: name.clone(),
                read_only,
                callable: e["tool"].as_bool().unwrap_or(true),
                legacy: e["legacy"].as_bool().unwrap_or(false),
                read_files,
                measured_as: e["measured_as"].as_str().map(str::to_string),
                tool_set,
                group,
                tool,
            };
            let served = tool_sets.contains(&tool_set);
            if served && action.listable() && selection.lists(tool_set, group) {
                let mut listed = action.clone();
                listed.tool.name = e["tool_name"].as_str().unwrap_or(&name).to_string().into();
                catalog.listed.push(Arc::new(listed));
            }
            let action = Arc::new(action);
            if served {
                for alias in e["aliases"].as_array().into_iter().flatten() {
                    if let Some(a) = alias.as_str() {
                        catalog.by_name.insert(a.to_string(), action.clone());
                    }
                }
                catalog.by_name.insert(name, action.clone());
            }
            catalog.actions.push(action);
        }
        // Sets in the order chosen, each in catalog order; names taken in that order.
        let mut ordered: Vec<Arc<Action>> = Vec::new();
        let mut taken: std::collections::HashSet<String> = Default::default();
        for set in tool_sets {
            for l in catalog.listed.iter().filter(|l| l.tool_set == *set) {
                let own = l.tool.name.to_string();
                let mut a = (**l).clone();
                if taken.contains(&own) {
                    // Its action's name; Neotoma's own are their action's
                    // name already, so they take the set's as a prefix.
                    a.tool.name = if a.name != own {
                        a.name.clone().into()
                    } else {
                        format!("{}_{own}", set.name()).into()
                    };
                }
                taken.insert(a.tool.name.to_string());
                ordered.push(Arc::new(a));
            }
        }
        for l in &ordered {
            catalog.by_name.insert(l.tool.name.to_string(), l.clone());
        }
        catalog.listed = ordered;
        catalog.tool_sets = tool_sets.to_vec();
        catalog.selection = selection.clone();
        if let Some(f) = v["interpretation"]["record_function"].as_str() {
            anyhow::ensure!(
                is_qualified_identifier(f),
                "unusable interpretation function {f:?}"
            );
            catalog.record_interpretation = Some(f.to_string());
        }
        let resources = &v["resources"];
        for (field, slot) in [
            ("list_function", &mut catalog.list_resources),
            ("read_function", &mut catalog.read_resource),
        ] {
            if let Some(f) = resources[field].as_str() {
                anyhow::ensure!(
                    is_qualified_identifier(f),
                    "unusable resource function {f:?}"
                );
                *slot = Some(f.to_string());
            }
        }
        for t in resources["templates"].as_array().into_iter().flatten() {
            let (Some(uri), Some(name)) = (t["uri_template"].as_str(), t["name"].as_str()) else {
                continue;
            };
            let mut template = ResourceTemplate::new(uri, name);
            if let Some(d) = t["description"].as_str() {
                template = template.with_description(d);
            }
            if let Some(m) = t["mime_type"].as_str() {
                template = template.with_mime_type(m);
            }
            catalog.resource_templates.push(template);
        }
        Ok(catalog)
    }

    /// The action called `name` (canonical or legacy).
    pub fn get(&self, name: &str) -> Option<&Arc<Action>> {
        self.by_name.get(name)
    }

    /// The tools to list: those of the sets served, but the resource
    /// functions and legacy names.
    pub fn tools(&self) -> Vec<Tool> {
        self.listed.iter().map(|a| a.tool.clone()).collect()
    }

    /// The tools to list for a session whose token has `limits`: those it
    /// may call (a read-only agent is not shown tools it cannot use).
    pub fn tools_within(&self, limits: &neotoma_core::token_limits::TokenLimits) -> Vec<Tool> {
        self.listed
            .iter()
            .filter(|a| {
                // An action this gateway does not know is taken to act
                // across workspaces.
                let in_workspaces = neotoma_core::catalog::action_named(&a.name)
                    .is_ok_and(neotoma_core::token_limits::stays_in_workspaces);
                limits.permits(a.read_only, a.tool_set, a.group, in_workspaces)
            })
            .map(|a| a.tool.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sets, with every group of Neotoma's tools listed.
    fn every_group(sets: &[ToolSet]) -> Selection {
        Selection {
            sets: sets.to_vec(),
            groups: ToolGroup::ALL.iter().copied().collect(),
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_limited_token_is_shown_only_what_it_may_call() {
        use neotoma_core::token_limits::TokenLimits;
        let json = neotoma_core::catalog::catalog_json("9.9.9");
        let served = Catalog::from_json(
            &json,
            &neotoma_core::tool_sets::parse_selection("memory,all").unwrap(),
        )
        .unwrap();
        let names = |tools: Vec<Tool>| -> Vec<String> {
            tools.iter().map(|t| t.name.to_string()).collect()
        };
        let everything = names(served.tools());
        assert_eq!(
            names(served.tools_within(&TokenLimits::default())),
            everything
        );
        let reader = names(served.tools_within(&TokenLimits::new(true, None)));
        assert!(
            reader.contains(&"retrieve_entities".to_string())
                && reader.contains(&"read_graph".to_string())
        );
        assert!(
            !reader
                .iter()
                .any(|n| ["store", "bulk", "erase", "create_entities"].contains(&n.as_str()))
        );
        assert!(reader.len() < everything.len(), "{reader:?}");
        let memory = names(served.tools_within(&TokenLimits::new(false, Some("memory"))));
        assert!(
            memory.contains(&"create_entities".to_string())
                && !memory.contains(&"store".to_string())
        );
        let team = names(
            served.tools_within(&TokenLimits::default().in_workspaces(Some(vec!["team".into()]))),
        );
        assert!(
            team.contains(&"store".to_string())
                && team.contains(&"read_graph".to_string())
                && !team.contains(&"register_schema".to_string())
                && !team.contains(&"analyze_schema_candidates".to_string()),
            "{team:?}"
        );
    }

    #[test]
    fn lists_the_default_profile_and_keeps_the_rest_callable() {
        let json = neotoma_core::catalog::catalog_json("9.9.9");
        let core = Catalog::from_json(&json, &Selection::default()).unwrap();
        let names: Vec<String> = core.tools().iter().map(|t| t.name.to_string()).collect();
        assert!(
            names.len() <= 24 && names.contains(&"store".to_string()),
            "{names:?}"
        );
        assert!(!names.contains(&"bulk".to_string()) && !names.contains(&"erase".to_string()));
        // Not listed, still callable by name.
        assert!(core.get("bulk").is_some() && core.get("erase").is_some());
        // Without the workspaces group, no tool lists a workspace argument.
        assert!(
            core.tools()
                .iter()
                .all(|t| !t.input_schema.contains_key("properties")
                    || t.input_schema["properties"].get("workspace").is_none())
        );
        assert!(
            core.tools()
                .iter()
                .all(|t| t.input_schema["properties"].get("user_id").is_none())
        );
        let all = Catalog::from_json(
            &json,
            &neotoma_core::tool_sets::parse_selection("all").unwrap(),
        )
        .unwrap();
        let listable = all
            .actions
            .iter()
            .filter(|a| a.listable() && a.tool_set == ToolSet::Neotoma)
            .count();
        assert_eq!(
            all.tools().len(),
            listable,
            "--tools all lists every tool once"
        );
        let with_lifecycle = Catalog::from_json(
            &json,
            &neotoma_core::tool_sets::parse_selection("neotoma,lifecycle").unwrap(),
        )
        .unwrap();
        assert_eq!(with_lifecycle.tools().len(), core.tools().len() + 8);
    }

    #[test]
    fn builds_tools_from_the_core_catalog() {
        let json = neotoma_core::catalog::catalog_json("9.9.9");
        let c = Catalog::from_json(&json, &every_group(&[ToolSet::Neotoma])).unwrap();
        assert_eq!(c.extension_version, "9.9.9");
        let v = c.get("get_version").expect("get_version");
        assert!(v.read_only);
        assert_eq!(v.sql_function, "neotoma.get_version");
        let ann = v.tool.annotations.as_ref().unwrap();
        assert_eq!(ann.read_only_hint, Some(true));
        assert_eq!(ann.destructive_hint, Some(false));
        assert!(v.tool.output_schema.is_some());
        assert_eq!(
            c.tools().len(),
            c.actions
                .iter()
                .filter(|a| a.listable() && a.tool_set == ToolSet::Neotoma)
                .count()
        );
        assert!(c.get("memory_read_graph").is_none());
        assert!(!c.tools().iter().any(|t| t.name == "read_resource"));
        let legacy = c.get("submit_payload").unwrap();
        assert!(legacy.callable && !legacy.listable());
        assert!(!c.get("read_resource").unwrap().callable);
        assert!(c.get("no_such_action").is_none());
        assert_eq!(
            c.get("get_entity_snapshot").unwrap().name,
            "retrieve_entity_snapshot"
        );
        assert_eq!(c.read_resource.as_deref(), Some("neotoma.read_resource"));
        assert_eq!(c.resource_templates.len(), 11);
        assert_eq!(
            c.record_interpretation.as_deref(),
            Some("neotoma.record_interpretation")
        );
        assert_eq!(
            c.get("store").unwrap().read_files,
            vec![ReadFile {
                path_field: "file_path".into(),
                content_field: "file_content".into(),
                name_field: Some("original_filename".into()),
            }]
        );
    }

    #[test]
    fn refuses_sql_function_names_that_are_not_plain_identifiers() {
        assert!(is_qualified_identifier("neotoma.store"));
        for bad in [
            "store",
            "neotoma.store; drop table x",
            "Neotoma.x",
            "a.b.c",
            "neotoma.",
            "x.1a",
        ] {
            assert!(!is_qualified_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn refuses_a_catalog_without_actions() {
        assert!(
            Catalog::from_json(&serde_json::json!({}), &every_group(&[ToolSet::Neotoma])).is_err()
        );
    }

    /// Each set lists its tools by its own names; a name an earlier set
    /// took goes by the action's name.
    #[test]
    fn serves_the_tool_sets_chosen() {
        let json = neotoma_core::catalog::catalog_json("9.9.9");
        let memory = Catalog::from_json(&json, &every_group(&[ToolSet::Memory])).unwrap();
        let names: Vec<String> = memory.tools().iter().map(|t| t.name.to_string()).collect();
        assert_eq!(
            names,
            [
                "create_entities",
                "create_relations",
                "add_observations",
                "delete_entities",
                "delete_observations",
                "delete_relations",
                "read_graph",
                "search_nodes",
                "open_nodes"
            ]
        );
        assert_eq!(memory.get("read_graph").unwrap().name, "memory_read_graph");
        assert_eq!(
            memory.get("memory_read_graph").unwrap().tool_set,
            ToolSet::Memory
        );
        assert!(memory.get("store").is_none());
        let both =
            Catalog::from_json(&json, &every_group(&[ToolSet::Memory, ToolSet::Neotoma])).unwrap();
        assert!(both.get("store").is_some() && both.get("ingest").is_some());
        let names: Vec<String> = both.tools().iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names[0], "create_entities");
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "tool names are unique");
        // A set chosen after Neotoma's yields the names both have to it;
        // Neotoma's, chosen after, are listed as neotoma_<name>.
        let graphmem_first =
            Catalog::from_json(&json, &every_group(&[ToolSet::Graphmem, ToolSet::Neotoma]))
                .unwrap();
        let names: Vec<String> = graphmem_first
            .tools()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "tool names are unique");
        assert_eq!(
            graphmem_first.get("set_context").unwrap().name,
            "graphmem_set_context"
        );
        assert_eq!(
            graphmem_first.get("neotoma_set_context").unwrap().name,
            "set_context"
        );
        let neotoma_first =
            Catalog::from_json(&json, &every_group(&[ToolSet::Neotoma, ToolSet::Graphmem]))
                .unwrap();
        assert_eq!(
            neotoma_first.get("set_context").unwrap().name,
            "set_context"
        );
        assert!(
            neotoma_first
                .tools()
                .iter()
                .any(|t| t.name == "graphmem_set_context")
        );
    }
}
