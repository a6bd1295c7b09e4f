//! A withdrawn item keeps its identity: what the resolver's 410 says of it, read from the
//! JSON-LD of its tombstone landing page at the Archive that answered it is removed
//! (schema.org: `name`, `creator`, `datePublished`, `expires`, `correction`), fetched
//! within the Archives' timeout and [`crate::client::MAX_ANSWER`] bytes, parsed, and
//! written again from the fields read — never passed on as it came.

use ibi::cite::{self, Format, Issued, Kind, Name, Options, Work};
use ibi::negotiate::JSON_LD;
use ibi::schema::{Agent, Correction};
use serde::Serialize;
use serde_json::Value;

use crate::client::ArchiveClient;
use crate::linkset::landing_page;
use crate::log::say;

/// Most creators shown, and most bytes of one text read (a name, a title, a reason).
pub const MAX_CREATORS: usize = 50;
pub const MAX_TEXT: usize = 2048;

/// What a tombstone says, and where it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tombstone {
    /// Its landing page at the Archive that keeps it.
    pub landing: String,
    pub name: Option<String>,
    pub creators: Vec<String>,
    pub published: Option<String>,
    /// When it was removed (`expires`, else the correction's date).
    pub removed: Option<String>,
    /// Why (`correction`'s text).
    pub reason: Option<String>,
}

/// A string value of `v`, cut to [`MAX_TEXT`] bytes, without control characters;
/// `None` when it is no string or is empty.
fn text(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    let s: String = ibi::text::prefix(s, MAX_TEXT)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    (!s.is_empty()).then_some(s)
}

impl Tombstone {
    /// What the JSON-LD `json` of the tombstone at `landing` says; nothing but where it is
    /// when it is no JSON object.
    pub fn read(landing: &str, json: &str) -> Tombstone {
        let mut t = Tombstone {
            landing: landing.to_string(),
            ..Tombstone::default()
        };
        let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(json) else {
            return t;
        };
        t.name = text(doc.get("name"));
        let creators: Vec<&Value> = match doc.get("creator") {
            Some(Value::Array(all)) => all.iter().collect(),
            Some(one) => vec![one],
            None => Vec::new(),
        };
        t.creators = creators
            .into_iter()
            .filter_map(|c| match c {
                Value::String(_) => text(Some(c)),
                Value::Object(o) => text(o.get("name")),
                _ => None,
            })
            .take(MAX_CREATORS)
            .collect();
        t.published = text(doc.get("datePublished"));
        let correction = match doc.get("correction") {
            Some(Value::Array(all)) => all.first(),
            other => other,
        };
        let (reason, corrected) = match correction {
            Some(Value::Object(o)) => (text(o.get("text")), text(o.get("datePublished"))),
            Some(v @ Value::String(_)) => (text(Some(v)), None),
            _ => (None, None),
        };
        t.reason = reason;
        t.removed = text(doc.get("expires")).or(corrected);
        t
    }

    /// The tombstone of the IBI `ibi` kept at `address` (`service`), read from its landing
    /// page within `timeout`; where it is alone when it could not be read (an escaped
    /// line in the log says why).
    pub async fn fetch(
        client: &ArchiveClient,
        (address, service): (&str, &str),
        ibi: &str,
        timeout: std::time::Duration,
    ) -> Tombstone {
        let landing = landing_page(address, service, ibi);
        match client.get_description(&landing, JSON_LD, timeout).await {
            Ok((_, body)) => Tombstone::read(&landing, &body),
            Err(why) => {
                say(&format!(
                    "the tombstone at {landing} could not be read: {why}"
                ));
                Tombstone::read(&landing, "")
            }
        }
    }

    /// Its reference, APA as doi.org gives one by default, cited by `persistent` (`ibi`).
    pub fn citation(&self, persistent: &str, ibi: &str) -> String {
        let work = Work {
            title: self.name.clone(),
            creators: self.creators.iter().map(|c| Name::parse(c)).collect(),
            issued: self.published.as_deref().and_then(Issued::parse),
            publisher: None,
            kind: Kind::of(None),
            language: None,
            abstract_text: None,
            url: persistent.to_string(),
            id: ibi.to_string(),
        };
        cite::render(&work, Format::Bibliography, &Options::default())
            .unwrap_or_else(|_| persistent.to_string())
            .trim_end()
            .to_string()
    }

    /// Its schema.org JSON-LD, written from what was read: the persistent URL its
    /// identity, the landing page where it is described.
    pub fn json_ld(&self, persistent: &str) -> String {
        #[derive(Serialize)]
        struct Doc<'a> {
            #[serde(rename = "@context")]
            context: &'static str,
            #[serde(rename = "@type")]
            type_: &'static str,
            #[serde(rename = "@id")]
            id: &'a str,
            identifier: &'a str,
            url: &'a str,
            #[serde(rename = "subjectOf", skip_serializing_if = "str::is_empty")]
            subject_of: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            name: Option<&'a str>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            creator: Vec<Agent>,
            #[serde(rename = "datePublished", skip_serializing_if = "Option::is_none")]
            date_published: Option<&'a str>,
            #[serde(rename = "creativeWorkStatus")]
            status: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            expires: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            correction: Option<Correction>,
        }
        let doc = Doc {
            context: "https://schema.org/",
            type_: "CreativeWork",
            id: persistent,
            identifier: persistent,
            url: persistent,
            subject_of: &self.landing,
            name: self.name.as_deref(),
            creator: self.creators.iter().map(|c| Agent::of(c)).collect(),
            date_published: self.published.as_deref(),
            status: "Deleted",
            expires: self.removed.as_deref(),
            correction: self.reason.as_deref().map(|r| Correction::new(r, None)),
        };
        let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LANDING: &str = "http://a.example/x.y/z/2019/01.01.01.01/filelist/a.b/c/2020/01.02.03.04";

    #[test]
    fn a_tombstone_is_read_field_by_field_and_nothing_else() {
        let json = r#"{
          "@context": {"@vocab": "https://schema.org/"},
          "@type": "CreativeWork",
          "name": "  Ação & \"reação\" {x}\u0007 ",
          "creator": [{"@type": "Person", "name": "Souza, João"}, {"name": "INPE"}, 7, "Lee, Ann"],
          "datePublished": "2019",
          "creativeWorkStatus": "Deleted",
          "expires": "2021-02-03T04:05:06Z",
          "correction": {"@type": "CorrectionComment", "text": "Withdrawn at the authors' request.", "datePublished": "2021-02-03T04:05:06Z"},
          "encoding": [{"contentUrl": "http://evil.example/"}],
          "@reverse": {"isBasedOn": {"@id": "http://evil.example/"}}
        }"#;
        assert_eq!(
            Tombstone::read(LANDING, json),
            Tombstone {
                landing: LANDING.into(),
                name: Some("Ação & \"reação\" {x}".into()),
                creators: vec!["Souza, João".into(), "INPE".into(), "Lee, Ann".into()],
                published: Some("2019".into()),
                removed: Some("2021-02-03T04:05:06Z".into()),
                reason: Some("Withdrawn at the authors' request.".into()),
            }
        );
        // Not JSON, or not an object: where it is, and nothing more.
        for bad in ["", "<html>", "[1]", "\"x\"", "{\"name\": 7}"] {
            assert_eq!(
                Tombstone::read(LANDING, bad),
                Tombstone {
                    landing: LANDING.into(),
                    ..Tombstone::default()
                },
                "{bad}"
            );
        }
    }

    #[test]
    fn its_reference_is_apa_by_its_persistent_url() {
        let t = Tombstone {
            landing: LANDING.into(),
            name: Some("Ação & \"reação\"".into()),
            creators: vec!["Souza, João Pedro".into(), "INPE".into()],
            published: Some("2019-03-04".into()),
            ..Tombstone::default()
        };
        assert_eq!(
            t.citation("http://r.example/a.b/c/2020/01.02.03.04", "a.b/c/2020/01.02.03.04"),
            "Souza, J. P., & INPE. (2019). Ação & \"reação\". http://r.example/a.b/c/2020/01.02.03.04"
        );
        // Nothing read: the IBI stands for the title, no date.
        assert_eq!(
            Tombstone::default().citation(
                "http://r.example/x.y/z/2020/01.02.03.04",
                "x.y/z/2020/01.02.03.04"
            ),
            "x.y/z/2020/01.02.03.04. (n.d.). http://r.example/x.y/z/2020/01.02.03.04"
        );
    }

    #[test]
    fn its_json_ld_is_written_from_the_fields_read() {
        let t = Tombstone {
            landing: LANDING.into(),
            name: Some("A <b> & \"c\"".into()),
            creators: vec!["Souza, João".into(), "INPE".into()],
            published: Some("2019".into()),
            removed: Some("2021-02-03T04:05:06Z".into()),
            reason: Some("Withdrawn.".into()),
        };
        assert_eq!(
            t.json_ld("http://r.example/a.b/c/2020/01.02.03.04"),
            r#"{
  "@context": "https://schema.org/",
  "@type": "CreativeWork",
  "@id": "http://r.example/a.b/c/2020/01.02.03.04",
  "identifier": "http://r.example/a.b/c/2020/01.02.03.04",
  "url": "http://r.example/a.b/c/2020/01.02.03.04",
  "subjectOf": "http://a.example/x.y/z/2019/01.01.01.01/filelist/a.b/c/2020/01.02.03.04",
  "name": "A <b> & \"c\"",
  "creator": [
    {
      "@type": "Person",
      "name": "Souza, João"
    },
    {
      "@type": "Organization",
      "name": "INPE"
    }
  ],
  "datePublished": "2019",
  "creativeWorkStatus": "Deleted",
  "expires": "2021-02-03T04:05:06Z",
  "correction": {
    "@type": "CorrectionComment",
    "text": "Withdrawn."
  }
}
"#
        );
    }
}
