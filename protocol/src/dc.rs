//! Reading an item's Dublin Core record, its metadata item's `oai_dc` format (the
//! OAI-PMH record `ibi-archive new` writes, or one deposited), for its landing page and
//! its citations ([`crate::cite`]).
//!
//! Bounded: a record larger than [`MAX_RECORD`] bytes is not read, and at most
//! [`MAX_VALUES`] values of [`MAX_VALUE`] bytes each are kept. Only the fifteen elements
//! of the Dublin Core namespace count, wherever they are; anything else is skipped.

use quick_xml::events::Event;
use quick_xml::name::{Namespace, ResolveResult};
use quick_xml::NsReader;

/// The fifteen elements of Dublin Core (simple), in the order oai_dc.xml lists them.
pub const DC_ELEMENTS: [&str; 15] = [
    "title",
    "creator",
    "subject",
    "description",
    "publisher",
    "contributor",
    "date",
    "type",
    "format",
    "identifier",
    "source",
    "language",
    "relation",
    "coverage",
    "rights",
];

/// Largest record read.
pub const MAX_RECORD: u64 = 64 * 1024;
/// Most values kept, all elements together.
pub const MAX_VALUES: usize = 64;
/// Longest value kept, in bytes (a longer one is cut at a character boundary).
pub const MAX_VALUE: usize = 1000;

/// The namespace of the Dublin Core elements.
const DC_NS: &[u8] = b"http://purl.org/dc/elements/1.1/";

/// The values of a Dublin Core record, in the order written, each under its element's
/// name (`title`, `creator`…), white space collapsed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DublinCore {
    pub values: Vec<(&'static str, String)>,
}

impl DublinCore {
    /// Every value of `element`, in the order written.
    pub fn all(&self, element: &str) -> impl Iterator<Item = &str> {
        let element = element.to_string();
        self.values
            .iter()
            .filter(move |(e, _)| *e == element)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of `element`.
    pub fn first(&self, element: &str) -> Option<&str> {
        self.all(element).next()
    }

    /// Reads a record; the error says what is wrong with the XML.
    pub fn parse(xml: &str) -> Result<DublinCore, String> {
        let mut reader = NsReader::from_str(xml);
        let mut dc = DublinCore::default();
        loop {
            let (ns, event) = reader
                .read_resolved_event()
                .map_err(|e| format!("not well-formed XML: {e}"))?;
            let in_dc = matches!(ns, ResolveResult::Bound(Namespace(n)) if n == DC_NS);
            match event {
                Event::Start(e) => {
                    let element = DC_ELEMENTS
                        .iter()
                        .find(|el| el.as_bytes() == e.local_name().as_ref())
                        .filter(|_| in_dc);
                    let Some(element) = element else {
                        continue;
                    };
                    let text = character_data(&mut reader)?;
                    let Some(text) = text else {
                        continue;
                    };
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    if !text.is_empty() && dc.values.len() < MAX_VALUES {
                        let kept = crate::text::prefix(&text, MAX_VALUE).to_string();
                        dc.values.push((element, kept));
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        Ok(dc)
    }
}

/// The character data of the element whose start `reader` has just read, up to its end:
/// its text, references to the predefined entities and to characters resolved, CDATA
/// sections as they are, the text of the elements inside; comments and processing
/// instructions are not text. None (the element read all the same) when it refers to an
/// entity the record defines (none is expanded) or to a character XML does not allow.
fn character_data(reader: &mut NsReader<&[u8]>) -> Result<Option<String>, String> {
    let bad = |e: &dyn std::fmt::Display| format!("not well-formed XML: {e}");
    let mut text = String::new();
    let mut readable = true;
    let mut depth = 0usize;
    loop {
        match reader.read_event().map_err(|e| bad(&e))? {
            Event::Start(_) => depth += 1,
            Event::End(_) if depth == 0 => break,
            Event::End(_) => depth -= 1,
            Event::Text(t) => text.push_str(&t.decode().map_err(|e| bad(&e))?),
            Event::CData(t) => text.push_str(&t.decode().map_err(|e| bad(&e))?),
            Event::GeneralRef(r) => {
                let name = r.decode().map_err(|e| bad(&e))?;
                let c = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c),
                    Ok(None) => quick_xml::escape::resolve_predefined_entity(&name)
                        .and_then(|s| s.chars().next()),
                    Err(_) => None,
                };
                match c {
                    Some(c) if !c.is_control() || c.is_whitespace() => text.push(c),
                    _ => readable = false,
                }
            }
            Event::Eof => return Err(bad(&"the record ends inside an element")),
            _ => {}
        }
    }
    Ok(readable.then_some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_elements_of_the_dc_namespace_in_order() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"
           xmlns:dc="http://purl.org/dc/elements/1.1/">
  <dc:title>Relat&#243;rio &amp; <!-- c -->dados
     finais</dc:title>
  <dc:creator>Banon, Gerald</dc:creator>
  <dc:creator>INPE</dc:creator>
  <dc:creator>  </dc:creator>
  <other:title xmlns:other="http://example.org/">not DC</other:title>
  <title>no namespace</title>
  <dc:nonsense>not an element</dc:nonsense>
  <d:date xmlns:d="http://purl.org/dc/elements/1.1/">2012-06</d:date>
</oai_dc:dc>"#;
        let dc = DublinCore::parse(xml).unwrap();
        assert_eq!(
            dc.values,
            [
                ("title", "Relatório & dados finais".to_string()),
                ("creator", "Banon, Gerald".to_string()),
                ("creator", "INPE".to_string()),
                ("date", "2012-06".to_string()),
            ]
        );
        assert_eq!(dc.first("date"), Some("2012-06"));
        assert_eq!(dc.all("creator").count(), 2);
        assert_eq!(dc.first("language"), None);
    }

    /// The value of an element is its character data, as XML defines it: CDATA sections
    /// are text as they are, comments and processing instructions are none of it, an
    /// element inside gives its text; a reference to an entity the record does not define
    /// (nothing is expanded, nothing fetched) leaves the value out, and so does a
    /// character XML does not allow.
    #[test]
    fn the_value_is_the_character_data() {
        let xml = r#"<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;"><!ENTITY ext SYSTEM "file:///etc/passwd">]>
<r xmlns:dc="http://purl.org/dc/elements/1.1/">
  <dc:title><![CDATA[AT&T <b>and</b>]]> <!-- not text --> &lt;x&gt; &#233;<?pi no?></dc:title>
  <dc:creator><![CDATA[Banon, Gerald]]></dc:creator>
  <dc:creator>&b;</dc:creator>
  <dc:creator>&ext;</dc:creator>
  <dc:subject>A <i>nested</i> element</dc:subject>
  <dc:description>bell&#7;</dc:description>
  <dc:date><!-- only a comment --></dc:date>
</r>"#;
        let dc = DublinCore::parse(xml).unwrap();
        assert_eq!(
            dc.values,
            [
                ("title", "AT&T <b>and</b> <x> é".to_string()),
                ("creator", "Banon, Gerald".to_string()),
                ("subject", "A nested element".to_string()),
            ]
        );
    }

    #[test]
    fn bounded_and_faults_said() {
        let many = format!(
            "<r xmlns:dc=\"http://purl.org/dc/elements/1.1/\">{}<dc:title>{}</dc:title></r>",
            "<dc:subject>s</dc:subject>".repeat(100),
            "é".repeat(600)
        );
        let dc = DublinCore::parse(&many).unwrap();
        assert_eq!(dc.values.len(), MAX_VALUES);
        let long = format!(
            "<r xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>{}</dc:title></r>",
            "é".repeat(600)
        );
        let dc = DublinCore::parse(&long).unwrap();
        assert_eq!(dc.first("title"), Some("é".repeat(500).as_str()));
        assert!(DublinCore::parse("<r><a></r>")
            .unwrap_err()
            .starts_with("not well-formed XML: "));
    }
}
