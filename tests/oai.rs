//! The OAI-PMH data provider as aggregators meet it, through `serve`, Apache and lighttpd:
//! two real harvesters from PyPI (sickle and oaipmh-scythe, pinned in
//! tests/oai/requirements.txt, installed in target/oai-venv by tests/oai/install.sh, run
//! by tests/oai/harvest.py) harvest a test Archive whole (oaipmh-scythe also POSTing its
//! arguments as a form), then again incrementally after a `new` and a `delete`, with the
//! index var/oai-records as `check` wrote it and as the provider built it again once it
//! was removed (lists answer 503 meanwhile); the test's own selective harvests,
//! pages (cursor, completeListSize), formats and GetRecords; a table of bad requests with
//! their error codes; a second and a third format written by hand
//! (`serve_harvests_a_second_format`) and a record whose file cannot be read
//! (`a_record_that_cannot_be_read_is_in_no_list`). Every answer the test reads itself is
//! checked by xmllint against the protocol's XML schemas (OAI-PMH.xsd and oai_dc.xsd,
//! taken from Debian's python3-gavo package, which install.sh downloads into target/oai/;
//! an XML catalog maps the schemas' network locations to those copies, and xmllint runs
//! with `--nonet`; the second format's schema is the test's own).
//!
//! What is expected is worked out from the tree, not from the service: every item.toml with
//! `contenttype = "Metadata"` and not `restricted` is a record, its identifier
//! `http://localhost:8090/<IBIp, else rep>` (the sample's resolver), its datestamp its
//! `timestamp`, deleted when its state is Deleted, in each format of its `[formats]`.
//!
//! A record's metadata is compared with its file as parsed XML: the tree of elements by
//! namespace and local name, their attributes (namespace, local name, value; namespace
//! declarations and attribute order left aside) and their text (character references,
//! the five entities and CDATA sections read as text); text that is only whitespace, and
//! comments and processing instructions, are not compared (both harvesters parse with
//! lxml's `remove_blank_text`). The harvesters hand over the XML inside `<metadata>` as
//! lxml serialises it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{http_get, run_cmd, Response, Serve};
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
/// The public URL of the sample Archive's resolver (archive.toml's `[registration]`).
const PERSISTENT: &str = "http://localhost:8090/";
const PAGE_SIZE: usize = 7;
/// The made-up format besides oai_dc, with a schema the test writes.
const TEST_NS: &str = "urn:example:ibi-test";
/// Where the test format's files say its schema is (xsi:schemaLocation).
const TEST_SCHEMA: &str = "http://example.org/ibi-test.xsd";
/// A third format, whose one file declares its namespace and no schema (announced only).
const NOTE_NS: &str = "urn:example:ibi-note";
const TEST_XSD: &str = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:example:ibi-test" xmlns="urn:example:ibi-test" elementFormDefault="qualified">
  <xs:element name="record">
    <xs:complexType>
      <xs:sequence><xs:element name="title" type="xs:string" maxOccurs="unbounded"/></xs:sequence>
      <xs:attribute name="lang" type="xs:string"/>
    </xs:complexType>
  </xs:element>
</xs:schema>
"#;
/// Generated metadata items: `col/sid.inpe.br/mtc-m21/2020/03.04.05.MM`, MM < GENERATED.
const GENERATED: usize = 20;
const GEN_PREFIX: &str = "sid.inpe.br/mtc-m21/2020/03.04.05";
/// The generated metadata item turned into a tombstone by `delete` while the Archive is
/// made (then dated 2019, before every other datestamp of the test's records but the
/// sample's, so that the incremental harvest's `from` comes after it whatever the clock).
const SETUP_DELETED: &str = "sid.inpe.br/mtc-m21/2020/03.04.05.05";
/// A metadata item with oai_dc and the test format; one with the test format only; one
/// restricted (no record); one with no format (a record in no format).
const TWO_FORMATS: &str = "sid.inpe.br/mtc-m21/2020/03.04.05.03";
const TEST_ONLY: &str = "sid.inpe.br/mtc-m21/2021/01.02.03.04";
const RESTRICTED: &str = "sid.inpe.br/mtc-m21/2021/01.02.03.05";
const NO_FORMAT: &str = "sid.inpe.br/mtc-m21/2021/01.02.03.06";
/// A data item of the sample (its metadata item is sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47).
const DATA_ITEM: &str = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23";

// ---------------------------------------------------------------------------------------
// The tools: the harvesters' virtualenv, xmllint and the schemas.

/// The harvesters' Python, or None (a skip outside CI) when target/oai-venv lacks them.
fn harvester_python() -> Option<PathBuf> {
    let python = common::repository().join("target/oai-venv/bin/python");
    let found = Command::new(&python)
        .args(["-c", "import sickle, oaipmh_scythe"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !common::required_under_ci(
        found,
        "the harvesters' virtualenv target/oai-venv (bash tests/oai/install.sh)",
    ) {
        eprintln!(
            "skipping: no harvesters in target/oai-venv (bash tests/oai/install.sh installs them)"
        );
        return None;
    }
    Some(python)
}

/// xmllint with the protocol's schemas, the test format's and a catalog of them.
struct Xmllint {
    dir: tempfile::TempDir,
}

impl Xmllint {
    /// None (a skip outside CI) without xmllint or the downloaded python3-gavo package.
    fn new() -> Option<Xmllint> {
        let found = Command::new("xmllint")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !common::required_under_ci(found, "xmllint (libxml2-utils)") {
            eprintln!("skipping: xmllint (libxml2-utils) is not installed");
            return None;
        }
        let debs = common::repository().join("target/oai");
        let deb = std::fs::read_dir(&debs).ok().and_then(|d| {
            d.filter_map(Result::ok).map(|e| e.path()).find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("python3-gavo_") && n.ends_with(".deb"))
            })
        });
        if !common::required_under_ci(
            deb.is_some(),
            "target/oai/python3-gavo_*.deb (bash tests/oai/install.sh)",
        ) {
            eprintln!("skipping: no target/oai/python3-gavo_*.deb (bash tests/oai/install.sh downloads it)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        // The schemas, taken from the package.
        let inside = "./usr/lib/python3/dist-packages/gavo/resources/schemata";
        let out = Command::new("sh")
            .args([
                "-c",
                "dpkg-deb --fsys-tarfile \"$1\" | tar -x -C \"$2\" --strip-components=8 \
                 \"$3/OAI-PMH.xsd\" \"$3/oai_dc.xsd\" \"$3/simpledc20021212.xsd\" \"$3/xml.xsd\"",
                "sh",
            ])
            .arg(deb.unwrap())
            .arg(dir.path())
            .arg(inside)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for f in [
            "OAI-PMH.xsd",
            "oai_dc.xsd",
            "simpledc20021212.xsd",
            "xml.xsd",
        ] {
            assert!(dir.path().join(f).is_file(), "{f} is not in the package");
        }
        std::fs::write(dir.path().join("ibi-test.xsd"), TEST_XSD).unwrap();
        // One schema of the answers: the protocol's, with the formats their <metadata>
        // and <description> hold (the protocol's wildcards there are strict).
        std::fs::write(
            dir.path().join("answers.xsd"),
            format!(
                r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:import namespace="http://www.openarchives.org/OAI/2.0/" schemaLocation="OAI-PMH.xsd"/>
  <xs:import namespace="http://www.openarchives.org/OAI/2.0/oai_dc/" schemaLocation="oai_dc.xsd"/>
  <xs:import namespace="{TEST_NS}" schemaLocation="ibi-test.xsd"/>
</xs:schema>
"#
            ),
        )
        .unwrap();
        // Where the schemas import each other from the network, the copies.
        let mut catalog =
            String::from("<catalog xmlns=\"urn:oasis:names:tc:entity:xmlns:xml:catalog\">\n");
        for (url, file) in [
            (
                "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd",
                "OAI-PMH.xsd",
            ),
            (
                "http://www.openarchives.org/OAI/2.0/oai_dc.xsd",
                "oai_dc.xsd",
            ),
            (
                "http://vo.ari.uni-heidelberg.de/docs/schemata/simpledc20021212.xsd",
                "simpledc20021212.xsd",
            ),
            (
                "http://dublincore.org/schemas/xmls/simpledc20021212.xsd",
                "simpledc20021212.xsd",
            ),
            ("http://www.w3.org/2001/xml.xsd", "xml.xsd"),
            ("http://www.w3.org/2001/03/xml.xsd", "xml.xsd"),
        ] {
            let local = dir.path().join(file);
            catalog.push_str(&format!(
                "<uri name=\"{url}\" uri=\"file://{}\"/>\n<system systemId=\"{url}\" uri=\"file://{}\"/>\n",
                local.display(),
                local.display()
            ));
        }
        catalog.push_str("</catalog>\n");
        std::fs::write(dir.path().join("catalog.xml"), catalog).unwrap();
        Some(Xmllint { dir })
    }

    /// Asserts that `body` is well-formed and valid against the schemas.
    fn check(&self, body: &[u8], what: &str) {
        let file = self.dir.path().join("answer.xml");
        std::fs::write(&file, body).unwrap();
        let out = Command::new("xmllint")
            .env("XML_CATALOG_FILES", self.dir.path().join("catalog.xml"))
            .args(["--noout", "--nonet", "--schema"])
            .arg(self.dir.path().join("answers.xsd"))
            .arg(&file)
            .output()
            .unwrap();
        // Nothing but its word that the file validates: a schema it could not load (an
        // import the catalog misses) is only a warning to it.
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && said == format!("{} validates\n", file.display()),
            "{what}: xmllint says\n{said}\nof\n{}",
            String::from_utf8_lossy(body)
        );
    }
}

// ---------------------------------------------------------------------------------------
// The test Archive and the records expected from its tree.

fn dc(title: &str, more: &str) -> String {
    format!(
        "<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" \
         xmlns:dc=\"http://purl.org/dc/elements/1.1/\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd\">\n  \
         <dc:title>{title}</dc:title>\n{more}</oai_dc:dc>\n"
    )
}

fn write_item(root: &Path, rep: &str, toml: &str, files: &[(&str, &str)]) {
    let dir = root.join("col").join(rep);
    std::fs::create_dir_all(dir.join("doc")).unwrap();
    std::fs::write(dir.join("item.toml"), toml).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join("doc").join(name), text).unwrap();
    }
}

/// The sample Archive with `[oai] page_size = 7` and: 20 generated oai_dc metadata items
/// (three to a second, so that pages end inside a second), one of them a tombstone by
/// `delete`, one with a second format; a metadata item of the second format only, a
/// restricted one and one without formats; then `check` (the index).
fn archive(second_format: bool) -> (tempfile::TempDir, PathBuf) {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    assert!(!toml.contains("[oai]"));
    std::fs::write(
        root.join("archive.toml"),
        format!("{toml}\n[oai]\npage_size = {PAGE_SIZE}\n"),
    )
    .unwrap();
    for i in 0..GENERATED {
        let rep = format!("{GEN_PREFIX}.{i:02}");
        let mut formats = String::from("oai_dc = \"oai_dc.xml\"\n");
        let mut files = vec![];
        let more = match i % 4 {
            0 => "  <dc:creator>Banon, Gérald Jean Francis</dc:creator>\n  <dc:subject>São José dos Campos &amp; &lt;INPE&gt;</dc:subject>\n".to_string(),
            1 => "  <dc:description><![CDATA[a <CDATA> section & more]]></dc:description>\n  <!-- a comment -->\n".to_string(),
            2 => "  <dc:date>2020-03-04</dc:date><dc:language xml:lang=\"pt\">pt</dc:language>\n".to_string(),
            _ => "  <dc:rights>&#169; INPE &#x2014; all rights</dc:rights>\n".to_string(),
        };
        let record = if i % 2 == 0 {
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}",
                dc(&format!("Report {i}"), &more)
            )
        } else {
            dc(&format!("Report {i}"), &more)
        };
        let test_record;
        files.push(("oai_dc.xml", record.as_str()));
        if second_format && rep == TWO_FORMATS {
            formats.push_str("ibi_test = \"test.xml\"\n");
            test_record = format!(
                "<t:record xmlns:t=\"{TEST_NS}\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"{TEST_NS} {TEST_SCHEMA}\" lang=\"en\"><t:title>Two formats</t:title><t:title>Deux</t:title></t:record>\n"
            );
            files.push(("test.xml", &test_record));
        }
        write_item(
            &root,
            &rep,
            &format!(
                "state = \"Original\"\ntimestamp = 2020-03-04T05:{:02}:00Z\ncontenttype = \"Metadata\"\ntarget = \"oai_dc.xml\"\n[formats]\n{formats}",
                i / 3
            ),
            &files,
        );
    }
    if second_format {
        write_item(
        &root,
        TEST_ONLY,
        "state = \"Original\"\ntimestamp = 2021-01-02T03:04:00Z\ncontenttype = \"Metadata\"\ntarget = \"t.xml\"\n[formats]\nibi_test = \"t.xml\"\nibi_note = \"note.xml\"\n",
        &[
            ("t.xml", &format!("<?xml version=\"1.0\"?>\n<record xmlns=\"{TEST_NS}\"><title>Only the test format</title></record>\n")),
            ("note.xml", &format!("<n:note xmlns:n=\"{NOTE_NS}\">A note</n:note>\n")),
        ],
    );
    }
    write_item(
        &root,
        RESTRICTED,
        "state = \"Original\"\ntimestamp = 2021-01-02T03:05:00Z\ncontenttype = \"Metadata\"\nrestricted = true\ntarget = \"oai_dc.xml\"\n[formats]\noai_dc = \"oai_dc.xml\"\n",
        &[("oai_dc.xml", &dc("Restricted", ""))],
    );
    write_item(
        &root,
        NO_FORMAT,
        "state = \"Original\"\ntimestamp = 2021-01-02T03:06:00Z\ncontenttype = \"Metadata\"\ntarget = \"m.html\"\n",
        &[("m.html", "<p>no format</p>\n")],
    );
    std::fs::create_dir_all(root.join("var")).unwrap();
    let r = root.to_str().unwrap();
    let (code, out, err) = run_cmd(&["delete", "--root", r, SETUP_DELETED]);
    assert_eq!(code, 0, "{out}{err}");
    let item = root.join("col").join(SETUP_DELETED).join("item.toml");
    let text = std::fs::read_to_string(&item).unwrap();
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("timestamp") {
                "timestamp = 2019-06-07T08:09:10Z".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let parsed: toml::Table = text.parse().unwrap();
    assert_eq!(parsed["state"].as_str(), Some("Deleted"), "{text}");
    std::fs::write(&item, text + "\n").unwrap();
    let (code, out, err) = run_cmd(&["check", "--root", r]);
    // The copy's var/ is root's, not the web server's user's: that fault only.
    assert!(code <= 1, "{out}{err}");
    assert!(!out.contains("item.toml"), "{out}");
    assert!(root.join("var/oai-records").is_file());
    common::prepare_archive(&root);
    (tmp, root)
}

/// A record as expected from the tree, or as harvested.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Rec {
    identifier: String,
    datestamp: String,
    deleted: bool,
}

/// Records by identifier, each with the path of its file in a format.
type Records = BTreeMap<String, (Rec, Option<PathBuf>)>;

/// The records of `prefix` (None: of any format), from the tree: identifier -> (record,
/// the path of its file in that format).
fn expected(root: &Path, prefix: Option<&str>) -> Records {
    let mut all = BTreeMap::new();
    let col = root.join("col");
    let mut stack = vec![col.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && p.file_name().unwrap() != "doc" {
                stack.push(p);
            } else if p.file_name().unwrap() == "item.toml" {
                let item: toml::Table = std::fs::read_to_string(&p).unwrap().parse().unwrap();
                let s = |k: &str| item.get(k).and_then(|v| v.as_str());
                if s("contenttype") != Some("Metadata")
                    || item.get("restricted").and_then(|v| v.as_bool()) == Some(true)
                {
                    continue;
                }
                let rep = p
                    .parent()
                    .unwrap()
                    .strip_prefix(&col)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string();
                let formats = item.get("formats").and_then(|f| f.as_table());
                let file = match prefix {
                    None => None,
                    Some(prefix) => {
                        match formats.and_then(|f| f.get(prefix)).and_then(|v| v.as_str()) {
                            Some(f) => Some(p.parent().unwrap().join("doc").join(f)),
                            None => continue,
                        }
                    }
                };
                let timestamp = item.get("timestamp").unwrap().to_string();
                let datestamp = chrono::DateTime::parse_from_rfc3339(&timestamp)
                    .unwrap()
                    .with_timezone(&chrono::Utc)
                    .format("%Y-%m-%dT%H:%M:%SZ")
                    .to_string();
                let identifier = format!("{PERSISTENT}{}", s("ibip").unwrap_or(&rep));
                let rec = Rec {
                    identifier: identifier.clone(),
                    datestamp,
                    deleted: s("state") == Some("Deleted"),
                };
                all.insert(identifier, (rec, file));
            }
        }
    }
    all
}

// ---------------------------------------------------------------------------------------
// XML read as a tree, to compare.

#[derive(Debug, PartialEq)]
enum Node {
    Element {
        name: (String, String),
        attributes: Vec<(String, String, String)>,
        children: Vec<Node>,
    },
    Text(String),
}

fn ns_of(r: &ResolveResult) -> String {
    match r {
        ResolveResult::Bound(n) => String::from_utf8(n.as_ref().to_vec()).unwrap(),
        ResolveResult::Unbound => String::new(),
        ResolveResult::Unknown(p) => panic!("unknown prefix {p:?}"),
    }
}

/// The root element of `xml` as a tree (see the module's comment for what is kept).
fn tree(xml: &str) -> Node {
    let mut reader = NsReader::from_str(xml);
    let mut stack: Vec<Node> = vec![Node::Element {
        name: (String::new(), String::new()),
        attributes: vec![],
        children: vec![],
    }];
    let push = |stack: &mut Vec<Node>, node: Node| {
        let Some(Node::Element { children, .. }) = stack.last_mut() else {
            unreachable!()
        };
        if let (Node::Text(t), Some(Node::Text(last))) = (&node, children.last_mut()) {
            last.push_str(t);
        } else {
            children.push(node);
        }
    };
    loop {
        let (ns, event) = reader
            .read_resolved_event()
            .unwrap_or_else(|e| panic!("{e} in {xml}"));
        let ns = ns_of(&ns);
        let element = |e: &quick_xml::events::BytesStart, ns: &str| {
            let mut attributes: Vec<(String, String, String)> = e
                .attributes()
                .map(|a| a.unwrap())
                .filter(|a| {
                    let k = a.key.as_ref();
                    k != b"xmlns" && !k.starts_with(b"xmlns:")
                })
                .map(|a| {
                    let (ans, local) = reader.resolve_attribute(a.key);
                    let value = a
                        .decode_and_unescape_value(reader.decoder())
                        .unwrap()
                        .replace(['\t', '\n', '\r'], " ");
                    (
                        ns_of(&ans),
                        String::from_utf8(local.as_ref().to_vec()).unwrap(),
                        value,
                    )
                })
                .collect();
            attributes.sort();
            Node::Element {
                name: (
                    ns.to_string(),
                    String::from_utf8(e.local_name().as_ref().to_vec()).unwrap(),
                ),
                attributes,
                children: vec![],
            }
        };
        match event {
            Event::Start(e) => {
                let node = element(&e, &ns);
                stack.push(node);
            }
            Event::Empty(e) => {
                let node = element(&e, &ns);
                push(&mut stack, node);
            }
            Event::End(_) => {
                let node = stack.pop().unwrap();
                push(&mut stack, node);
            }
            Event::Text(t) => push(&mut stack, Node::Text(t.decode().unwrap().into_owned())),
            Event::CData(t) => push(&mut stack, Node::Text(t.decode().unwrap().into_owned())),
            Event::GeneralRef(r) => {
                let c = match r.resolve_char_ref().unwrap() {
                    Some(c) => c.to_string(),
                    None => quick_xml::escape::resolve_predefined_entity(&r.decode().unwrap())
                        .unwrap_or_else(|| panic!("an entity in {xml}"))
                        .to_string(),
                };
                push(&mut stack, Node::Text(c));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(stack.len(), 1, "{xml}");
    let Some(Node::Element { children, .. }) = stack.pop() else {
        unreachable!()
    };
    let mut roots: Vec<Node> = children
        .into_iter()
        .filter(|n| matches!(n, Node::Element { .. }))
        .collect();
    assert_eq!(roots.len(), 1, "{xml}");
    let mut root = roots.pop().unwrap();
    drop_blank(&mut root);
    root
}

fn drop_blank(node: &mut Node) {
    if let Node::Element { children, .. } = node {
        children.retain(|c| !matches!(c, Node::Text(t) if t.trim().is_empty()));
        children.iter_mut().for_each(drop_blank);
    }
}

// ---------------------------------------------------------------------------------------
// Harvests.

/// A record harvested, with the XML of its metadata.
#[derive(Debug)]
struct Harvested {
    rec: Rec,
    metadata: Option<String>,
}

fn harvest(
    python: &Path,
    harvester: &str,
    base: &str,
    verb: &str,
    prefix: &str,
    from: Option<&str>,
) -> Vec<Harvested> {
    let script = common::repository().join("tests/oai/harvest.py");
    let mut cmd = Command::new(python);
    cmd.arg(&script)
        .args([harvester, &format!("{base}/{SERVICE}"), verb, prefix]);
    if let Some(from) = from {
        cmd.arg(from);
    }
    let out = common::output_or_hang(
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
        "harvest.py",
    );
    assert!(
        out.status.success(),
        "{harvester} {verb} {prefix} {from:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Harvested {
                rec: Rec {
                    identifier: v["identifier"].as_str().unwrap().to_string(),
                    datestamp: v["datestamp"].as_str().unwrap().to_string(),
                    deleted: v["deleted"].as_bool().unwrap(),
                },
                metadata: v["metadata"].as_str().map(str::to_string),
            }
        })
        .collect()
}

/// Asserts that a harvest gave exactly the records `want`, each once, the live ones with
/// the XML of their file (ListRecords), the deleted ones without metadata.
fn assert_harvest(what: &str, got: &[Harvested], want: &Records, with_metadata: bool) {
    let got_recs: Vec<&Rec> = got.iter().map(|h| &h.rec).collect();
    let want_recs: Vec<&Rec> = want.values().map(|(r, _)| r).collect();
    let mut sorted = got_recs.clone();
    sorted.sort();
    assert_eq!(sorted, want_recs, "{what}: the records");
    assert_eq!(got_recs.len(), want_recs.len(), "{what}: a record twice");
    for h in got {
        let (rec, file) = &want[&h.rec.identifier];
        match (&h.metadata, rec.deleted || !with_metadata) {
            (None, true) => {}
            (Some(xml), false) => {
                let file = std::fs::read_to_string(file.as_ref().unwrap()).unwrap();
                assert_eq!(tree(xml), tree(&file), "{what}: {}", rec.identifier);
            }
            (m, _) => panic!("{what}: {} has metadata {m:?}", rec.identifier),
        }
    }
}

/// Both harvesters, ListRecords and ListIdentifiers of oai_dc and ListRecords of the test
/// format, from `from`: each exactly the records of `want_of(prefix)`.
fn harvest_all(
    python: &Path,
    second_format: bool,
    base: &str,
    from: Option<&str>,
    want_of: &dyn Fn(&str) -> Records,
    what: &str,
) {
    for harvester in ["sickle", "scythe"] {
        let dc = want_of("oai_dc");
        let got = harvest(python, harvester, base, "ListRecords", "oai_dc", from);
        assert_harvest(&format!("{what}, {harvester} ListRecords"), &got, &dc, true);
        let got = harvest(python, harvester, base, "ListIdentifiers", "oai_dc", from);
        assert_harvest(
            &format!("{what}, {harvester} ListIdentifiers"),
            &got,
            &dc,
            false,
        );
        if second_format {
            let test = want_of("ibi_test");
            let got = harvest(python, harvester, base, "ListRecords", "ibi_test", from);
            assert_harvest(&format!("{what}, {harvester} ibi_test"), &got, &test, true);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The test's own requests.

fn oai_get(base: &str, qs: &str, xml: &Xmllint) -> String {
    let url = format!("{base}/{SERVICE}?{qs}");
    let r: Response = http_get(&url);
    assert_eq!(r.status, 200, "{qs}");
    assert_eq!(
        r.header("content-type"),
        Some("text/xml; charset=utf-8"),
        "{qs}"
    );
    xml.check(&r.body, qs);
    r.text()
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    s.split_once(a)?.1.split_once(b).map(|(x, _)| x)
}

/// The error codes of an answer, and the attributes of its request element.
fn error_codes(body: &str) -> Vec<String> {
    body.split("<error code=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect()
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The resumption token of a page: (its text, completeListSize, cursor).
fn token(page: &str) -> Option<(String, Option<usize>, Option<usize>)> {
    let rest = page.split_once("<resumptionToken")?.1;
    let (attrs, rest) = rest.split_once('>')?;
    let attr = |n: &str| between(attrs, &format!("{n}=\""), "\"").map(|v| v.parse().unwrap());
    let text = if attrs.ends_with('/') {
        String::new()
    } else {
        rest.split('<').next().unwrap().to_string()
    };
    Some((text, attr("completeListSize"), attr("cursor")))
}

/// Every page of a list, read by the test (each checked by xmllint): the pages.
fn pages(base: &str, verb: &str, prefix: &str, xml: &Xmllint, total: usize) -> Vec<String> {
    let mut all = vec![];
    let mut page = oai_get(base, &format!("verb={verb}&metadataPrefix={prefix}"), xml);
    loop {
        let headers = page.matches("<header").count();
        let t = token(&page);
        all.push(page);
        let cursor = (all.len() - 1) * PAGE_SIZE;
        match t {
            None => {
                assert_eq!(all.len(), 1, "a later page without token");
                assert!(headers <= PAGE_SIZE);
                break;
            }
            Some((text, size, c)) => {
                assert_eq!(size, Some(total), "completeListSize of page {}", all.len());
                assert_eq!(c, Some(cursor), "cursor of page {}", all.len());
                if text.is_empty() {
                    assert_eq!(cursor + headers, total);
                    break;
                }
                assert_eq!(headers, PAGE_SIZE);
                page = oai_get(
                    base,
                    &format!("verb={verb}&resumptionToken={}", enc(&text)),
                    xml,
                );
            }
        }
    }
    all
}

/// The headers of every page of a list (each page checked by xmllint).
fn list_headers(base: &str, first: &str, xml: &Xmllint) -> Vec<Rec> {
    let verb = between(first, "verb=", "&").unwrap().to_string();
    let mut all = vec![];
    let mut page = oai_get(base, first, xml);
    loop {
        for h in page.split("<header").skip(1) {
            all.push(Rec {
                identifier: between(h, "<identifier>", "</identifier>")
                    .unwrap()
                    .to_string(),
                datestamp: between(h, "<datestamp>", "</datestamp>")
                    .unwrap()
                    .to_string(),
                deleted: h.starts_with(" status=\"deleted\""),
            });
        }
        match token(&page) {
            Some((t, _, _)) if !t.is_empty() => {
                page = oai_get(
                    base,
                    &format!("verb={verb}&resumptionToken={}", enc(&t)),
                    xml,
                );
            }
            _ => break,
        }
    }
    all
}

/// The answers to bad requests: each its error code, the answer valid.
fn bad_requests(base: &str, xml: &Xmllint, second_format: bool) {
    let data = format!("{PERSISTENT}{DATA_ITEM}");
    let live = format!("{PERSISTENT}{GEN_PREFIX}.01");
    let first = oai_get(base, "verb=ListRecords&metadataPrefix=oai_dc", xml);
    let (tok, _, _) = token(&first).unwrap();
    assert!(!tok.is_empty());
    // One character of the token changed for another of its kind.
    let mid = tok.len() / 2;
    let c = tok.as_bytes()[mid];
    let other = match c {
        b'0'..=b'8' | b'a'..=b'y' | b'A'..=b'Y' => c + 1,
        b'9' => b'0',
        b'z' => b'a',
        b'Z' => b'A',
        _ => b'x',
    };
    let mut tampered = tok.clone().into_bytes();
    tampered[mid] = other;
    let tampered = String::from_utf8(tampered).unwrap();
    let cases: Vec<(String, &str)> = vec![
        ("verb=Nonsense".into(), "badVerb"),
        ("verb=".into(), "badVerb"),
        ("verb=identify".into(), "badVerb"),
        ("verb=Identify&verb=Identify".into(), "badVerb"),
        ("verb=Identify&verb=ListSets".into(), "badVerb"),
        ("verb=Identify&illegal=1".into(), "badArgument"),
        ("verb=Identify&metadataPrefix=oai_dc".into(), "badArgument"),
        ("verb=ListRecords".into(), "badArgument"),
        ("verb=ListIdentifiers".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=oai_dc".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=oai_dc&identifier=x".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=oai_dc&from=2020-13-01".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=oai_dc&from=2020-02-30".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00:00".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00Z".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=oai_dc&from=yesterday".into(), "badArgument"),
        ("verb=ListIdentifiers&metadataPrefix=oai_dc&from=2020-01-01&until=2021-01-01T00:00:00Z".into(), "badArgument"),
        ("verb=ListIdentifiers&metadataPrefix=oai_dc&from=2021-01-01&until=2020-01-01".into(), "badArgument"),
        ("verb=ListIdentifiers&metadataPrefix=oai_dc&from=2021-01-01T00:00:01Z&until=2021-01-01T00:00:00Z".into(), "badArgument"),
        (format!("verb=ListRecords&metadataPrefix=oai_dc&resumptionToken={}", enc(&tok)), "badArgument"),
        (format!("verb=ListRecords&resumptionToken={}&from=2020-01-01", enc(&tok)), "badArgument"),
        (format!("verb=GetRecord&identifier={}", enc(&live)), "badArgument"),
        ("verb=GetRecord&metadataPrefix=oai_dc".into(), "badArgument"),
        (format!("verb=GetRecord&identifier={}&metadataPrefix=oai_dc&from=2020-01-01", enc(&live)), "badArgument"),
        ("verb=ListMetadataFormats&metadataPrefix=oai_dc".into(), "badArgument"),
        ("verb=ListRecords&metadataPrefix=marc21".into(), "cannotDisseminateFormat"),
        ("verb=ListIdentifiers&metadataPrefix=oai_dc2".into(), "cannotDisseminateFormat"),
        (format!("verb=GetRecord&identifier={}&metadataPrefix=ibi_test", enc(&live)), "cannotDisseminateFormat"),
        (format!("verb=GetRecord&identifier={}&metadataPrefix=oai_dc", enc(&format!("{PERSISTENT}{NO_FORMAT}"))), "cannotDisseminateFormat"),
        // A deleted record, in a format it never had.
        (format!("verb=GetRecord&identifier={}&metadataPrefix=ibi_test", enc(&format!("{PERSISTENT}{SETUP_DELETED}"))), "cannotDisseminateFormat"),
        (format!("verb=GetRecord&identifier={}&metadataPrefix=oai_dc", enc(&format!("{PERSISTENT}sid.inpe.br/mtc-m21/2020/03.04.05.59"))), "idDoesNotExist"),
        ("verb=GetRecord&identifier=garbage&metadataPrefix=oai_dc".into(), "idDoesNotExist"),
        (format!("verb=GetRecord&identifier={}&metadataPrefix=oai_dc", enc(&format!("http://elsewhere.example.org/{GEN_PREFIX}.01"))), "idDoesNotExist"),
        // A data item is no record; nor is a restricted metadata item.
        (format!("verb=GetRecord&identifier={}&metadataPrefix=oai_dc", enc(&data)), "idDoesNotExist"),
        (format!("verb=ListMetadataFormats&identifier={}", enc(&data)), "idDoesNotExist"),
        (format!("verb=GetRecord&identifier={}&metadataPrefix=oai_dc", enc(&format!("{PERSISTENT}{RESTRICTED}"))), "idDoesNotExist"),
        (format!("verb=ListMetadataFormats&identifier={}", enc(&format!("{PERSISTENT}{RESTRICTED}"))), "idDoesNotExist"),
        (format!("verb=ListMetadataFormats&identifier={}", enc(&format!("{PERSISTENT}sid.inpe.br/nothing/2020/01.01.00.00"))), "idDoesNotExist"),
        // A metadata item without formats.
        (format!("verb=ListMetadataFormats&identifier={}", enc(&format!("{PERSISTENT}{NO_FORMAT}"))), "noMetadataFormats"),
        ("verb=ListRecords&metadataPrefix=oai_dc&from=2030-01-01".into(), "noRecordsMatch"),
        ("verb=ListIdentifiers&metadataPrefix=oai_dc&until=1999-12-31T23:59:59Z".into(), "noRecordsMatch"),
        ("verb=ListRecords&metadataPrefix=oai_dc&from=2020-03-04T05:00:01Z&until=2020-03-04T05:00:59Z".into(), "noRecordsMatch"),
        // A format no record has; one that records have, but none in the range.
        (
            "verb=ListRecords&metadataPrefix=ibi_test&until=2020-01-01".into(),
            if second_format { "noRecordsMatch" } else { "cannotDisseminateFormat" },
        ),
        ("verb=ListSets".into(), "noSetHierarchy"),
        ("verb=ListRecords&metadataPrefix=oai_dc&set=a".into(), "noSetHierarchy"),
        ("verb=ListIdentifiers&metadataPrefix=oai_dc&set=a".into(), "noSetHierarchy"),
        ("verb=ListRecords&resumptionToken=garbage".into(), "badResumptionToken"),
        // An empty argument is one of illegal syntax, whichever.
        ("verb=ListIdentifiers&resumptionToken=".into(), "badArgument"),
        (format!("verb=ListRecords&resumptionToken={}", enc(&tampered)), "badResumptionToken"),
        (format!("verb=ListRecords&resumptionToken={}", enc(&tok[..tok.len() - 1])), "badResumptionToken"),
        // A token of ListRecords is not one of ListIdentifiers.
        (format!("verb=ListIdentifiers&resumptionToken={}", enc(&tok)), "badResumptionToken"),
    ];
    let mut wrong = vec![];
    for (qs, code) in &cases {
        let body = oai_get(base, qs, xml);
        let codes = error_codes(&body);
        if codes != [*code] {
            wrong.push(format!("{qs}: expected {code}, got {codes:?}"));
        }
        // badVerb and badArgument: the request element has no attributes (protocol 3.2).
        if matches!(*code, "badVerb" | "badArgument") && !body.contains("<request>") {
            wrong.push(format!(
                "{qs}: a {code} answer's request has attributes:\n{body}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} bad requests:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// What the test reads itself: Identify, the formats, the pages of both lists (every
/// answer valid), GetRecord of a live, a deleted and a two-format record.
fn own_requests(base: &str, xml: &Xmllint, root: &Path, second_format: bool) {
    let identify = oai_get(base, "verb=Identify", xml);
    // The sample's baseurl is http:// and its archiveaddress.
    assert!(
        identify.contains(&format!(
            "<baseURL>http://localhost:8080/{SERVICE}</baseURL>"
        )),
        "{identify}"
    );
    assert!(identify.contains("<deletedRecord>persistent</deletedRecord>"));
    assert!(identify.contains("<granularity>YYYY-MM-DDThh:mm:ssZ</granularity>"));
    // A lower limit of every datestamp (the index's first line).
    let earliest = between(&identify, "<earliestDatestamp>", "<").unwrap();
    let all = expected(root, None);
    let first = all
        .values()
        .map(|(r, _)| r.datestamp.as_str())
        .min()
        .unwrap();
    assert!(earliest <= first, "{earliest} is after {first}");
    selective(base, xml, root);
    formats(base, xml, second_format);
    let dc = expected(root, Some("oai_dc"));
    let pages_dc = pages(base, "ListRecords", "oai_dc", xml, dc.len());
    assert!(pages_dc.len() >= 3, "{} pages", pages_dc.len());
    pages(base, "ListIdentifiers", "oai_dc", xml, dc.len());
    let mut gets = vec![(TWO_FORMATS, "oai_dc"), (SETUP_DELETED, "oai_dc")];
    if second_format {
        gets.extend([(TWO_FORMATS, "ibi_test"), (TEST_ONLY, "ibi_test")]);
    }
    for (rep, prefix) in gets {
        let id = format!("{PERSISTENT}{rep}");
        let r = oai_get(
            base,
            &format!(
                "verb=GetRecord&identifier={}&metadataPrefix={prefix}",
                enc(&id)
            ),
            xml,
        );
        assert!(r.contains(&format!("<identifier>{id}</identifier>")), "{r}");
        assert_eq!(
            r.contains("<header status=\"deleted\">"),
            rep == SETUP_DELETED,
            "{r}"
        );
    }
}

/// The formats of a ListMetadataFormats answer: prefix -> (schema, namespace).
fn announced(body: &str) -> BTreeMap<String, (String, String)> {
    body.split("<metadataFormat>")
        .skip(1)
        .map(|f| {
            let v = |e: &str| {
                between(f, &format!("<{e}>"), &format!("</{e}>"))
                    .unwrap_or_default()
                    .to_string()
            };
            (v("metadataPrefix"), (v("schema"), v("metadataNamespace")))
        })
        .collect()
}

/// ListMetadataFormats of the Archive and of items: each format with its schema and its
/// namespace (oai_dc's; the test format's as its files declare them; the third format's
/// namespace, which its file declares, without schema).
fn formats(base: &str, xml: &Xmllint, second_format: bool) {
    let dc = (
        "http://www.openarchives.org/OAI/2.0/oai_dc.xsd".to_string(),
        "http://www.openarchives.org/OAI/2.0/oai_dc/".to_string(),
    );
    let test = (TEST_SCHEMA.to_string(), TEST_NS.to_string());
    let whole = announced(&oai_get(base, "verb=ListMetadataFormats", xml));
    let of = |rep: &str| {
        let id = format!("{PERSISTENT}{rep}");
        let qs = format!("verb=ListMetadataFormats&identifier={}", enc(&id));
        announced(&oai_get(base, &qs, xml))
    };
    let two = of(TWO_FORMATS);
    if !second_format {
        assert_eq!(whole, BTreeMap::from([("oai_dc".to_string(), dc.clone())]));
        assert_eq!(two, whole);
        return;
    }
    let mut problems = vec![];
    let keys = |m: &BTreeMap<String, (String, String)>| m.keys().cloned().collect::<Vec<_>>();
    if keys(&whole) != ["ibi_note", "ibi_test", "oai_dc"] {
        problems.push(format!("the Archive's formats: {whole:?}"));
    }
    if keys(&two) != ["ibi_test", "oai_dc"] {
        problems.push(format!("{TWO_FORMATS}'s formats: {two:?}"));
    }
    let only = of(TEST_ONLY);
    if keys(&only) != ["ibi_note", "ibi_test"] {
        problems.push(format!("{TEST_ONLY}'s formats: {only:?}"));
    }
    for (what, m) in [
        ("the Archive", &whole),
        (TWO_FORMATS, &two),
        (TEST_ONLY, &only),
    ] {
        if m.get("oai_dc").is_some_and(|f| *f != dc) {
            problems.push(format!("{what}: oai_dc {:?}", m["oai_dc"]));
        }
        if m.get("ibi_test").is_some_and(|f| *f != test) {
            problems.push(format!("{what}: ibi_test {:?}", m["ibi_test"]));
        }
        if m.get("ibi_note").is_some_and(|(_, ns)| ns != NOTE_NS) {
            problems.push(format!("{what}: ibi_note {:?}", m["ibi_note"]));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Selective harvests by the test, inclusive at both ends, at both granularities: the
/// records of the tree in those dates.
fn selective(base: &str, xml: &Xmllint, root: &Path) {
    let dc = expected(root, Some("oai_dc"));
    for (from, until) in [
        ("2020-03-04T05:01:00Z", "2020-03-04T05:02:00Z"),
        ("2020-03-04T05:00:00Z", "2020-03-04T05:00:00Z"),
        ("2020-03-04", "2020-03-04"),
        ("2019-06-07", "2020-03-04"),
        ("2013-10-04T14:32:15Z", "2014-05-06T07:08:40Z"),
    ] {
        let day = from.len() == 10;
        let (lo, hi) = if day {
            (format!("{from}T00:00:00Z"), format!("{until}T23:59:59Z"))
        } else {
            (from.to_string(), until.to_string())
        };
        let want: BTreeSet<Rec> = dc
            .values()
            .map(|(r, _)| r.clone())
            .filter(|r| r.datestamp >= lo && r.datestamp <= hi)
            .collect();
        assert!(!want.is_empty());
        let got = list_headers(
            base,
            &format!("verb=ListIdentifiers&metadataPrefix=oai_dc&from={from}&until={until}"),
            xml,
        );
        assert_eq!(got.len(), want.len(), "{from} {until}: a record twice");
        assert_eq!(
            got.into_iter().collect::<BTreeSet<_>>(),
            want,
            "{from} {until}"
        );
    }
}

/// A urlRequest with a verb is the urlRequest's answer; a verb alone is OAI-PMH.
fn service_subjects(base: &str, xml: &Xmllint) {
    let url = "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi=8JMKD3MGP8W/35MME4E";
    let drop_key = |r: Response| -> (u16, String) {
        let text = r
            .text()
            .lines()
            .filter(|l| !l.starts_with("urlkey "))
            .collect::<Vec<_>>()
            .join("\n");
        (r.status, text)
    };
    let plain = drop_key(http_get(&format!("{base}/{SERVICE}?{url}")));
    assert_eq!(plain.0, 200);
    assert!(plain.1.contains("contenttype Data"), "{}", plain.1);
    for qs in [
        format!("{url}&verb=Identify"),
        format!("verb=Identify&{url}"),
    ] {
        let with_verb = drop_key(http_get(&format!("{base}/{SERVICE}?{qs}")));
        assert_eq!(with_verb, plain, "{qs}");
    }
    let oai = oai_get(base, "verb=Identify", xml);
    assert!(oai.contains("<Identify>"), "{oai}");
}

/// `new` with Dublin Core and `delete` of a metadata item of the first harvest: a harvest
/// from a second before returns exactly those two, from the index, then from the walk;
/// then the whole harvest from the walk.
fn incremental(python: &Path, second_format: bool, base: &str, root: &Path) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let from = chrono::DateTime::from_timestamp(now - 1, 0)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    for (rec, _) in expected(root, None).values() {
        assert!(rec.datestamp < from, "{rec:?} is not before {from}");
    }
    let r = root.to_str().unwrap();
    let file = root.parent().unwrap().join("report.txt");
    std::fs::write(&file, "a report\n").unwrap();
    let pairs = common::pairs_of_run(&[
        "new",
        "--root",
        r,
        "--title",
        "A new report <with> & marks",
        "--creator",
        "Souza, João",
        file.to_str().unwrap(),
    ]);
    let value = |k: &str| pairs.iter().find(|(n, _)| n == k).unwrap().1.clone();
    let new_meta = format!("{PERSISTENT}{}", value("metadata.ibip"));
    let gone = format!("{GEN_PREFIX}.10");
    let (code, out, err) = run_cmd(&["delete", "--root", r, &gone]);
    assert_eq!(code, 0, "{out}{err}");
    let gone = format!("{PERSISTENT}{gone}");
    let want_of = |prefix: &str| {
        let mut w = expected(root, Some(prefix));
        w.retain(|id, _| *id == new_meta || *id == gone);
        w
    };
    let dc = want_of("oai_dc");
    assert_eq!(dc.len(), 2);
    assert!(!dc[&new_meta].0.deleted && dc[&gone].0.deleted);
    // Asked by its rep, the record of an item with an IBIp is named by its IBIp.
    let by_rep = format!("{PERSISTENT}{}", value("metadata.rep"));
    let xml = Xmllint::new().unwrap();
    let r = oai_get(
        base,
        &format!(
            "verb=GetRecord&identifier={}&metadataPrefix=oai_dc",
            enc(&by_rep)
        ),
        &xml,
    );
    assert!(
        r.contains(&format!("<identifier>{new_meta}</identifier>")),
        "{r}"
    );
    let what = "from the index, after new and delete";
    harvest_all(python, second_format, base, Some(&from), &want_of, what);
    std::fs::remove_file(root.join("var/oai-records")).unwrap();
    await_index(base);
    selective(base, &xml, root);
    formats(base, &xml, second_format);
    let what = "from the index built again, after new and delete";
    harvest_all(python, second_format, base, Some(&from), &want_of, what);
    let all = |prefix: &str| expected(root, Some(prefix));
    harvest_all(
        python,
        second_format,
        base,
        None,
        &all,
        "from the index built again",
    );
}

/// Asks for a list until it is answered (the index removed, lists answer 503 with
/// Retry-After while the provider builds it again), within a minute.
fn await_index(base: &str) {
    let url = format!("{base}/{SERVICE}?verb=ListIdentifiers&metadataPrefix=oai_dc");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let r = http_get(&url);
        if r.status == 200 {
            return;
        }
        assert_eq!(r.status, 503, "{}", r.text());
        assert!(r.header("retry-after").is_some(), "{:?}", r.headers);
        assert!(
            std::time::Instant::now() < deadline,
            "the index was not built again within a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn suite(base: &str, root: &Path, second_format: bool, log: &dyn Fn() -> String) {
    let start = std::time::Instant::now();
    let (Some(python), Some(xml)) = (harvester_python(), Xmllint::new()) else {
        return;
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // The test Archive as made: 24 records of oai_dc (the sample's four, 20
        // generated, one a tombstone), 2 of the test format (or none).
        let dc = expected(root, Some("oai_dc"));
        assert_eq!(dc.len(), 4 + GENERATED);
        assert_eq!(dc.values().filter(|(r, _)| r.deleted).count(), 1);
        let test = expected(root, Some("ibi_test")).len();
        assert_eq!(test, if second_format { 2 } else { 0 });
        own_requests(base, &xml, root, second_format);
        service_subjects(base, &xml);
        bad_requests(base, &xml, second_format);
        let all = |prefix: &str| expected(root, Some(prefix));
        harvest_all(&python, second_format, base, None, &all, "from the index");
        // The protocol's other way of asking: the arguments as a POSTed form.
        let got = harvest(&python, "scythe-post", base, "ListRecords", "oai_dc", None);
        assert_harvest("POSTed", &got, &all("oai_dc"), true);
        incremental(&python, second_format, base, root);
    }));
    eprintln!("oai suite at {base}: {:?}", start.elapsed());
    if let Err(e) = result {
        eprintln!("server's log:\n{}", log());
        std::panic::resume_unwind(e);
    }
}

fn serve_suite(second_format: bool) {
    let (_tmp, root) = archive(second_format);
    let log_path = root.parent().unwrap().join("serve.log");
    let serve = Serve::start(&root, std::fs::File::create(&log_path).unwrap());
    suite(&serve.base_url(), &root, second_format, &|| {
        std::fs::read_to_string(&log_path).unwrap_or_default()
    });
}

#[test]
fn serve_is_harvested() {
    serve_suite(false);
}

/// The same with a second format (`ibi_test`, written by hand) besides oai_dc: a metadata
/// item in both, one in the second only.
#[test]
fn serve_harvests_a_second_format() {
    serve_suite(true);
}

#[test]
fn apache2_is_harvested() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid is not installed");
        return;
    }
    let (_tmp, root) = archive(false);
    let server = common::start_apache2(&root, &common::ibi_archive_bin(), SERVICE);
    suite(&server.base_url, &root, false, &|| server.error_log());
}

#[test]
fn lighttpd_is_harvested() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd is not installed");
        return;
    }
    let (_tmp, root) = archive(false);
    let server = common::start_lighttpd(&root, &common::ibi_archive_bin(), SERVICE);
    suite(&server.base_url, &root, false, &|| server.error_log());
}

/// A record whose file is not well-formed XML is left out (README): then out of every list
/// of its format, ListIdentifiers as ListRecords (the protocol's ListIdentifiers lists a
/// record only when it is available in the format), and out of `completeListSize`.
#[test]
fn a_record_that_cannot_be_read_is_in_no_list() {
    let Some(xml) = Xmllint::new() else {
        return;
    };
    let (_tmp, root) = archive(false);
    let broken = "sid.inpe.br/mtc-m21/2021/01.02.03.07";
    write_item(
        &root,
        broken,
        "state = \"Original\"\ntimestamp = 2020-03-04T05:01:00Z\ncontenttype = \"Metadata\"\ntarget = \"oai_dc.xml\"\n[formats]\noai_dc = \"oai_dc.xml\"\n",
        &[(
            "oai_dc.xml",
            "<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\"><broken></oai_dc:dc>\n",
        )],
    );
    let (code, out, err) = run_cmd(&["check", "--root", root.to_str().unwrap()]);
    assert!(code <= 1, "{out}{err}");
    assert!(
        std::fs::read_to_string(root.join("var/oai-records"))
            .unwrap()
            .contains(broken),
        "{out}{err}"
    );
    common::prepare_archive(&root);
    let log_path = root.parent().unwrap().join("serve.log");
    let serve = Serve::start(&root, std::fs::File::create(&log_path).unwrap());
    let base = serve.base_url();
    let id = format!("{PERSISTENT}{broken}");
    let r = oai_get(
        &base,
        &format!(
            "verb=GetRecord&identifier={}&metadataPrefix=oai_dc",
            enc(&id)
        ),
        &xml,
    );
    assert_eq!(error_codes(&r), ["cannotDisseminateFormat"], "{r}");
    // Nor is its one format available for it.
    let r = oai_get(
        &base,
        &format!("verb=ListMetadataFormats&identifier={}", enc(&id)),
        &xml,
    );
    assert_eq!(error_codes(&r), ["noMetadataFormats"], "{r}");
    // The records that can be read: the tree's, less the broken one.
    let mut want = expected(&root, Some("oai_dc"));
    assert!(want.remove(&id).is_some());
    let want: BTreeSet<Rec> = want.into_values().map(|(r, _)| r).collect();
    for verb in ["ListIdentifiers", "ListRecords"] {
        let got = list_headers(&base, &format!("verb={verb}&metadataPrefix=oai_dc"), &xml);
        let ids: Vec<&str> = got.iter().map(|r| r.identifier.as_str()).collect();
        assert!(!ids.contains(&id.as_str()), "{verb} lists {id}");
        assert_eq!(got.iter().cloned().collect::<BTreeSet<_>>(), want, "{verb}");
        let first = oai_get(&base, &format!("verb={verb}&metadataPrefix=oai_dc"), &xml);
        let (_, size, _) = token(&first).unwrap();
        assert_eq!(size, Some(want.len()), "{verb}: completeListSize");
    }
}
