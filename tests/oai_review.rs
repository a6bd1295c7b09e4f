//! The OAI-PMH data provider against a hostile harvester and a careless administrator:
//! forged resumption tokens, metadata files that quick-xml reads but that are not
//! well-formed XML, records left out of a page. Through `ibi-archive query`, which prints
//! the CGI's body.

use std::path::{Path, PathBuf};

use common::run_cmd;
use sha2::{Digest, Sha256};

/// The sample's first metadata item by datestamp, and its OAI identifier.
const FIRST: &str = "sid.inpe.br/mtc-m19/2013/09.04.12.27.58";
const FIRST_ID: &str = "http://localhost:8090/sid.inpe.br/mtc-m19/2013/09.04.12.27.58";

fn archive(page_size: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    std::fs::create_dir_all(root.join("var")).unwrap();
    let mut toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    toml.push_str(&format!("\n[oai]\npage_size = {page_size}\n"));
    std::fs::write(root.join("archive.toml"), toml).unwrap();
    // var/oai-records, as check writes it.
    let (code, out, err) = run_cmd(&["check", "--root", root.to_str().unwrap()]);
    // The copy's var/ is root's, not the web server's user's: that fault only.
    assert!(code <= 1, "{out}{err}");
    assert!(root.join("var/oai-records").exists(), "{out}{err}");
    (tmp, root)
}

fn query(root: &Path, qs: &str) -> String {
    let (code, out, err) = run_cmd(&["query", "--root", root.to_str().unwrap(), qs]);
    assert_eq!(code, 0, "{qs}: {err}");
    assert!(!err.contains("panicked"), "{qs}: {err}");
    out
}

/// The error code of an answer, if it is an error.
fn error_code(xml: &str) -> Option<&str> {
    let rest = xml.split("<error code=\"").nth(1)?;
    rest.split('"').next()
}

/// A token as the provider wrote them before they were keyed: the fields, then the first
/// 8 hex digits of their SHA-256 (a checksum anyone can compute).
fn forged(body: &str) -> String {
    let sum = Sha256::digest(body.as_bytes());
    format!(
        "{body},{:02x}{:02x}{:02x}{:02x}",
        sum[0], sum[1], sum[2], sum[3]
    )
}

#[test]
fn a_forged_token_with_the_largest_cursor_or_a_negative_size_is_refused() {
    let (_tmp, root) = archive(1);
    for (cursor, total) in [("18446744073709551615", "-"), ("1", "-1"), ("0", "-5")] {
        let token = forged(&format!(
            "1,I,oai_dc,-,-,{cursor},{total},i,1380897135,{FIRST}"
        ));
        let out = query(
            &root,
            &format!("verb=ListIdentifiers&resumptionToken={token}"),
        );
        assert_eq!(
            error_code(&out),
            Some("badResumptionToken"),
            "{token}: {out}"
        );
    }
}

fn put_metadata(root: &Path, xml: &[u8]) {
    std::fs::write(root.join("col").join(FIRST).join("doc/oai_dc.xml"), xml).unwrap();
}

#[test]
fn metadata_that_is_not_well_formed_xml_is_left_out() {
    let (_tmp, root) = archive(100);
    // Each read by quick-xml without a fault, and none well-formed (or namespace-
    // well-formed) XML: copied into an answer, each made the whole page unreadable.
    let bad: &[&[u8]] = &[
        b"<r><1x/></r>",
        b"<r><a&b/></r>",
        b"<r a=\"<\"/>",
        b"<r a=\"&#x1;\"/>",
        b"<r a=\"&#xFFFE;\"/>",
        b"<r a=\"1\"b=\"2\"/>",
        b"<r>]]></r>",
        b"<r><!-- a -- b --></r>",
        b"<r><-a/></r>",
        b"<r><.c/></r>",
        b"<r\xc2\xa0/>",
        b"<r><p:x/></r>",
        b"<r p:a=\"1\"/>",
        b"<r><:a/></r>",
        b"<r xmlns:p=\"\"/>",
        b"<r xmlns:xmlns=\"u\"/>",
        b"<r xmlns:xml=\"http://bad\"/>",
        b"<r xmlns:a=\"u\" xmlns:b=\"u\"><x a:k=\"1\" b:k=\"2\"/></r>",
    ];
    let get = format!("verb=GetRecord&identifier={FIRST_ID}&metadataPrefix=oai_dc");
    for xml in bad {
        put_metadata(&root, xml);
        let out = query(&root, &get);
        assert_eq!(
            error_code(&out),
            Some("cannotDisseminateFormat"),
            "{}: {out}",
            String::from_utf8_lossy(xml)
        );
        let list = query(&root, "verb=ListRecords&metadataPrefix=oai_dc");
        assert!(
            !list.contains(FIRST_ID),
            "{}: {list}",
            String::from_utf8_lossy(xml)
        );
    }
    // Well-formed, with what the provider drops or keeps, still answered.
    let good: &[&[u8]] = &[
        b"<?xml version=\"1.0\"?>\n<!DOCTYPE r>\n<r><?pi x?><![CDATA[<]]>&amp;&#65;</r>\n",
        b"<r xmlns:p=\"u\"><p:x p:a=\"1\" xsi:type=\"t\"/></r>",
    ];
    for xml in good {
        put_metadata(&root, xml);
        let out = query(&root, &get);
        assert_eq!(error_code(&out), None, "{out}");
        assert!(out.contains("<metadata><r"), "{out}");
    }
}

#[test]
fn a_list_whose_only_record_is_left_out_is_no_records_match() {
    let (_tmp, root) = archive(100);
    put_metadata(&root, b"<r>");
    // The first metadata item's datestamp, 2013-10-04T14:32:15Z: it alone is in the list.
    let out = query(
        &root,
        "verb=ListRecords&metadataPrefix=oai_dc&until=2013-10-04T14:32:15Z",
    );
    assert_eq!(error_code(&out), Some("noRecordsMatch"), "{out}");
    assert!(!out.contains("<ListRecords>"), "{out}");
}

#[test]
fn metadata_in_no_namespace_stays_in_none() {
    let (_tmp, root) = archive(100);
    let get = format!("verb=GetRecord&identifier={FIRST_ID}&metadataPrefix=oai_dc");
    // Standalone, neither r nor t is in a namespace; inside `metadata` they would be in
    // the OAI-PMH one, its default.
    put_metadata(&root, b"<r><t>x</t></r>");
    let out = query(&root, &get);
    assert!(
        out.contains("<metadata><r xmlns=\"\"><t>x</t></r></metadata>"),
        "{out}"
    );
    put_metadata(&root, b"<p:r xmlns:p=\"u\"><t/></p:r>");
    let out = query(&root, &get);
    assert!(
        out.contains("<metadata><p:r xmlns:p=\"u\" xmlns=\"\"><t/></p:r></metadata>"),
        "{out}"
    );
    // A default namespace of its own is kept as it is, and every element prefixed needs
    // nothing.
    put_metadata(&root, b"<p:r xmlns:p=\"u\"><p:t/></p:r>");
    let out = query(&root, &get);
    assert!(
        out.contains("<metadata><p:r xmlns:p=\"u\"><p:t/></p:r></metadata>"),
        "{out}"
    );
    put_metadata(&root, b"<r xmlns=\"u\"><t/></r>");
    let out = query(&root, &get);
    assert!(
        out.contains("<metadata><r xmlns=\"u\"><t/></r></metadata>"),
        "{out}"
    );
}

/// An index with a line that does not read (a disk fault, a hand's edit) is built again,
/// with one line in the log, and the page answered from the new one.
#[test]
fn an_index_that_does_not_read_is_built_again() {
    let (_tmp, root) = archive(1);
    let list = "verb=ListIdentifiers&metadataPrefix=oai_dc";
    let first = query(&root, list);
    let index = std::fs::read_to_string(root.join("var/oai-records")).unwrap();
    let broken = index.replacen("oai_dc\n", "oai_dc\ngarbage\n", 1);
    assert_ne!(broken, index);
    std::fs::write(root.join("var/oai-records"), broken).unwrap();
    let (code, out, err) = run_cmd(&["query", "--root", root.to_str().unwrap(), list]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(error_code(&out), None, "{out}");
    assert_eq!(
        out.split("<ListIdentifiers>").nth(1),
        first.split("<ListIdentifiers>").nth(1)
    );
    assert!(
        err.contains("is not in the format; it is built again"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("var/oai-records")).unwrap(),
        index
    );
}

/// Elements of the OAI-PMH namespace inside a record's metadata (a `resumptionToken`, an
/// `error`, a root in that namespace), whatever their prefix or default namespace, would
/// be read by a harvester as part of the answer itself: such a file is refused when it
/// would be served (left out of every answer, one line in the log) and `check` reports
/// it. Elements in no namespace, whatever their names, are the record's own.
#[test]
fn metadata_holding_elements_of_the_oai_pmh_namespace_is_left_out() {
    let (_tmp, root) = archive(100);
    let oai = "http://www.openarchives.org/OAI/2.0/";
    let dc = "xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"";
    let get = format!("verb=GetRecord&identifier={FIRST_ID}&metadataPrefix=oai_dc");
    let hostile = [
        format!("<oai_dc:dc {dc}><dc:title>t</dc:title><o:resumptionToken xmlns:o=\"{oai}\" cursor=\"0\">forged</o:resumptionToken></oai_dc:dc>"),
        format!("<oai_dc:dc {dc}><error xmlns=\"{oai}\" code=\"badResumptionToken\">forged</error></oai_dc:dc>"),
        format!("<dc xmlns=\"{oai}\"><title>forged</title></dc>"),
        format!("<oai_dc:dc {dc} xmlns:o=\"{oai}\"><dc:title>t</dc:title><x xmlns=\"urn:x\"><o:record>forged</o:record></x></oai_dc:dc>"),
    ];
    for xml in &hostile {
        put_metadata(&root, xml.as_bytes());
        let (code, out, err) = run_cmd(&["query", "--root", root.to_str().unwrap(), &get]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            error_code(&out),
            Some("cannotDisseminateFormat"),
            "{xml}: {out}"
        );
        assert!(
            err.contains("holds an element of the OAI-PMH namespace"),
            "{xml}: {err}"
        );
        let list = query(&root, "verb=ListRecords&metadataPrefix=oai_dc");
        assert!(
            !list.contains("forged") && !list.contains(FIRST_ID),
            "{xml}: {list}"
        );
        let (_, out, _) = run_cmd(&["check", "--root", root.to_str().unwrap()]);
        assert!(
            out.contains(&format!(
                "col/{FIRST}/item.toml: formats.oai_dc: oai_dc.xml: holds an element of the OAI-PMH namespace"
            )),
            "{xml}: {out}"
        );
    }
    // In no namespace, or in the record's own, the same names are the record's.
    for xml in [
        "<record><header><identifier>mine</identifier></header><resumptionToken/></record>"
            .to_string(),
        format!(
            "<oai_dc:dc {dc}><dc:title>t</dc:title><error xmlns=\"urn:x\">mine</error></oai_dc:dc>"
        ),
    ] {
        put_metadata(&root, xml.as_bytes());
        let out = query(&root, &get);
        assert_eq!(error_code(&out), None, "{xml}: {out}");
        assert!(out.contains("mine"), "{out}");
    }
}

/// The text of the first resumption token of an answer.
fn token_of(xml: &str) -> String {
    xml.split("<resumptionToken")
        .nth(1)
        .and_then(|t| t.split('>').nth(1))
        .and_then(|t| t.split('<').next())
        .unwrap_or_else(|| panic!("no token in {xml}"))
        .to_string()
}

fn resume(verb: &str, token: &str) -> String {
    format!(
        "verb={verb}&resumptionToken={}",
        percent_encoding::utf8_percent_encode(token, percent_encoding::NON_ALPHANUMERIC)
    )
}

/// A resumption token is keyed with the Archive's secret (HMAC-SHA256 over the Archive's
/// identity and the list's arguments): one forged from its text (with the checksum anyone
/// could compute), one altered in any field, one of the other list verb, and one given
/// by another Archive — a copy of this one with a secret of its own, or with this
/// secret but another base URL — are each a badResumptionToken, and a forged size never
/// reaches completeListSize.
#[test]
fn a_token_is_keyed_to_its_archive_and_its_list() {
    let (tmp, root) = archive(1);
    let first = query(&root, "verb=ListIdentifiers&metadataPrefix=oai_dc");
    assert!(first.contains("completeListSize=\"4\""), "{first}");
    let token = token_of(&first);
    let second = query(&root, &resume("ListIdentifiers", &token));
    assert_eq!(error_code(&second), None, "{second}");
    assert!(second.contains("cursor=\"1\""), "{second}");
    assert_eq!(
        error_code(&query(&root, &resume("ListRecords", &token))),
        Some("badResumptionToken")
    );
    // Forged: a list of a million records, from the second record on.
    let forged = forged(&format!("1,I,oai_dc,-,-,1,1000000,i,1380897135,{FIRST}"));
    let out = query(&root, &resume("ListIdentifiers", &forged));
    assert_eq!(error_code(&out), Some("badResumptionToken"), "{out}");
    assert!(!out.contains("completeListSize"), "{out}");
    // Each field altered, its check kept.
    let fields: Vec<&str> = token.split(',').collect();
    for i in 0..fields.len() - 1 {
        let mut altered: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        altered[i] = match fields[i] {
            "-" => "1".to_string(),
            f if f.bytes().all(|b| b.is_ascii_digit()) => {
                format!("{}", f.parse::<u64>().unwrap() + 1)
            }
            f => format!("{f}x"),
        };
        let altered = altered.join(",");
        let out = query(&root, &resume("ListIdentifiers", &altered));
        assert_eq!(
            error_code(&out),
            Some("badResumptionToken"),
            "{altered}: {out}"
        );
    }
    // Another Archive: the same records and archive.toml, another secret.
    let other = tmp.path().join("other");
    common::copy_tree(&root, &other);
    std::fs::remove_file(other.join("var/urlkey.secret")).unwrap();
    let out = query(&other, &resume("ListIdentifiers", &token));
    assert_eq!(error_code(&out), Some("badResumptionToken"), "{out}");
    // The same secret, another Archive (its base URL).
    let third = tmp.path().join("third");
    common::copy_tree(&root, &third);
    let toml = std::fs::read_to_string(third.join("archive.toml")).unwrap();
    let toml = toml.replace(
        "archiveaddress ",
        "baseurl = \"http://other.example.org\"\narchiveaddress ",
    );
    std::fs::write(third.join("archive.toml"), toml).unwrap();
    assert!(query(&third, "verb=Identify").contains("<baseURL>http://other.example.org/"));
    let out = query(&third, &resume("ListIdentifiers", &token));
    assert_eq!(error_code(&out), Some("badResumptionToken"), "{out}");
}
