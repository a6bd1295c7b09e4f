//! The XML document of an answer, written by quick-xml's writer: the `OAI-PMH` root,
//! its `responseDate` and `request`, an `error`, and the elements the verbs write; text
//! escaped, and the characters XML cannot hold dropped.

use std::borrow::Cow;

use chrono::DateTime;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use crate::oai::request::OaiError;

pub(super) const OAI_NS: &str = "http://www.openarchives.org/OAI/2.0/";
const OAI_SCHEMA: &str =
    "http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd";
pub(super) const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// An answer being written.
pub(super) struct Document {
    w: Writer<Vec<u8>>,
    base_url: String,
}

impl Document {
    pub(super) fn new(now: i64, base_url: &str) -> Document {
        let mut d = Document {
            w: Writer::new(Vec::with_capacity(16 * 1024)),
            base_url: base_url.to_string(),
        };
        d.start(now);
        d
    }

    fn start(&mut self, now: i64) {
        let _ = self
            .w
            .write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));
        self.text("\n");
        let root = BytesStart::new("OAI-PMH").with_attributes([
            ("xmlns", OAI_NS),
            ("xmlns:xsi", XSI_NS),
            ("xsi:schemaLocation", OAI_SCHEMA),
        ]);
        let _ = self.w.write_event(Event::Start(root));
        self.text("\n");
        self.element("responseDate", &datestamp(now));
    }

    /// Starts again (an error found after some of the answer was written).
    pub(super) fn restart(&mut self, now: i64) {
        self.w.get_mut().clear();
        self.start(now);
    }

    pub(super) fn request(&mut self, attributes: &[(&str, &str)]) {
        let clean: Vec<(&str, Cow<'_, str>)> =
            attributes.iter().map(|(n, v)| (*n, xml_chars(v))).collect();
        let start =
            BytesStart::new("request").with_attributes(clean.iter().map(|(n, v)| (*n, v.as_ref())));
        let _ = self.w.write_event(Event::Start(start));
        let base = self.base_url.clone();
        self.text(&base);
        self.end("request");
    }

    pub(super) fn error(&mut self, e: &OaiError) {
        let start = BytesStart::new("error").with_attributes([("code", e.code)]);
        let _ = self.w.write_event(Event::Start(start));
        self.text(&e.message);
        self.end("error");
    }

    pub(super) fn open(&mut self, name: &str) {
        let _ = self.w.write_event(Event::Start(BytesStart::new(name)));
    }

    pub(super) fn open_with(&mut self, name: &str, attributes: &[(&str, &str)]) {
        let start = BytesStart::new(name).with_attributes(attributes.iter().copied());
        let _ = self.w.write_event(Event::Start(start));
    }

    pub(super) fn end(&mut self, name: &str) {
        let _ = self.w.write_event(Event::End(BytesEnd::new(name)));
        self.text("\n");
    }

    pub(super) fn empty_with(&mut self, name: &str, attributes: &[(&str, &str)]) {
        let start = BytesStart::new(name).with_attributes(attributes.iter().copied());
        let _ = self.w.write_event(Event::Empty(start));
        self.text("\n");
    }

    pub(super) fn text(&mut self, s: &str) {
        // `<`, `>` and `&` escaped (quotes need none in text).
        let s = xml_chars(s);
        let escaped = quick_xml::escape::partial_escape(s.as_ref());
        let _ = self
            .w
            .write_event(Event::Text(BytesText::from_escaped(escaped)));
    }

    pub(super) fn element(&mut self, name: &str, value: &str) {
        self.open(name);
        self.text(value);
        self.end(name);
    }

    /// Appends an XML fragment that quick-xml's writer has already written (a record's
    /// metadata, checked whole before).
    pub(super) fn fragment(&mut self, xml: &[u8]) {
        self.w.get_mut().extend_from_slice(xml);
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        self.end("OAI-PMH");
        self.w.into_inner()
    }
}

/// `s` with the characters XML 1.0 cannot hold dropped (controls but tab, newline and
/// carriage return; U+FFFE and U+FFFF).
pub(super) fn xml_chars(s: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r') && (c as u32) < 0x20)
            || c == '\u{fffe}'
            || c == '\u{ffff}'
    };
    if s.chars().any(bad) {
        Cow::Owned(s.chars().filter(|&c| !bad(c)).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// POSIX second `t` as an OAI-PMH datestamp, `YYYY-MM-DDThh:mm:ssZ`.
pub(super) fn datestamp(t: i64) -> String {
    DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_cannot_hold_controls() {
        assert_eq!(xml_chars("a\u{1}b\tc\u{ffff}"), "ab\tc");
        assert!(matches!(xml_chars("plain é"), Cow::Borrowed(_)));
    }
}
