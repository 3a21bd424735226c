//! The server's `instructions`: what an agent reads once, before any tool,
//! about when to use the memory and how (at most 2 KB, checked by a test).

use neotoma_core::tool_sets::{Selection, ToolGroup, ToolSet};

const CORE: &str = "Neotoma is your long-term memory: what you store stays, with where it came from. \
Store what will matter later (people, companies, tasks, events, notes, decisions, documents) with \
`store`: `entities: [{entity_type, ...fields}]`, every field you know. Common types: person, company, \
task, event, note, invoice, transaction; when unsure, call `list_entity_types` with a `keyword` (one \
line per type) rather than guessing. Identity fields (a person's email or name, an invoice's number) \
make the same thing land on one entity: store again to add or update facts. Find with \
`retrieve_entities` (`search`: a question or keywords, ranked by words and meaning) or \
`retrieve_entity_by_identifier`; read one with `retrieve_entity_snapshot`. Every field traces to the \
observation and source it came from (`retrieve_field_provenance`). Fix a wrong value with `correct` \
(it outranks every source); link entities with `create_relationship`; dates become \
`list_timeline_events`. Answers leave out empty and bookkeeping fields: pass `verbose: true` for all. \
Errors are {error: {code, message, details}}.";

/// What each group adds, in a few words.
fn hint(group: ToolGroup) -> &'static str {
    match group {
        ToolGroup::Core => "",
        ToolGroup::Lifecycle => {
            "lifecycle (delete_entity and restore_entity to forget and bring back, erase for good, list_recent_changes)"
        }
        ToolGroup::Review => {
            "review (contest a doubtful value, annotate, list_contradictions, reclassify)"
        }
        ToolGroup::Workspaces => {
            "workspaces (set_context to work in one, `workspace` on every call)"
        }
        ToolGroup::Bulk => "bulk (several writes in one call, all or nothing)",
        ToolGroup::Subgraphs => "subgraphs (search_subgraph, get_subgraph_by_ids)",
        ToolGroup::Schema => {
            "schema (analyze_schema_candidates, update_schema_incremental to add fields)"
        }
        ToolGroup::Connectors => "connectors (mail and bank imports)",
        ToolGroup::Admin => "admin (versions, clock, metrics)",
    }
}

/// The instructions for the tools `selection` lists.
pub fn for_selection(selection: &Selection) -> String {
    let mut text = String::new();
    if selection.sets.contains(&ToolSet::Neotoma) {
        text.push_str(CORE);
        let extra: Vec<&str> = selection
            .groups
            .iter()
            .filter(|g| **g != ToolGroup::Core)
            .map(|g| hint(*g))
            .collect();
        if !extra.is_empty() {
            text.push_str(" Also enabled: ");
            text.push_str(&extra.join("; "));
            text.push('.');
        }
        // So that an agent missing a tool can tell its user what to enable.
        let off: Vec<&str> = ToolGroup::ALL
            .iter()
            .filter(|g| !selection.groups.contains(g))
            .map(|g| g.name())
            .collect();
        if !off.is_empty() {
            text.push_str(&format!(
                " More tools exist in groups the operator can enable (neotoma-mcp --tools): {}.",
                off.join(", ")
            ));
        }
    }
    let others: Vec<&str> = selection
        .sets
        .iter()
        .filter(|s| **s != ToolSet::Neotoma)
        .map(|s| s.name())
        .collect();
    if !others.is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!(
            "The tools of the {} memory server{} are served over Neotoma's truth model: \
             what they write keeps its sources and corrections.",
            others.join(", "),
            if others.len() > 1 { "s" } else { "" }
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use neotoma_core::tool_sets::parse_selection;

    #[test]
    fn instructions_stay_within_two_kilobytes() {
        for tools in [
            "neotoma",
            "core",
            "all",
            "memory",
            "memory,neotoma,lifecycle",
            "graphmem,engram,workspace,all",
        ] {
            let text = for_selection(&parse_selection(tools).unwrap());
            assert!(text.len() <= 2048, "{tools}: {} bytes", text.len());
            assert!(!text.is_empty());
        }
        let all = for_selection(&parse_selection("all").unwrap());
        assert!(all.contains("lifecycle") && all.contains("bulk"));
        assert!(all.contains("Also enabled") && !all.contains("More tools exist"));
        let core = for_selection(&Selection::default());
        assert!(core.contains("list_entity_types") && !core.contains("Also enabled"));
        assert!(core.contains("can enable (neotoma-mcp --tools): lifecycle, review,"));
        let memory = for_selection(&parse_selection("memory").unwrap());
        assert!(!memory.contains("store"), "{memory}");
    }
}
