//! What a metadata file may be to be answered: at most [`MAX_METADATA`] bytes of
//! well-formed UTF-8 XML, one root element, nothing of the OAI-PMH namespace; read by
//! quick-xml and written again, checked by xml-rs where an answer puts it. And the
//! formats whose schema and namespace are known, the others' told by their root element.

use quick_xml::events::Event;
use quick_xml::Writer;

use crate::item::Item;
use crate::oai::document::{xml_chars, OAI_NS, XSI_NS};
use ::ibi::shown;

/// Largest metadata file answered.
pub(crate) const MAX_METADATA: u64 = 1024 * 1024;

/// The formats whose schema and namespace are known; the others are announced with what
/// their file's root element declares.
const KNOWN_FORMATS: &[(&str, &str, &str)] = &[
    (
        "oai_dc",
        "http://www.openarchives.org/OAI/2.0/oai_dc.xsd",
        "http://www.openarchives.org/OAI/2.0/oai_dc/",
    ),
    (
        "marcxml",
        "http://www.loc.gov/standards/marcxml/schema/MARC21slim.xsd",
        "http://www.loc.gov/MARC21/slim",
    ),
    (
        "mods",
        "http://www.loc.gov/standards/mods/v3/mods-3-8.xsd",
        "http://www.loc.gov/mods/v3",
    ),
    (
        "oai_datacite",
        "http://schema.datacite.org/oai/oai-1.1/oai.xsd",
        "http://schema.datacite.org/oai/oai-1.1/",
    ),
    (
        "datacite",
        "http://schema.datacite.org/meta/kernel-4/metadata.xsd",
        "http://datacite.org/schema/kernel-4",
    ),
];

/// The schema and namespace of a format of [`KNOWN_FORMATS`].
pub(super) fn known_schema(prefix: &str) -> Option<(String, String)> {
    KNOWN_FORMATS
        .iter()
        .find(|(p, _, _)| *p == prefix)
        .map(|(_, schema, ns)| (schema.to_string(), ns.to_string()))
}

/// The metadata file `file` of `item` (opened as it is served), read (at most
/// [`MAX_METADATA`] bytes) and written again by quick-xml: its one root element and what
/// it holds, comments kept; the XML declaration, a document type and processing
/// instructions left out. Refused: not UTF-8, a character XML cannot hold, an entity
/// other than the five of XML, not one well-formed element, an element of the OAI-PMH
/// namespace ([`well_formed_in_metadata`]).
pub(super) fn read_metadata(item: &Item, file: &str) -> Result<Vec<u8>, String> {
    let dir = item.handle.as_ref().ok_or("no directory")?;
    let text = dir
        .doc_text(file.as_bytes(), MAX_METADATA)
        .map_err(|e| e.to_string())?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if xml_chars(text).len() != text.len() {
        return Err("holds a character XML cannot hold".into());
    }
    let (out, undeclare) = copy_metadata(text, false)?;
    // What is in no namespace in the file stays in none inside `metadata`, whose default
    // is the OAI-PMH namespace: written again, the root undeclaring it.
    let out = if undeclare {
        copy_metadata(text, true)?.0
    } else {
        out
    };
    well_formed_in_metadata(&out)?;
    Ok(out)
}

/// The XML of a metadata file (`text`) written again by quick-xml, checked as
/// [`read_metadata`] says, its root given `xmlns=""` when `undeclare`; and whether it
/// should be (an element has no prefix, and the root declares no default namespace).
fn copy_metadata(text: &str, undeclare: bool) -> Result<(Vec<u8>, bool), String> {
    use quick_xml::Reader;
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut out = Writer::new(Vec::with_capacity(text.len()));
    let mut depth = 0usize;
    let mut roots = 0usize;
    // Whether the root declares a default namespace, whether an element has no prefix.
    let (mut root_default_ns, mut unprefixed) = (false, false);
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("not well-formed XML: {e}"))?;
        let inside = depth > 0;
        match &event {
            Event::Eof => break,
            Event::Decl(d) => {
                if let Some(Ok(enc)) = d.encoding() {
                    if !enc.eq_ignore_ascii_case(b"utf-8") {
                        return Err("not declared UTF-8".into());
                    }
                }
                continue;
            }
            Event::DocType(_) | Event::PI(_) => continue,
            Event::Start(e) | Event::Empty(e) => {
                if depth == 0 {
                    roots += 1;
                    if roots > 1 {
                        return Err("more than one root element".into());
                    }
                }
                root_default_ns |= read_attributes(e)? && depth == 0;
                unprefixed |= e.name().prefix().is_none();
                if depth == 0 && undeclare {
                    let mut root = e.clone().into_owned();
                    root.push_attribute(("xmlns", ""));
                    let root = match event {
                        Event::Start(_) => Event::Start(root),
                        _ => Event::Empty(root),
                    };
                    out.write_event(root).map_err(|e| e.to_string())?;
                    if matches!(event, Event::Start(_)) {
                        depth += 1;
                    }
                    continue;
                }
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(t) => {
                if !inside {
                    if t.iter().all(|b| b.is_ascii_whitespace()) {
                        continue;
                    }
                    return Err("text outside the root element".into());
                }
            }
            Event::GeneralRef(r) => {
                if !inside {
                    return Err("a reference outside the root element".into());
                }
                check_reference(r)?;
            }
            Event::CData(_) | Event::Comment(_) => {
                if !inside {
                    continue;
                }
            }
        }
        out.write_event(event).map_err(|e| e.to_string())?;
    }
    if roots != 1 || depth != 0 {
        return Err("not one well-formed element".into());
    }
    Ok((out.into_inner(), unprefixed && !root_default_ns))
}

/// The attributes of an element of a metadata file read, each value unescaped; whether
/// one declares the default namespace.
fn read_attributes(e: &quick_xml::events::BytesStart<'_>) -> Result<bool, String> {
    let mut default_ns = false;
    for a in e.attributes() {
        let a = a.map_err(|e| format!("not well-formed XML: {e}"))?;
        a.unescape_value()
            .map_err(|e| format!("an attribute that does not read: {e}"))?;
        default_ns |= a.key.as_ref() == b"xmlns";
    }
    Ok(default_ns)
}

/// Whether a reference in a metadata file is one XML knows: a character XML can hold, or
/// one of its five entities.
fn check_reference(r: &quick_xml::events::BytesRef<'_>) -> Result<(), String> {
    let known = if r.is_char_ref() {
        matches!(r.resolve_char_ref(), Ok(Some(c)) if xml_chars(&c.to_string()).len() == c.len_utf8())
    } else {
        let name = r.decode().map_err(|e| e.to_string())?;
        quick_xml::escape::resolve_predefined_entity(&name).is_some()
    };
    if known {
        Ok(())
    } else {
        Err("a reference to an entity that is not one of XML's".into())
    }
}

/// Whether `fragment` is well-formed XML with namespaces where an answer puts it, inside
/// `metadata` (the OAI-PMH namespace by default, `xsi` declared): read by xml-rs, which
/// judges what quick-xml's reader lets through (names, attributes, `]]>` in text, `--`
/// in comments, character references, prefixes not declared). An element of the
/// OAI-PMH namespace in it is refused: a harvester would read a `resumptionToken`, an
/// `error` or a `record` there as part of the answer itself (a forged token, a forged
/// end of the list), whatever prefix or default namespace put it there.
fn well_formed_in_metadata(fragment: &[u8]) -> Result<(), String> {
    let head = format!(r#"<metadata xmlns="{OAI_NS}" xmlns:xsi="{XSI_NS}">"#);
    let whole = [head.as_bytes(), fragment, b"</metadata>"].concat();
    let mut wrapper = true;
    for event in xml::EventReader::new(whole.as_slice()) {
        let event = event.map_err(|e| format!("not well-formed XML: {}", e.msg()))?;
        if let xml::reader::XmlEvent::StartElement { name, .. } = event {
            if !std::mem::take(&mut wrapper) && name.namespace.as_deref() == Some(OAI_NS) {
                return Err(format!(
                    "holds an element of the OAI-PMH namespace ({}), which a harvester would take for part of the answer",
                    shown(&name.local_name)
                ));
            }
        }
    }
    Ok(())
}

/// Whether the metadata file `file` of `item` can be answered (see [`read_metadata`]).
pub(crate) fn check_metadata(item: &Item, file: &str) -> Result<(), String> {
    read_metadata(item, file).map(|_| ())
}

/// The schema and namespace of a metadata file's root element: its namespace as resolved
/// (whatever its prefix), and the schema `xsi:schemaLocation` (the attribute of the XML
/// Schema instance namespace, whatever its prefix) pairs with it, empty when none does.
/// `None` when the root is in no namespace.
pub(super) fn root_schema(xml: &[u8]) -> Option<(String, String)> {
    use quick_xml::name::{Namespace, ResolveResult};
    let mut reader = quick_xml::NsReader::from_reader(xml);
    loop {
        let (resolved, event) = reader.read_resolved_event().ok()?;
        let ns = match resolved {
            ResolveResult::Bound(Namespace(ns)) => String::from_utf8(ns.to_vec()).ok(),
            _ => None,
        };
        match event {
            Event::Start(e) | Event::Empty(e) => {
                let ns = ns?;
                let mut schema = String::new();
                for a in e.attributes().filter_map(Result::ok) {
                    let (attr_ns, local) = reader.resolve_attribute(a.key);
                    let is_xsi = matches!(attr_ns, ResolveResult::Bound(Namespace(n)) if n == XSI_NS.as_bytes());
                    if !is_xsi || local.as_ref() != b"schemaLocation" {
                        continue;
                    }
                    let Ok(locations) = a.unescape_value() else {
                        continue;
                    };
                    let words: Vec<&str> = locations.split_whitespace().collect();
                    if let Some(pair) = words.chunks(2).find(|p| p.first() == Some(&ns.as_str())) {
                        schema = pair.get(1).map_or_else(String::new, |s| s.to_string());
                    }
                }
                return Some((schema, ns));
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_element_tells_its_schema() {
        // Whatever the prefixes, the namespace as resolved; no schema given: empty.
        let xml = br#"<record xmlns="urn:example:a" xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:schemaLocation="urn:example:other http://example.org/o.xsd urn:example:a http://example.org/a.xsd"/>"#;
        assert_eq!(
            root_schema(xml),
            Some(("http://example.org/a.xsd".into(), "urn:example:a".into()))
        );
        assert_eq!(
            root_schema(br#"<n:note xmlns:n="urn:example:note">x</n:note>"#),
            Some((String::new(), "urn:example:note".into()))
        );
        let xml = br#"<m:mods xmlns:m="http://www.loc.gov/mods/v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.loc.gov/mods/v3 http://example.org/mods.xsd"/>"#;
        assert_eq!(
            root_schema(xml),
            Some((
                "http://example.org/mods.xsd".into(),
                "http://www.loc.gov/mods/v3".into()
            ))
        );
        assert_eq!(root_schema(b"<a/>"), None);
    }
}
