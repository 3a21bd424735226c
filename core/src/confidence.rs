//! Confidence ratings: the admiralty code (NATO AJP-2.1) that seed 004's
//! EngraMCP uses, written as two characters such as `B2`.
//!
//! * The letter rates the source's reliability: A completely reliable,
//!   B usually reliable, C fairly reliable, D not usually reliable,
//!   E unreliable, F reliability cannot be judged.
//! * The number rates the information's credibility: 1 confirmed,
//!   2 probably true, 3 possibly true, 4 doubtful, 5 improbable,
//!   6 truth cannot be judged.
//!
//! Earlier in the alphabet and smaller is better on both scales.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// A rating: reliability (0 = A … 5 = F) and credibility (1 … 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Confidence {
    reliability: u8,
    credibility: u8,
}

/// The rating of an observation no caller rated: a source whose reliability
/// cannot be judged, information possibly true (EngraMCP's default for an
/// uncorroborated memory).
pub const UNRATED: Confidence = Confidence {
    reliability: 5,
    credibility: 3,
};

/// The rating of a correction no caller rated: the owner of the memory said
/// so (a completely reliable source, confirmed).
pub const CORRECTED: Confidence = Confidence {
    reliability: 0,
    credibility: 1,
};

/// What the lowest rating is: anything passes a `min_confidence` of F6.
pub const LOWEST: Confidence = Confidence {
    reliability: 5,
    credibility: 6,
};

impl Confidence {
    /// Reads a rating such as `B2` (upper or lower case letter).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bytes = text.trim().as_bytes();
        let valid = |b: &[u8]| {
            let letter = b[0].to_ascii_uppercase();
            (b'A'..=b'F').contains(&letter) && (b'1'..=b'6').contains(&b[1])
        };
        if bytes.len() != 2 || !valid(bytes) {
            return Err(format!(
                "`{text}` is not a confidence rating: a letter A-F (the source's reliability) then a digit 1-6 (the information's credibility), such as B2"
            ));
        }
        Ok(Confidence {
            reliability: bytes[0].to_ascii_uppercase() - b'A',
            credibility: bytes[1] - b'0',
        })
    }

    /// The rating of an observation no caller rated, by whether it is a
    /// correction.
    pub fn default_for(correction: bool) -> Self {
        if correction {
            CORRECTED
        } else {
            UNRATED
        }
    }

    /// The rating after `contests` contests: each lowers the information's
    /// credibility one step (2 probably true → 3 possibly true …), down to
    /// 6. The source's reliability is a judgement of the source, not of
    /// this observation, and stays.
    pub fn contested(self, contests: u32) -> Self {
        let steps = contests.min(6) as u8;
        Confidence {
            reliability: self.reliability,
            credibility: (self.credibility + steps).min(6),
        }
    }

    /// Whether this rating passes a `min_confidence` filter: both its letter
    /// and its number at least as good as the filter's (seed 004's AND
    /// semantics; F6 lets everything through).
    pub fn passes(self, min: Confidence) -> bool {
        self.reliability <= min.reliability && self.credibility <= min.credibility
    }

    /// `Greater` when this rating is better than `other`: the more reliable
    /// source first, then the more credible information (so A3 beats B1).
    /// The order of the `highest_confidence` merge strategy.
    pub fn rank(self, other: Self) -> Ordering {
        (other.reliability, other.credibility).cmp(&(self.reliability, self.credibility))
    }
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'A' + self.reliability) as char,
            self.credibility
        )
    }
}

impl TryFrom<String> for Confidence {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Confidence::parse(&s)
    }
}

impl From<Confidence> for String {
    fn from(c: Confidence) -> String {
        c.to_string()
    }
}

impl JsonSchema for Confidence {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Confidence".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[A-Fa-f][1-6]$",
            "description": "Admiralty code: source reliability A (completely reliable) to F (cannot be judged), then information credibility 1 (confirmed) to 6 (cannot be judged), e.g. B2"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Confidence {
        Confidence::parse(s).unwrap()
    }

    #[test]
    fn parses_and_prints_every_rating() {
        for letter in "ABCDEF".chars() {
            for digit in 1..=6 {
                let text = format!("{letter}{digit}");
                assert_eq!(c(&text).to_string(), text);
                assert_eq!(c(&text.to_lowercase()).to_string(), text);
            }
        }
        for bad in ["", "A", "G1", "A0", "A7", "1A", "AA", "A12", "B 2", "é1"] {
            assert!(Confidence::parse(bad).is_err(), "{bad}");
        }
        let v: Confidence = serde_json::from_value(serde_json::json!("c4")).unwrap();
        assert_eq!(serde_json::to_value(v).unwrap(), serde_json::json!("C4"));
        assert!(serde_json::from_value::<Confidence>(serde_json::json!("Z9")).is_err());
    }

    #[test]
    fn min_confidence_needs_both_letter_and_number() {
        assert!(c("B2").passes(c("B2")));
        assert!(c("A1").passes(c("B2")));
        assert!(!c("A3").passes(c("B2")));
        assert!(!c("C1").passes(c("B2")));
        for letter in "ABCDEF".chars() {
            for digit in 1..=6 {
                assert!(c(&format!("{letter}{digit}")).passes(LOWEST));
            }
        }
        assert!(!UNRATED.passes(c("E6")));
    }

    #[test]
    fn reliability_ranks_first_then_credibility() {
        assert_eq!(c("A3").rank(c("B1")), Ordering::Greater);
        assert_eq!(c("B1").rank(c("B2")), Ordering::Greater);
        assert_eq!(c("F6").rank(c("F6")), Ordering::Equal);
        assert_eq!(c("F6").rank(c("A1")), Ordering::Less);
    }

    #[test]
    fn a_contest_lowers_credibility_one_step_down_to_six() {
        assert_eq!(c("B2").contested(0), c("B2"));
        assert_eq!(c("B2").contested(1), c("B3"));
        assert_eq!(c("B2").contested(3), c("B5"));
        assert_eq!(c("B5").contested(4), c("B6"));
        assert_eq!(c("A1").contested(u32::MAX), c("A6"));
        assert_eq!(Confidence::default_for(false), c("F3"));
        assert_eq!(Confidence::default_for(true), c("A1"));
    }
}
