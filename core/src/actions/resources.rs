//! MCP resources (seed 000 section 2.8): `neotoma://` URIs, parsed here and
//! read by `neotoma.read_resource`; `neotoma.list_resources` lists what the
//! user's data offers.

use crate::actions::lifecycle::ChangeOut;
use crate::error::{ErrorCode, NeotomaError, Result};
use crate::ids::is_entity_id;
use crate::schema::check_name;
use crate::workspace::{WorkspaceArg, WorkspaceName};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListResourcesRequest {
    pub user_id: Option<String>,
    /// Whose resources to list (the context, else `default`, when absent).
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadResourceRequest {
    /// A `neotoma://` URI; `neotoma://workspace/{name}/…` reads in that
    /// workspace, any other in the context's.
    pub uri: String,
    pub user_id: Option<String>,
    /// Where an unpinned URI is read (the context, else `default`, when absent).
    pub workspace: Option<WorkspaceArg>,
}

/// The workspace a URI is pinned to (`neotoma://workspace/{name}/…`), if
/// it is, and the URI without the pin.
pub fn split_pin(uri: &str) -> Result<(Option<WorkspaceName>, String)> {
    let Some(rest) = uri
        .strip_prefix(SCHEME)
        .and_then(|p| p.strip_prefix("workspace/"))
    else {
        return Ok((None, uri.to_string()));
    };
    let (name, inner) = rest.split_once('/').unwrap_or((rest, ""));
    let name =
        WorkspaceName::parse("uri", name).map_err(|_| not_found(uri, "not a workspace name"))?;
    Ok((Some(name), format!("{SCHEME}{inner}")))
}

/// The prefix of the URIs of `workspace`'s resources: pinned, except in
/// `default` (whose URIs are those from before workspaces).
pub fn prefix_of(workspace: &str) -> String {
    if workspace == crate::workspace::DEFAULT {
        SCHEME.to_string()
    } else {
        format!("{SCHEME}workspace/{workspace}/")
    }
}

/// What a `neotoma://` URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceUri {
    Entities(String),
    Entity(String),
    EntityObservations(String),
    EntityRelationships(String),
    TimelineYear(i32),
    TimelineMonth(i32, u32),
    Source(Uuid),
    Sources,
    /// The best matches of a search (its text percent-decoded).
    Search(String),
    /// `memory://knowledge-graph`: the whole graph as the reference memory
    /// server's resource shows it (`--tools memory`).
    KnowledgeGraph,
}

pub const SCHEME: &str = "neotoma://";
/// The reference memory server's one resource.
pub const KNOWLEDGE_GRAPH: &str = "memory://knowledge-graph";

fn not_found(uri: &str, why: &str) -> NeotomaError {
    NeotomaError::new(ErrorCode::NotFound, format!("no resource {uri}: {why}")).with("uri", uri)
}

impl ResourceUri {
    /// What `uri` names, pinned to a workspace or not.
    pub fn parse(uri: &str) -> Result<ResourceUri> {
        if uri == KNOWLEDGE_GRAPH {
            return Ok(ResourceUri::KnowledgeGraph);
        }
        if uri.starts_with("memory://") {
            return Err(not_found(
                uri,
                "the memory server has one resource, memory://knowledge-graph",
            ));
        }
        let (_, unpinned) = split_pin(uri)?;
        let Some(path) = unpinned.strip_prefix(SCHEME) else {
            return Err(NeotomaError::invalid_field(
                "uri",
                format!("`{uri}` is not a neotoma:// URI"),
            ));
        };
        let parts: Vec<&str> = path.split('/').collect();
        let entity = |id: &str| {
            if is_entity_id(id) {
                Ok(id.to_string())
            } else {
                Err(not_found(uri, "not an entity id"))
            }
        };
        match parts.as_slice() {
            ["sources"] => Ok(ResourceUri::Sources),
            ["source", id] => Uuid::parse_str(id)
                .map(ResourceUri::Source)
                .map_err(|_| not_found(uri, "not a source id")),
            ["entities", t] => {
                check_name("uri", t).map_err(|_| not_found(uri, "not an entity type"))?;
                Ok(ResourceUri::Entities(t.to_string()))
            }
            ["search", q] => {
                let text = percent_encoding::percent_decode_str(q)
                    .decode_utf8()
                    .map_err(|_| not_found(uri, "the query is not UTF-8"))?;
                crate::search::check_query(&text)
                    .map_err(|_| not_found(uri, "the query is 1 to 1000 characters"))?;
                Ok(ResourceUri::Search(text.trim().to_string()))
            }
            ["entity", id] => Ok(ResourceUri::Entity(entity(id)?)),
            ["entity", id, "observations"] => Ok(ResourceUri::EntityObservations(entity(id)?)),
            ["entity", id, "relationships"] => Ok(ResourceUri::EntityRelationships(entity(id)?)),
            ["timeline", period] => {
                // A period that is no date is bad input, as dates are
                // everywhere else (years 0001 to 9999).
                let bad = || {
                    NeotomaError::invalid_field(
                        "uri",
                        format!("{uri}: the period is YYYY or YYYY-MM, years 0001 to 9999"),
                    )
                    .with("uri", uri)
                };
                let digits =
                    |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
                let year = |y: &str| {
                    let year: i32 = y.parse().map_err(|_| bad())?;
                    if digits(y, 4) && crate::time::YEARS.contains(&year) {
                        Ok(year)
                    } else {
                        Err(bad())
                    }
                };
                match period.split_once('-') {
                    None => Ok(ResourceUri::TimelineYear(year(period)?)),
                    Some((y, m)) if digits(m, 2) => {
                        let month: u32 = m.parse().map_err(|_| bad())?;
                        if !(1..=12).contains(&month) {
                            return Err(bad());
                        }
                        Ok(ResourceUri::TimelineMonth(year(y)?, month))
                    }
                    _ => Err(bad()),
                }
            }
            _ => Err(not_found(uri, "unknown resource")),
        }
    }
}

impl ResourceUri {
    /// Whether a change of the user's feed may change this resource's body
    /// (what a subscription to it is told). Errs on the side of yes: a
    /// spurious notification costs a read, a missed one a stale answer.
    pub fn changed_by(&self, change: &ChangeOut) -> bool {
        let entity = |id: &str| change.kind == "entity" && change.entity_id.as_deref() == Some(id);
        match change.kind.as_str() {
            // What an erasure took is gone from the feed: anything may differ.
            "erasure" => return true,
            // A schema can change how every snapshot of its type folds.
            "schema" => {
                return matches!(self, ResourceUri::Entity(_) | ResourceUri::Search(_))
                    || matches!(self, ResourceUri::Entities(t) if change.entity_type.as_deref() == Some(t))
            }
            _ => {}
        }
        match self {
            ResourceUri::Entity(id) | ResourceUri::EntityObservations(id) => entity(id),
            ResourceUri::EntityRelationships(id) => match change.kind.as_str() {
                // A relationship erased since has no ends left to compare.
                "relationship" => match (&change.source_entity_id, &change.target_entity_id) {
                    (Some(s), Some(t)) => s == id || t == id,
                    _ => true,
                },
                // Deleting, merging or splitting an entity hides or moves
                // its relationships.
                _ => entity(id) && !matches!(change.operation.as_str(), "observed" | "corrected"),
            },
            ResourceUri::Entities(t) => {
                change.kind == "entity" && change.entity_type.as_deref() == Some(t)
            }
            // Events come from any entity's dates.
            ResourceUri::TimelineYear(_) | ResourceUri::TimelineMonth(..) => {
                change.kind == "entity"
            }
            ResourceUri::Source(id) => {
                let id = id.to_string();
                matches!(change.kind.as_str(), "source" | "entity")
                    && change.source_id.as_deref() == Some(id.as_str())
            }
            ResourceUri::Sources => change.kind == "source",
            // Any entity may start or stop matching.
            ResourceUri::Search(_) => change.kind == "entity",
            // Every entity and relation is in it.
            ResourceUri::KnowledgeGraph => {
                matches!(change.kind.as_str(), "entity" | "relationship")
            }
        }
    }
}

/// The resource templates, as listed by MCP `resources/templates/list`.
pub fn templates() -> Value {
    let t = |uri: &str, name: &str, description: &str| json!({"uri_template": uri, "name": name, "description": description, "mime_type": "application/json"});
    json!([
        t(
            "neotoma://entities/{entity_type}",
            "Entities of a type",
            "Every entity of one type, with snapshots (up to 1000)."
        ),
        t(
            "neotoma://entity/{entity_id}",
            "Entity",
            "One entity: snapshot, provenance, observation count."
        ),
        t(
            "neotoma://entity/{entity_id}/observations",
            "Entity observations",
            "Every observation of one entity, newest first."
        ),
        t(
            "neotoma://entity/{entity_id}/relationships",
            "Entity relationships",
            "Every relationship of one entity, inbound and outbound."
        ),
        t(
            "neotoma://timeline/{year}",
            "Timeline of a year",
            "Timeline events of one year, newest first."
        ),
        t(
            "neotoma://timeline/{year}-{month}",
            "Timeline of a month",
            "Timeline events of one month (YYYY-MM), newest first."
        ),
        t(
            "neotoma://source/{source_id}",
            "Source",
            "One source with its metadata and the entities it gave."
        ),
        t(
            "neotoma://sources",
            "Sources",
            "Every source material, newest first (up to 1000)."
        ),
        t(
            "neotoma://workspace/{workspace}/entity/{entity_id}",
            "Entity in a workspace",
            "Any resource above, read in a named workspace: neotoma://workspace/{workspace}/ then its path (unpinned URIs are read in the context's workspace)."
        ),
        t(
            "neotoma://workspace/{workspace}/entities/{entity_type}",
            "Entities of a type in a workspace",
            "Every entity of one type in a named workspace, with snapshots (up to 1000)."
        ),
        t(
            "neotoma://search/{query}",
            "Search",
            "The 100 best matches of a search (the query percent-encoded), as retrieve_entities with search answers them."
        )
    ])
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "list_resources" => Entry::new(
            "List resources",
            "The neotoma:// resources the user's data offers: the source collection, \
                one collection per entity type, one timeline per year and month with events. \
                Served as MCP resources/list, not as a tool.",
        )
        .read_only()
        .internal(),
        "read_resource" => Entry::new(
            "Read resource",
            "The body of one neotoma:// resource (entity collection, entity, its \
                observations or relationships, a year or month of timeline, a source, the \
                sources). Served as MCP resources/read, not as a tool.",
        )
        .read_only()
        .internal(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(kind: &str, operation: &str) -> ChangeOut {
        ChangeOut {
            cursor: "c1.1.1".into(),
            kind: kind.into(),
            operation: operation.into(),
            entity_id: None,
            entity_type: None,
            relationship_id: None,
            relationship_type: None,
            source_entity_id: None,
            target_entity_id: None,
            source_id: None,
            changed_at: "2026-11-24T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_change_touches_the_resources_that_show_it() {
        let a = "ent_0123456789abcdef0123456789abcdef";
        let b = "ent_fedcba9876543210fedcba9876543210";
        let source = Uuid::from_u128(7);
        let uri = |u: String| ResourceUri::parse(&u).unwrap();
        let mut observed = change("entity", "observed");
        observed.entity_id = Some(a.into());
        observed.entity_type = Some("person".into());
        observed.source_id = Some(source.to_string());
        assert!(uri(format!("neotoma://entity/{a}")).changed_by(&observed));
        assert!(uri(format!("neotoma://entity/{a}/observations")).changed_by(&observed));
        assert!(!uri(format!("neotoma://entity/{b}")).changed_by(&observed));
        // A new observation leaves relationships as they were; a deletion hides them.
        assert!(!uri(format!("neotoma://entity/{a}/relationships")).changed_by(&observed));
        let mut deleted = observed.clone();
        deleted.operation = "deleted".into();
        assert!(uri(format!("neotoma://entity/{a}/relationships")).changed_by(&deleted));
        assert!(uri("neotoma://entities/person".into()).changed_by(&observed));
        assert!(!uri("neotoma://entities/company".into()).changed_by(&observed));
        assert!(uri("neotoma://timeline/2026-11".into()).changed_by(&observed));
        assert!(uri(format!("neotoma://source/{source}")).changed_by(&observed));
        assert!(!uri(format!("neotoma://source/{}", Uuid::from_u128(8))).changed_by(&observed));
        assert!(!uri("neotoma://sources".into()).changed_by(&observed));

        let mut related = change("relationship", "asserted");
        related.source_entity_id = Some(b.into());
        related.target_entity_id = Some(a.into());
        assert!(uri(format!("neotoma://entity/{a}/relationships")).changed_by(&related));
        assert!(!uri(format!("neotoma://entity/{a}")).changed_by(&related));
        let mut elsewhere = related.clone();
        elsewhere.target_entity_id = Some(b.into());
        assert!(!uri(format!("neotoma://entity/{a}/relationships")).changed_by(&elsewhere));
        // Erased since: the ends are unknown, so it may have been a's.
        assert!(uri(format!("neotoma://entity/{a}/relationships"))
            .changed_by(&change("relationship", "asserted")));

        let mut created = change("source", "created");
        created.source_id = Some(source.to_string());
        assert!(uri("neotoma://sources".into()).changed_by(&created));
        assert!(uri(format!("neotoma://source/{source}")).changed_by(&created));

        let mut schema = change("schema", "update");
        schema.entity_type = Some("person".into());
        assert!(uri("neotoma://entities/person".into()).changed_by(&schema));
        assert!(!uri("neotoma://entities/company".into()).changed_by(&schema));
        assert!(uri(format!("neotoma://entity/{b}")).changed_by(&schema));
        assert!(!uri("neotoma://sources".into()).changed_by(&schema));

        let pinned = uri(format!("neotoma://workspace/work/entity/{a}"));
        assert!(pinned.changed_by(&observed));
        let search = uri("neotoma://search/grace%20hopper".into());
        assert_eq!(search, ResourceUri::Search("grace hopper".into()));
        assert!(search.changed_by(&observed) && !search.changed_by(&created));
        assert!(ResourceUri::parse("neotoma://search/%20").is_err());
        assert!(ResourceUri::parse("neotoma://search/%FF").is_err());

        let erased = change("erasure", "entity");
        for u in [
            format!("neotoma://entity/{b}"),
            "neotoma://sources".into(),
            "neotoma://timeline/1999".into(),
        ] {
            assert!(uri(u).changed_by(&erased));
        }
    }

    #[test]
    fn parses_every_kind() {
        let e = "ent_0123456789abcdef0123456789abcdef";
        assert_eq!(
            ResourceUri::parse("neotoma://sources").unwrap(),
            ResourceUri::Sources
        );
        assert_eq!(
            ResourceUri::parse("neotoma://entities/invoice").unwrap(),
            ResourceUri::Entities("invoice".into())
        );
        assert_eq!(
            ResourceUri::parse(&format!("neotoma://entity/{e}")).unwrap(),
            ResourceUri::Entity(e.into())
        );
        assert_eq!(
            ResourceUri::parse(&format!("neotoma://entity/{e}/observations")).unwrap(),
            ResourceUri::EntityObservations(e.into())
        );
        assert_eq!(
            ResourceUri::parse(&format!("neotoma://entity/{e}/relationships")).unwrap(),
            ResourceUri::EntityRelationships(e.into())
        );
        assert_eq!(
            ResourceUri::parse("neotoma://timeline/2024").unwrap(),
            ResourceUri::TimelineYear(2024)
        );
        assert_eq!(
            ResourceUri::parse("neotoma://timeline/2024-03").unwrap(),
            ResourceUri::TimelineMonth(2024, 3)
        );
        let s = Uuid::from_bytes([1; 16]);
        assert_eq!(
            ResourceUri::parse(&format!("neotoma://source/{s}")).unwrap(),
            ResourceUri::Source(s)
        );
    }

    #[test]
    fn a_uri_may_be_pinned_to_a_workspace() {
        let e = "ent_0123456789abcdef0123456789abcdef";
        let pinned = format!("neotoma://workspace/work/entity/{e}");
        assert_eq!(
            ResourceUri::parse(&pinned).unwrap(),
            ResourceUri::Entity(e.into())
        );
        let (pin, rest) = split_pin(&pinned).unwrap();
        assert_eq!(pin.unwrap().as_str(), "work");
        assert_eq!(rest, format!("neotoma://entity/{e}"));
        assert_eq!(split_pin("neotoma://sources").unwrap().0, None);
        for bad in [
            "neotoma://workspace/Work/sources",
            "neotoma://workspace//sources",
            "neotoma://workspace/w",
        ] {
            assert!(ResourceUri::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(prefix_of("default"), "neotoma://");
        assert_eq!(prefix_of("work"), "neotoma://workspace/work/");
    }

    #[test]
    fn refuses_what_is_not_there() {
        assert_eq!(
            ResourceUri::parse("http://x").unwrap_err().code,
            ErrorCode::ValidationError
        );
        for bad in [
            "neotoma://nothing",
            "neotoma://entity/abc",
            "neotoma://source/xyz",
            "neotoma://entities/bad type",
        ] {
            assert_eq!(
                ResourceUri::parse(bad).unwrap_err().code,
                ErrorCode::NotFound,
                "{bad}"
            );
        }
        // A period outside the dates Neotoma takes is bad input.
        for bad in [
            "neotoma://timeline/2024-13",
            "neotoma://timeline/24",
            "neotoma://timeline/0000",
            "neotoma://timeline/0000-01",
            "neotoma://timeline/+999",
            "neotoma://timeline/-999-01",
            "neotoma://timeline/10000",
        ] {
            let e = ResourceUri::parse(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::ValidationError, "{bad}");
            assert_eq!(e.details["field"], "uri", "{bad}");
        }
        assert_eq!(templates().as_array().unwrap().len(), 11);
    }
}
