//! Actions of the earlier specification whose requests differ from their
//! successors': `submit_payload` and `upload_file`, both answered by `store`.

use super::store::store;
use neotoma_core::actions::legacy::*;
use neotoma_core::actions::store::StoreRequest;
use neotoma_core::ids::derived_uuid;
use neotoma_core::NeotomaError;
use serde_json::{json, Value};
use uuid::Uuid;

pub fn submit_payload(user: Uuid, req: SubmitPayloadRequest) -> Result<Value, NeotomaError> {
    let entity_type = capability_entity_type(&req.capability_id)?;
    let mut entity = req.body;
    entity.insert("entity_type".into(), json!(entity_type));
    let stored = store(
        user,
        StoreRequest {
            entities: Some(vec![Value::Object(entity)]),
            provenance: Some(req.provenance),
            ..Default::default()
        },
    )?;
    let source = stored.source_id;
    let hash = stored.content_hash;
    let created = !stored.deduplicated;
    let submission = derived_uuid(
        "submission",
        &[
            &source,
            req.client_request_id.as_deref().unwrap_or_default(),
        ],
    );
    Ok(json!({
        "payload_id": source,
        "payload_content_id": format!("payload_{}", &hash[..24.min(hash.len())]),
        "payload_submission_id": format!("sub_{submission}"),
        "created": created,
        "message": if created { "Payload created and observations extracted" } else { "Payload already stored" },
        "entities": stored.entities,
    }))
}

pub fn upload_file(user: Uuid, req: UploadFileRequest) -> Result<Value, NeotomaError> {
    let Some(content) = req.file_content else {
        return Err(NeotomaError::invalid_field(
            "file_path",
            "upload_file needs a file: `file_path` (read by the MCP server) or `file_content` (base64)",
        ));
    };
    let properties = match &req.properties {
        Some(p) => serde_json::from_str::<Value>(p)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| {
                NeotomaError::invalid_field(
                    "properties",
                    "properties must be a JSON object (as text)",
                )
            })?,
        None => json!({}),
    };
    // The properties are JSON inside a string: the same limits as any input.
    neotoma_core::limits::check_input(&properties).map_err(|e| {
        NeotomaError::invalid_field("properties", format!("properties: {}", e.message))
    })?;
    let stored = store(
        user,
        StoreRequest {
            file_content: Some(content),
            original_filename: req.original_filename,
            interpret: req.properties.is_some().then_some(false),
            ..Default::default()
        },
    )?;
    let mut response = json!({
        "record": {
            "id": stored.source_id, "type": stored.mime_type, "properties": properties,
            "file_urls": [stored.storage_path],
        },
        "file_url": stored.storage_path,
        "file_size": stored.file_size,
        "content_type": stored.mime_type,
        "source_id": stored.source_id,
        "deduplicated": stored.deduplicated,
        "interpretation": stored.interpretation,
        "entities": stored.entities,
    });
    // Model interpretation the MCP server completes before answering.
    if let Some(work) = stored.external_interpretation {
        response["external_interpretation"] = work;
    }
    Ok(response)
}
