//! Deterministic identifiers. Same input, same id: ids are derived from
//! content with SHA-256, never from clocks or random numbers.

use crate::canonical::{hex, sha256_parts};
use uuid::Uuid;

/// A UUID (version 8, "custom") made of the first 16 bytes of
/// SHA-256 over `kind` and `parts`.
pub fn derived_uuid(kind: &str, parts: &[&str]) -> Uuid {
    let mut all = Vec::with_capacity(parts.len() + 1);
    all.push(kind);
    all.extend_from_slice(parts);
    let digest = sha256_parts(&all);
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::new_v8(bytes)
}

/// Source id: (user, content hash).
pub fn source_id(user_id: &Uuid, content_hash: &str) -> Uuid {
    derived_uuid("source", &[&user_id.to_string(), content_hash])
}

/// Entity id: `ent_` + 32 hex digits of SHA-256 over (user, entity type,
/// normalised identity key).
pub fn entity_id(user_id: &Uuid, entity_type: &str, identity_key: &str) -> String {
    let digest = sha256_parts(&["entity", &user_id.to_string(), entity_type, identity_key]);
    format!("ent_{}", hex(&digest[..16]))
}

/// Entity id within a workspace: in `default`, exactly [`entity_id`] (ids
/// of entities stored before workspaces existed do not change); elsewhere
/// the workspace is part of what is hashed, under another kind, so the
/// same identity in two workspaces is two entities and no key can make one
/// id collide with a `default` one.
pub fn entity_id_in(
    user_id: &Uuid,
    workspace: &str,
    entity_type: &str,
    identity_key: &str,
) -> String {
    if workspace == crate::workspace::DEFAULT {
        return entity_id(user_id, entity_type, identity_key);
    }
    let digest = sha256_parts(&[
        "entity_in_workspace",
        &user_id.to_string(),
        workspace,
        entity_type,
        identity_key,
    ]);
    format!("ent_{}", hex(&digest[..16]))
}

/// Source id within a workspace: in `default`, exactly [`source_id`]; the
/// same content stored in another workspace is another source there.
pub fn source_id_in(user_id: &Uuid, workspace: &str, content_hash: &str) -> Uuid {
    if workspace == crate::workspace::DEFAULT {
        return source_id(user_id, content_hash);
    }
    derived_uuid(
        "source_in_workspace",
        &[&user_id.to_string(), workspace, content_hash],
    )
}

/// Whether `s` has the shape of an entity id.
pub fn is_entity_id(s: &str) -> bool {
    s.len() == 36
        && s.starts_with("ent_")
        && s[4..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Relationship id: (user, type, source entity, target entity).
pub fn relationship_id(
    user_id: &Uuid,
    relationship_type: &str,
    source: &str,
    target: &str,
) -> Uuid {
    derived_uuid(
        "relationship",
        &[&user_id.to_string(), relationship_type, source, target],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(n: u8) -> Uuid {
        Uuid::from_bytes([n; 16])
    }

    #[test]
    fn same_input_same_id() {
        assert_eq!(source_id(&user(1), "abc"), source_id(&user(1), "abc"));
        assert_eq!(
            entity_id(&user(1), "person", "email:a@b.c"),
            entity_id(&user(1), "person", "email:a@b.c")
        );
    }

    #[test]
    fn ids_are_scoped_by_user_and_type() {
        assert_ne!(source_id(&user(1), "abc"), source_id(&user(2), "abc"));
        assert_ne!(
            entity_id(&user(1), "person", "k"),
            entity_id(&user(2), "person", "k")
        );
        assert_ne!(
            entity_id(&user(1), "person", "k"),
            entity_id(&user(1), "company", "k")
        );
    }

    #[test]
    fn shapes() {
        let e = entity_id(&user(1), "person", "k");
        assert!(is_entity_id(&e), "{e}");
        assert!(!is_entity_id("ent_xyz"));
        assert!(!is_entity_id(&e.to_uppercase()));
        let s = source_id(&user(1), "abc");
        assert_eq!(s.get_version_num(), 8);
    }

    #[test]
    fn ids_are_stable_across_releases() {
        // A change here changes every stored id: it needs a data migration.
        assert_eq!(
            relationship_id(&user(0), "PART_OF", "a", "b").to_string(),
            "d78771a3-cd0b-8196-8d4c-b4563ca60285"
        );
        assert_eq!(
            entity_id(&user(0), "person", "k"),
            "ent_3e99a37b3fe763979eaad9484b25b8bf"
        );
        assert_eq!(
            source_id(&user(0), "abc").to_string(),
            "bb2eae2b-1dda-86a4-8cc7-532da802ee44"
        );
    }

    #[test]
    fn the_default_workspace_keeps_todays_ids() {
        assert_eq!(
            entity_id_in(&user(0), "default", "person", "k"),
            "ent_3e99a37b3fe763979eaad9484b25b8bf"
        );
        assert_eq!(
            source_id_in(&user(0), "default", "abc"),
            source_id(&user(0), "abc")
        );
        // Elsewhere: another id per workspace, stable across releases.
        let home = entity_id_in(&user(0), "home", "person", "k");
        assert!(is_entity_id(&home));
        assert_ne!(home, entity_id_in(&user(0), "work", "person", "k"));
        assert_ne!(home, entity_id(&user(0), "person", "k"));
        assert_ne!(
            source_id_in(&user(0), "home", "abc"),
            source_id(&user(0), "abc")
        );
        assert_eq!(home, entity_id_in(&user(0), "home", "person", "k"));
    }
}
