//! The pieces of schema.org's vocabulary that an Archive's landing page and a resolver's
//! tombstone both write in their JSON-LD: a creator as an agent, and the comment that
//! says why a work was withdrawn.

use serde::Serialize;

/// A creator (`creator`): a `Person` when written `Family, Given` (the form Dublin Core
/// gives persons), else an `Organization`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Agent {
    #[serde(rename = "@type")]
    pub type_: &'static str,
    pub name: String,
}

impl Agent {
    pub fn of(name: &str) -> Agent {
        Agent {
            type_: if name.contains(',') {
                "Person"
            } else {
                "Organization"
            },
            name: name.to_string(),
        }
    }
}

/// Why a work was withdrawn (`correction`), and when, if known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Correction {
    #[serde(rename = "@type")]
    type_: &'static str,
    pub text: String,
    #[serde(rename = "datePublished", skip_serializing_if = "Option::is_none")]
    pub date_published: Option<String>,
}

impl Correction {
    pub fn new(text: &str, date_published: Option<String>) -> Correction {
        Correction {
            type_: "CorrectionComment",
            text: text.to_string(),
            date_published,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creators_with_a_comma_are_persons() {
        assert_eq!(Agent::of("Banon, Gerald").type_, "Person");
        assert_eq!(Agent::of("CCSDS").type_, "Organization");
        assert_eq!(
            Agent::of("Instituto Nacional de Pesquisas Espaciais").type_,
            "Organization"
        );
    }

    #[test]
    fn a_correction_without_its_date_leaves_the_date_out() {
        assert_eq!(
            serde_json::to_string(&Correction::new("Withdrawn", None)).unwrap(),
            r#"{"@type":"CorrectionComment","text":"Withdrawn"}"#
        );
        assert_eq!(
            serde_json::to_string(&Correction::new("x", Some("2020-01-02".into()))).unwrap(),
            r#"{"@type":"CorrectionComment","text":"x","datePublished":"2020-01-02"}"#
        );
    }
}
