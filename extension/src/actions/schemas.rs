//! Schema evolution actions: analyze_schema_candidates,
//! get_schema_recommendations, update_schema_incremental, register_schema.

use crate::db::{self, Arg};
use crate::evolution::{self, active_in_scope, apply_schema, lock_schema, versions};
use crate::tenancy;
use neotoma_core::actions::schemas::*;
use neotoma_core::evolution::next_version;
use neotoma_core::schema::{check_name, EntitySchema, FieldDef, FieldType, MergePolicy, Strategy};
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

pub fn analyze_schema_candidates(
    user: Uuid,
    req: AnalyzeSchemaCandidatesRequest,
) -> Result<AnalyzeSchemaCandidatesResponse, NeotomaError> {
    if let Some(t) = &req.entity_type {
        check_name("entity_type", t)?;
    }
    let min_frequency = req.min_frequency.unwrap_or(5);
    let min_confidence = req.min_confidence.unwrap_or(0.8);
    if min_frequency < 1 {
        return Err(NeotomaError::invalid_field(
            "min_frequency",
            "min_frequency must be at least 1",
        ));
    }
    if !(0.0..=1.0).contains(&min_confidence) {
        return Err(NeotomaError::invalid_field(
            "min_confidence",
            "min_confidence must be between 0 and 1",
        ));
    }
    let stats = evolution::fragment_stats(&user, req.entity_type.as_deref(), None)?;
    let types: Vec<String> = {
        let mut t: Vec<String> = stats.keys().map(|(t, _)| t.clone()).collect();
        t.dedup();
        t
    };
    let schemas = crate::registry::active(user, &types)?;
    let mut by_type: BTreeMap<String, Vec<CandidateField>> = BTreeMap::new();
    for ((entity_type, key), s) in &stats {
        let known = schemas
            .get(entity_type)
            .is_some_and(|a| a.schema.fields.contains_key(key));
        if known || (s.frequency as i64) < min_frequency || s.confidence < min_confidence {
            continue;
        }
        by_type
            .entry(entity_type.clone())
            .or_default()
            .push(CandidateField {
                field_name: key.clone(),
                field_type: s.field_type.as_str().to_string(),
                frequency: s.frequency as i64,
                confidence: s.confidence,
                type_consistency: s.type_consistency,
                sample_values: s.sample_values.clone(),
                naming_pattern_match: s.naming_pattern_match,
                format_consistency: s.format_consistency,
                distinct_sources: s.distinct_sources as i64,
            });
    }
    let mut recommendations = Vec::new();
    for (entity_type, mut fields) in by_type {
        fields.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then_with(|| a.field_name.cmp(&b.field_name))
        });
        let score = ((fields.iter().map(|f| f.confidence).sum::<f64>() / fields.len() as f64)
            * 1000.0)
            .round()
            / 1000.0;
        let reasoning = format!(
            "{} field(s) of {entity_type} stored in raw_fragments at least {min_frequency} times with confidence >= {min_confidence}",
            fields.len()
        );
        let stored: Vec<Value> = fields
            .iter()
            .map(|f| json!({"field_name": f.field_name, "field_type": f.field_type, "required": false}))
            .collect();
        let evidence: Map<String, Value> = fields
            .iter()
            .map(|f| {
                (
                    f.field_name.clone(),
                    serde_json::to_value(f).unwrap_or_default(),
                )
            })
            .collect();
        let id = evolution::record_recommendation(
            &user,
            &entity_type,
            "raw_fragments",
            &Value::Array(stored),
            score,
            &reasoning,
            &Value::Object(evidence),
            "pending",
            None,
        )?;
        recommendations.push(CandidateRecommendation {
            id,
            entity_type,
            fields,
            source: "raw_fragments".into(),
            confidence_score: score,
            reasoning,
        });
    }
    Ok(AnalyzeSchemaCandidatesResponse {
        total_entity_types: recommendations.len() as i64,
        total_fields: recommendations.iter().map(|r| r.fields.len() as i64).sum(),
        recommendations,
        min_frequency,
        min_confidence,
    })
}

pub fn get_schema_recommendations(
    user: Uuid,
    req: GetSchemaRecommendationsRequest,
) -> Result<GetSchemaRecommendationsResponse, NeotomaError> {
    check_name("entity_type", &req.entity_type)?;
    let source = req.source.as_deref().unwrap_or("all");
    if !["raw_fragments", "agent", "inference", "all"].contains(&source) {
        return Err(NeotomaError::invalid_field(
            "source",
            "source must be raw_fragments, agent, inference or all",
        ));
    }
    let status = req.status.as_deref().unwrap_or("pending");
    if ![
        "pending",
        "approved",
        "rejected",
        "applied",
        "auto_applied",
        "all",
    ]
    .contains(&status)
    {
        return Err(NeotomaError::invalid_field(
            "status",
            "status must be pending, approved, rejected, applied, auto_applied or all",
        ));
    }
    let v = db::json(
        "WITH r AS (
           SELECT * FROM neotoma.schema_recommendations
           WHERE user_id = $1::uuid AND entity_type = $2
             AND ($3 = 'all' OR source = $3) AND ($4 = 'all' OR status = $4))
         SELECT jsonb_build_object(
           'recommendations', coalesce((SELECT jsonb_agg(jsonb_build_object('id', id, 'entity_type', entity_type,
               'fields', fields, 'source', source, 'confidence_score', confidence_score,
               'reasoning', reasoning, 'status', status, 'evidence', evidence,
               'schema_version', schema_version) ORDER BY created_at, id) FROM r), '[]'),
           'total', (SELECT count(*) FROM r), 'entity_type', $2)",
        &[Arg::uuid(user), Arg::Text(&req.entity_type), Arg::Text(source), Arg::Text(status)],
    )?;
    db::from_json(v, "schema recommendations")
}

/// Runs `body` with the scope a request names: this user's variant
/// (`user_specific`, which needs a user) or the global schemas, which only
/// an operator may change (acting for the session's user, if any, so that
/// migrations see its data).
fn in_scope<T>(
    action: &str,
    user_specific: bool,
    user: Option<Uuid>,
    body: impl FnOnce(Uuid, Option<Uuid>) -> Result<T, NeotomaError>,
) -> Result<T, NeotomaError> {
    if user_specific {
        let user = tenancy::require_user(user)?;
        body(user, Some(user))
    } else {
        tenancy::require_operator(&format!("{action} without user_specific"))?;
        body(Uuid::nil(), user)
    }
}

fn parse_type(field: &str, t: &str) -> Result<FieldType, NeotomaError> {
    serde_json::from_value(json!(t)).map_err(|_| {
        NeotomaError::invalid_field(
            field,
            format!("`{t}` is not a field type (string, number, date, boolean, array, object)"),
        )
    })
}

fn parse_strategy(field: &str, s: &str) -> Result<Strategy, NeotomaError> {
    serde_json::from_value(json!(s)).map_err(|_| {
        NeotomaError::invalid_field(
            field,
            format!("`{s}` is not a reducer strategy (last_write, highest_priority, most_specific, merge_array, highest_confidence)"),
        )
    })
}

pub fn update_schema_incremental(
    user: Option<Uuid>,
    req: UpdateSchemaIncrementalRequest,
) -> Result<UpdateSchemaIncrementalResponse, NeotomaError> {
    check_name("entity_type", &req.entity_type)?;
    if req.fields_to_add.is_empty() {
        return Err(NeotomaError::invalid_field(
            "fields_to_add",
            "fields_to_add must name at least one field",
        ));
    }
    let mut additions = Vec::new();
    for (i, f) in req.fields_to_add.iter().enumerate() {
        let at = format!("fields_to_add[{i}]");
        check_name(&format!("{at}.field_name"), &f.field_name)?;
        if f.field_name == "entity_type" {
            return Err(NeotomaError::invalid_field(
                &format!("{at}.field_name"),
                "`entity_type` is reserved",
            ));
        }
        let field_type = parse_type(&format!("{at}.field_type"), &f.field_type)?;
        let strategy = f
            .reducer_strategy
            .as_deref()
            .map(|s| parse_strategy(&format!("{at}.reducer_strategy"), s))
            .transpose()?;
        additions.push((
            f.field_name.clone(),
            field_type,
            f.required.unwrap_or(false),
            strategy,
        ));
    }
    let user_specific = req.user_specific.unwrap_or(false);
    in_scope(
        "update_schema_incremental",
        user_specific,
        user,
        |scope, user| {
            lock_schema(&scope, &req.entity_type)?;
            let base = match active_in_scope(&scope, &req.entity_type)? {
                Some(s) => Some(s),
                None if user_specific => active_in_scope(&Uuid::nil(), &req.entity_type)?,
                None => None,
            };
            let Some(mut schema) = base else {
                return Err(NeotomaError::new(
                    ErrorCode::SchemaNotFound,
                    format!(
                        "no active schema for {}; register_schema first",
                        req.entity_type
                    ),
                )
                .with("entity_type", req.entity_type.clone()));
            };
            let base_version = schema.schema_version.clone();
            let mut added = Vec::new();
            for (name, field_type, required, strategy) in &additions {
                match schema.fields.get(name) {
                    Some(existing) if existing.field_type == *field_type => {}
                    Some(existing) => {
                        return Err(NeotomaError::invalid_field(
                            "fields_to_add",
                            format!("{name} is already a {} field", existing.field_type.as_str()),
                        ))
                    }
                    None => {
                        schema.fields.insert(
                            name.clone(),
                            FieldDef {
                                field_type: *field_type,
                                required: *required,
                                description: None,
                                validator: None,
                                preserve_case: false,
                            },
                        );
                        if let Some(s) = strategy {
                            schema.merge_policies.insert(
                                name.clone(),
                                MergePolicy {
                                    strategy: *s,
                                    tie_breaker: None,
                                },
                            );
                        }
                        added.push(name.clone());
                    }
                }
            }
            let activate = req.activate.unwrap_or(true);
            let scope_name = if user_specific { "user" } else { "global" };
            // Same fields → same version: nothing new, nothing written.
            let unchanged = added.is_empty()
                && (!user_specific || active_in_scope(&scope, &req.entity_type)?.is_some());
            if !unchanged {
                schema.schema_version = match &req.schema_version {
                    Some(v) if v.trim().is_empty() => {
                        return Err(NeotomaError::invalid_field(
                            "schema_version",
                            "schema_version must not be empty",
                        ))
                    }
                    Some(v) => v.clone(),
                    None => next_version(&base_version, &versions(&scope, &req.entity_type)?),
                };
                schema.validate()?;
                apply_schema(&scope, &schema, activate)?;
            }
            let names: Vec<String> = additions.iter().map(|a| a.0.clone()).collect();
            let mut migrated = 0;
            if req.migrate_existing.unwrap_or(false) {
                if let Some(user) = user {
                    migrated = evolution::migrate(&user, &schema, &names)?;
                }
            }
            if let Some(user) = user {
                let fields: Vec<String> = schema.fields.keys().cloned().collect();
                mark_applied(&user, &req.entity_type, &fields, &schema.schema_version)?;
            }
            Ok(UpdateSchemaIncrementalResponse {
                success: true,
                entity_type: req.entity_type.clone(),
                schema_version: schema.schema_version.clone(),
                fields_added: added,
                activated: activate || unchanged,
                migrated_existing: req.migrate_existing.unwrap_or(false),
                fragments_migrated: migrated,
                scope: scope_name.to_string(),
            })
        },
    )
}

/// Marks applied the pending recommendations whose fields are now all in the
/// schema (`fields`).
fn mark_applied(
    user: &Uuid,
    entity_type: &str,
    names: &[String],
    version: &str,
) -> Result<(), NeotomaError> {
    db::run(
        "UPDATE neotoma.schema_recommendations SET status = 'applied', schema_version = $4, updated_at = now()
         WHERE user_id = $1::uuid AND entity_type = $2 AND status = 'pending'
           AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(fields) f WHERE NOT (f->>'field_name' = ANY($3)))",
        &[Arg::uuid(user), Arg::Text(entity_type), Arg::Texts(names.to_vec()), Arg::Text(version)],
    )
}

pub fn register_schema(
    user: Option<Uuid>,
    req: RegisterSchemaRequest,
) -> Result<RegisterSchemaResponse, NeotomaError> {
    let schema = EntitySchema {
        entity_type: req.entity_type.clone(),
        schema_version: req
            .schema_version
            .clone()
            .unwrap_or_else(|| "1.0".to_string()),
        description: req
            .schema_definition
            .description
            .clone()
            .unwrap_or_default(),
        fields: req.schema_definition.fields.clone(),
        merge_policies: req.reducer_config.merge_policies.clone(),
        identity: req
            .schema_definition
            .identity_fields
            .clone()
            .unwrap_or_default(),
        temporal_fields: req
            .schema_definition
            .temporal_fields
            .clone()
            .unwrap_or_default(),
    };
    schema.validate().map_err(|e| {
        // Name the field as the request spells it.
        let field = e
            .details
            .get("field")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let path = match field.split_once('.') {
            Some(("merge_policies", rest)) => format!("reducer_config.merge_policies.{rest}"),
            Some(("identity", rest)) => format!("schema_definition.identity_fields.{rest}"),
            Some(("temporal_fields", rest)) => format!("schema_definition.temporal_fields.{rest}"),
            _ if field == "fields" || field == "entity_type" || field == "schema_version" => {
                match field.as_str() {
                    "fields" => "schema_definition.fields".to_string(),
                    other => other.to_string(),
                }
            }
            _ => field,
        };
        let mut e = e;
        e.details.insert("field".into(), json!(path));
        e
    })?;
    let user_specific = req.user_specific.unwrap_or(false);
    in_scope("register_schema", user_specific, user, |scope, _user| {
        lock_schema(&scope, &schema.entity_type)?;
        let previous = active_in_scope(&scope, &schema.entity_type)?;
        let activate = req.activate.unwrap_or(previous.is_none());
        // A schema that changes what snapshots or timelines derive is
        // applied to the entities it governs in this transaction.
        let (id, recomputed) = apply_schema(&scope, &schema, activate)?;
        Ok(RegisterSchemaResponse {
            success: true,
            entity_type: schema.entity_type.clone(),
            schema_version: schema.schema_version.clone(),
            activated: activate,
            scope: if user_specific { "user" } else { "global" }.to_string(),
            schema_id: id.to_string(),
            entities_recomputed: recomputed,
        })
    })
}
