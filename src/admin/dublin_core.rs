//! The Dublin Core record of a metadata item (`new` with Dublin Core fields): the fields
//! checked, completed with the item's persistent URL and language and put in the order of
//! the elements, then written as an OAI-PMH `oai_dc` record (`oai_dc.xml`, the item's
//! `oai_dc` format) and as the item's page (`metadata.html`, its target), which links to
//! the item it describes by its persistent URL.

use super::AdminError;
use ::ibi::relation::Lang;
use ::ibi::Rep;

use ::ibi::dc::DC_ELEMENTS;

/// Refuses unknown elements and values XML cannot hold.
pub(crate) fn check_dc(dc: &[(String, String)]) -> Result<(), AdminError> {
    for (element, value) in dc {
        if !DC_ELEMENTS.contains(&element.as_str()) {
            return Err(AdminError::new(format!(
                "{element:?} is not a Dublin Core element (one of: {})",
                DC_ELEMENTS.join(", ")
            )));
        }
        if value.trim().is_empty() {
            return Err(AdminError::new(format!("dc {element} is empty")));
        }
        if let Some(c) = value
            .chars()
            .find(|&c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        {
            return Err(AdminError::new(format!(
                "dc {element} holds the control character {c:?}, which XML cannot carry"
            )));
        }
    }
    Ok(())
}

/// The fields in DC order, with the persistent URL and the language added when not given.
pub(crate) fn dc_fields(
    dc: &[(String, String)],
    persistent: &str,
    lang: Option<&Lang>,
) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = dc.to_vec();
    let has = |e: &str| dc.iter().any(|(k, _)| k == e);
    if !has("identifier") {
        all.push(("identifier".into(), persistent.to_string()));
    }
    if let (false, Some(l)) = (has("language"), lang) {
        all.push(("language".into(), l.to_string()));
    }
    let order = |e: &str| DC_ELEMENTS.iter().position(|x| *x == e).unwrap_or(99);
    all.sort_by_key(|(e, _)| order(e));
    all
}

/// The link of a metadata page (`metadata_html`) to the item it describes, by its
/// persistent URL `url`, in either language: what `check` looks for to know a page
/// `new` wrote.
pub(crate) fn described_link(url: &str) -> String {
    let url = xml_escape(url);
    format!("<a href=\"{url}\">{url}</a>")
}

/// `s` escaped for XML text and attribute values.
pub fn xml_escape(s: &str) -> String {
    ::ibi::markup::escape_markup(s, "&apos;")
}

/// An OAI-PMH `oai_dc` record.
pub fn oai_dc_xml(fields: &[(String, String)]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\"\n\
         \x20          xmlns:dc=\"http://purl.org/dc/elements/1.1/\"\n\
         \x20          xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n\
         \x20          xsi:schemaLocation=\"http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd\">\n",
    );
    for (e, v) in fields {
        out.push_str(&format!("  <dc:{e}>{}</dc:{e}>\n", xml_escape(v)));
    }
    out.push_str("</oai_dc:dc>\n");
    out
}

/// The metadata item's page (its target, a file served as it is written): the persistent
/// URL of the item it describes (`described`), linked, and the fields as a table, with
/// the face of the landing pages (`crate::face`: their style, header and footer). It is
/// written once, in one language: Portuguese (`lang="pt-BR"`) for a record whose
/// language is Portuguese, else English; the landing page of the metadata item, which
/// shows the same record, answers in the reader's language.
pub(crate) fn metadata_html(
    fields: &[(String, String)],
    rep: &Rep,
    described: &str,
    config: &crate::config::Config,
) -> String {
    use crate::face;
    use ::ibi::negotiate::PageLang;
    // The record's language as a reader's preference: the pages' one rule of which.
    let language: Vec<Lang> = fields
        .iter()
        .find(|(e, _)| e == "language")
        .and_then(|(_, l)| Lang::parse(l).ok())
        .into_iter()
        .collect();
    let lang = PageLang::of(&language);
    let title = fields
        .iter()
        .find(|(e, _)| e == "title")
        .map_or_else(|| rep.as_str().to_string(), |(_, v)| v.clone());
    let title = xml_escape(&title);
    let service_rep = match &config.service {
        ::ibi::Ibi::Rep(r) => Some(r.as_str()),
        ::ibi::Ibi::Ibip(_) => None,
    };
    // A logo of the Archive's own, relative to doc/ of the page (the six steps up from
    // `<baseurl>/col/<four components of the rep>/doc/` to the base URL): the page is
    // written once, and the Archive may move.
    let logo = match &config.site.logo {
        Some(crate::config::Logo::File(f)) => service_rep.map(|rep| {
            let mut url = String::from("../../../../../..");
            crate::layout::push_doc_url_path(&mut url, rep, f.as_bytes());
            url
        }),
        _ => face::logo_url(config, None),
    };
    let (heading, item_described) = match lang {
        PageLang::Pt => ("Metadados", "O item descrito"),
        PageLang::En => ("Metadata", "The item described"),
    };
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"{code}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{heading}: {title}</title>\n<style>{style}</style>\n</head>\n<body>\n{header}<main>\n\
         <h1>{title}</h1>\n<p>{item_described}: {link}</p>\n\
         <h2>{heading}</h2>\n<table class=\"record\">\n<tbody>\n",
        code = lang.code(),
        style = face::STYLE,
        header = face::header(config, logo.as_deref()),
        link = described_link(described)
    );
    for (e, v) in fields {
        let name = face::dc_label(e, lang).unwrap_or(e.as_str());
        // A licence by its name, a language by its name in the page's language.
        let value = match e.as_str() {
            "rights" => face::rights_html(v),
            "language" => format!(
                "<span title=\"{}\">{}</span>",
                xml_escape(v),
                xml_escape(&face::language_name(v, lang))
            ),
            _ => xml_escape(v),
        };
        out.push_str(&format!(
            "<tr><th scope=\"row\">{name}</th><td>{value}</td></tr>\n"
        ));
    }
    out.push_str("</tbody>\n</table>\n</main>\n");
    out.push_str(&face::footer(config, lang));
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oai_dc_escapes_and_orders() {
        let fields = dc_fields(
            &[
                ("creator".into(), "Ana & <Bia>".into()),
                ("title".into(), "\"Q\" 'x'".into()),
            ],
            "http://urlib.net/LK47B6W/362SFKH",
            Some(&Lang::parse("pt-br").unwrap()),
        );
        assert_eq!(
            oai_dc_xml(&fields).lines().skip(5).collect::<Vec<_>>(),
            [
                "  <dc:title>&quot;Q&quot; &apos;x&apos;</dc:title>",
                "  <dc:creator>Ana &amp; &lt;Bia&gt;</dc:creator>",
                "  <dc:identifier>http://urlib.net/LK47B6W/362SFKH</dc:identifier>",
                "  <dc:language>pt-BR</dc:language>",
                "</oai_dc:dc>",
            ]
        );
    }

    #[test]
    fn dc_refusals() {
        assert!(check_dc(&[("titel".into(), "x".into())])
            .unwrap_err()
            .message
            .starts_with("\"titel\" is not a Dublin Core element"));
        assert_eq!(
            check_dc(&[("title".into(), "a\u{1}".into())])
                .unwrap_err()
                .message,
            "dc title holds the control character '\\u{1}', which XML cannot carry"
        );
    }
}
