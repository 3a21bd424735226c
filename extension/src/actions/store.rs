//! `store`: structured entities, or a file, through the ingest pipeline
//! (`crate::ingest`); the answer for structured entities also says what
//! they are related to.

use super::traversal::related_to;
use crate::ingest;
use neotoma_core::actions::store::*;
use neotoma_core::NeotomaError;
use uuid::Uuid;

pub fn store(user: Uuid, req: StoreRequest) -> Result<StoreResponse, NeotomaError> {
    match (&req.entities, &req.file_content, &req.file_path) {
        (Some(_), Some(_), _) => Err(NeotomaError::validation(
            "give either `entities` (structured) or `file_content` (a file), not both",
        )
        .with("field", "file_content")),
        (_, None, Some(_)) => Err(NeotomaError::invalid_field(
            "file_path",
            "`file_path` is read by the MCP server; in SQL pass the bytes as `file_content` (base64)",
        )),
        (_, Some(_), _) if req.valid_from.is_some() || req.valid_to.is_some() => {
            Err(NeotomaError::invalid_field(
                "valid_from",
                "valid_from/valid_to go with `entities` (what a file's interpretation observes holds always)",
            ))
        }
        (_, Some(content), _) => ingest::files::store(user, content, &req),
        (Some(entities), None, None) => {
            let mut out = ingest::structured::store(user, entities, &req)?;
            if !out.deduplicated {
                let mut ids: Vec<String> = out
                    .entities
                    .iter()
                    .flatten()
                    .map(|e| e.entity_id.clone())
                    .collect();
                ids.sort();
                ids.dedup();
                // Entities this store created have no relationships yet
                // (relationships refer to existing entities).
                let created = out
                    .interpretation
                    .as_ref()
                    .map_or(0, |i| i.entities_created as usize);
                let (entities, relationships) = if created == ids.len() {
                    (vec![], vec![])
                } else {
                    related_to(&user, &ids)?
                };
                out.related_entities = Some(entities);
                out.related_relationships = Some(relationships);
            }
            Ok(out)
        }
        (None, None, None) => Err(NeotomaError::validation(
            "store needs `entities` (structured) or `file_content`/`file_path` (a file)",
        )
        .with("field", "entities")),
    }
}
