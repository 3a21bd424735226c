//! Stable numbers of what the graph servers show (`neotoma.graph_ids`):
//! one per entity, text observation and relation of a user, given the
//! first time it is shown, in order per user, so the same calls give the
//! same numbers. GraphMem shows them as integers; EngraMCP's memory ids
//! are an entity's number in hexadecimal.

use crate::db::{self, Arg};
use neotoma_core::canonical::sha256_hex;
use neotoma_core::NeotomaError;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

#[derive(Clone, Copy)]
pub enum Kind {
    Entity,
    Observation,
    Relation,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Entity => "entity",
            Kind::Observation => "observation",
            Kind::Relation => "relation",
        }
    }
}

/// The things an answer shows, to number in one statement.
#[derive(Default)]
pub struct Numbering {
    wanted: Vec<Value>,
    ids: BTreeMap<String, i64>,
}

impl Numbering {
    fn key(kind: Kind, reference: &str, detail: &str) -> String {
        sha256_hex(format!("{}\n{reference}\n{detail}", kind.as_str()).as_bytes())
    }

    pub fn want(&mut self, kind: Kind, reference: &str, detail: &str) {
        let key = Self::key(kind, reference, detail);
        self.wanted
            .push(json!({"ord": self.wanted.len(), "kind": kind.as_str(),
                                "ref": reference, "detail": detail, "key": key}));
    }

    /// Gives what has no number yet the next numbers of the user, in the
    /// order wanted (one call at a time per user), and reads them all.
    pub fn assign(&mut self, user: &Uuid) -> Result<(), NeotomaError> {
        if self.wanted.is_empty() {
            return Ok(());
        }
        db::run(
            "SELECT pg_advisory_xact_lock(hashtextextended('neotoma.graph_ids:' || $1::text, 0))",
            &[Arg::uuid(user)],
        )?;
        let v = db::json(
            "WITH wanted AS (SELECT * FROM jsonb_to_recordset($2) AS w(ord int, kind text, ref text, detail text, key text)),
             missing AS (SELECT DISTINCT ON (w.key) w.* FROM wanted w
                         WHERE NOT EXISTS (SELECT 1 FROM neotoma.graph_ids g WHERE g.user_id = $1::uuid AND g.key = w.key)
                         ORDER BY w.key, w.ord),
             base AS (SELECT coalesce(max(g.id), 0) AS m FROM neotoma.graph_ids g WHERE g.user_id = $1::uuid),
             ins AS (INSERT INTO neotoma.graph_ids (user_id, id, kind, ref, detail, key)
                     SELECT $1::uuid, base.m + row_number() OVER (ORDER BY missing.ord), missing.kind, missing.ref,
                            missing.detail, missing.key
                     FROM missing, base RETURNING key, id)
             SELECT coalesce(jsonb_object_agg(key, id), '{}') FROM (
               SELECT key, id FROM ins
               UNION ALL
               SELECT g.key, g.id FROM neotoma.graph_ids g
               WHERE g.user_id = $1::uuid AND g.key IN (SELECT key FROM wanted)) x",
            &[Arg::uuid(user), Arg::Json(&Value::Array(std::mem::take(&mut self.wanted)))],
        )?;
        self.ids
            .extend(db::from_json::<BTreeMap<String, i64>>(v, "graph ids")?);
        Ok(())
    }

    pub fn id(&self, kind: Kind, reference: &str, detail: &str) -> i64 {
        self.ids
            .get(&Self::key(kind, reference, detail))
            .copied()
            .unwrap_or_default()
    }
}

/// The number of each of these entities (numbered now if new).
pub fn entities(user: &Uuid, entity_ids: &[&str]) -> Result<BTreeMap<String, i64>, NeotomaError> {
    let mut n = Numbering::default();
    for id in entity_ids {
        n.want(Kind::Entity, id, "");
    }
    n.assign(user)?;
    Ok(entity_ids
        .iter()
        .map(|id| (id.to_string(), n.id(Kind::Entity, id, "")))
        .collect())
}

/// What a number names: its kind's reference and detail.
pub fn resolve(user: &Uuid, kind: Kind, id: i64) -> Result<Option<(String, String)>, NeotomaError> {
    let v = db::json(
        "SELECT jsonb_build_array(ref, detail) FROM neotoma.graph_ids
         WHERE user_id = $1::uuid AND id = $2 AND kind = $3",
        &[Arg::uuid(user), Arg::Int(id), Arg::Text(kind.as_str())],
    )?;
    Ok(v.as_array().map(|a| {
        (
            a[0].as_str().unwrap_or_default().to_string(),
            a[1].as_str().unwrap_or_default().to_string(),
        )
    }))
}

/// Gives the numbers of entity `from` (and of its observations) to entity
/// `to`, where `to` has none of its own: an entity keeps its number when a
/// type change moves it to another entity.
pub fn carry(user: &Uuid, from: &str, to: &str) -> Result<(), NeotomaError> {
    db::run(
        "UPDATE neotoma.graph_ids g
            SET ref = $3, key = encode(sha256(convert_to(g.kind || E'\\n' || $3 || E'\\n' || g.detail, 'UTF8')), 'hex')
          WHERE g.user_id = $1::uuid AND g.ref = $2 AND g.kind IN ('entity', 'observation')
            AND NOT EXISTS (SELECT 1 FROM neotoma.graph_ids o
                            WHERE o.user_id = $1::uuid AND o.ref = $3 AND o.kind = g.kind AND o.detail = g.detail)",
        &[Arg::uuid(user), Arg::Text(from), Arg::Text(to)],
    )
}
