//! The provider of one request: the verbs Identify, ListSets, ListMetadataFormats and
//! GetRecord, the records it writes, and what it reads of the Archive (its items, their
//! metadata files, the index); the list verbs are in [`super::lists`].

use std::rc::Rc;

use crate::archive::Archive;
use crate::config::Config;
use crate::item::{Item, State};
use crate::layout::Col;
use crate::oai::document::{datestamp, Document};
use crate::oai::metadata::{known_schema, read_metadata, root_schema};
use crate::oai::request::{error, Args, Failure, OaiError, Verb};
use crate::oai_index::Index;
use ::ibi::{shown, Rep};

pub(super) struct Provider<'a> {
    pub(super) archive: &'a Archive,
    pub(super) log: &'a mut Vec<String>,
    /// `col/`, opened once for the request.
    pub(super) col: Option<Rc<Col>>,
    /// POSIX second of the request.
    pub(super) now: i64,
}

impl Provider<'_> {
    pub(super) fn config(&self) -> &Config {
        self.archive.config()
    }

    /// The answer to `verb` with `args`, written in `doc` (`attributes`: those of its
    /// `request` element). The checks that need no reading come first, so that the
    /// request element is written only for an answer that is not an error of the
    /// arguments.
    pub(super) fn answer(
        mut self,
        verb: Verb,
        args: &Args,
        doc: &mut Document,
        attributes: &[(&str, &str)],
    ) -> Result<(), Failure> {
        match verb {
            Verb::Identify => {
                doc.request(attributes);
                self.identify(doc);
                Ok(())
            }
            Verb::ListSets => Err(list_sets(args).into()),
            Verb::ListMetadataFormats => self.list_metadata_formats(args, doc, attributes),
            Verb::GetRecord => self.get_record(args, doc, attributes),
            Verb::ListIdentifiers | Verb::ListRecords => self.list(verb, args, doc, attributes),
        }
    }

    /// ListMetadataFormats: those of one record, or every one announced.
    fn list_metadata_formats(
        &mut self,
        args: &Args,
        doc: &mut Document,
        attributes: &[(&str, &str)],
    ) -> Result<(), Failure> {
        let formats = match args.get("identifier") {
            Some(id) => {
                let item = self.record_item(id)?;
                let formats = self.item_formats(&item);
                if formats.is_empty() {
                    return Err(error(
                        "noMetadataFormats",
                        "this item has no metadata format that can be answered",
                    )
                    .into());
                }
                formats
            }
            None => {
                let index = self.index()?;
                self.all_formats(&index)
            }
        };
        doc.request(attributes);
        doc.open("ListMetadataFormats");
        doc.text("\n");
        for (f, (schema, namespace)) in formats {
            doc.open("metadataFormat");
            doc.element("metadataPrefix", &f);
            doc.element("schema", &schema);
            doc.element("metadataNamespace", &namespace);
            doc.end("metadataFormat");
        }
        doc.end("ListMetadataFormats");
        Ok(())
    }

    /// GetRecord: one record in one format.
    fn get_record(
        &mut self,
        args: &Args,
        doc: &mut Document,
        attributes: &[(&str, &str)],
    ) -> Result<(), Failure> {
        let id = args.get("identifier").unwrap_or_default();
        let prefix = args.get("metadataPrefix").unwrap_or_default();
        let item = self.record_item(id)?;
        let seconds = self.archive.timestamp(&item);
        let metadata = if item.state == State::Deleted {
            if !disseminates(&item, prefix) {
                return Err(cannot_disseminate(prefix).into());
            }
            None
        } else {
            let file = item
                .formats
                .get(prefix)
                .ok_or_else(|| cannot_disseminate(prefix))?;
            Some(
                self.metadata(&item, file)
                    .ok_or_else(|| cannot_disseminate(prefix))?,
            )
        };
        doc.request(attributes);
        doc.open("GetRecord");
        doc.text("\n");
        self.record(doc, &item, seconds, metadata.as_deref());
        doc.end("GetRecord");
        Ok(())
    }

    fn identify(&mut self, doc: &mut Document) {
        let config = self.config();
        let name = crate::face::repository_name(config);
        let email = config
            .oai
            .adminemail
            .clone()
            .or_else(|| config.registration.as_ref().map(|r| r.adminemail.clone()))
            .unwrap_or_else(|| {
                format!("postmaster@{}", ::ibi::ip::host_of(&config.archiveaddress))
            });
        let earliest = self.earliest();
        let base = config.service_url();
        doc.open("Identify");
        doc.text("\n");
        doc.element("repositoryName", &name);
        doc.element("baseURL", &base);
        doc.element("protocolVersion", "2.0");
        doc.element("adminEmail", &email);
        doc.element("earliestDatestamp", &datestamp(earliest));
        doc.element("deletedRecord", "persistent");
        doc.element("granularity", "YYYY-MM-DDThh:mm:ssZ");
        // What is exposed, in Dublin Core (the description the protocol's guidelines
        // suggest for free text).
        doc.open("description");
        doc.open_with(
            "oai_dc:dc",
            &[
                ("xmlns:oai_dc", "http://www.openarchives.org/OAI/2.0/oai_dc/"),
                ("xmlns:dc", "http://purl.org/dc/elements/1.1/"),
                ("xsi:schemaLocation", "http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd"),
            ],
        );
        doc.element(
            "dc:description",
            "Records are the metadata items of this IBI Archive, one per item, in each format the item holds; a data item without a metadata item has no record. The identifier of a record is its metadata item's persistent URL, which stays the same when the item moves to another Archive. A metadata item removed is kept as a deleted record.",
        );
        doc.end("oai_dc:dc");
        doc.end("description");
        doc.end("Identify");
    }

    /// The earliest datestamp: the index's first line; else the epoch (a lower bound the
    /// protocol allows, found without reading every item).
    fn earliest(&self) -> i64 {
        Index::open(&self.archive.var())
            .and_then(|i| i.line_at(i.start()))
            .and_then(Result::ok)
            .map_or(0, |(e, _)| e.seconds.max(0))
    }

    /// The formats of one record with their schemas and namespaces: those whose file
    /// can be answered (a tombstone: those it had, else oai_dc).
    fn item_formats(&mut self, item: &Item) -> Vec<(String, (String, String))> {
        if item.state == State::Deleted {
            let mut names: Vec<String> = item.formats.keys().cloned().collect();
            if names.is_empty() {
                names.push("oai_dc".into());
            }
            return names
                .into_iter()
                .map(|f| {
                    let schema = self.format_schema(&f, None);
                    (f, schema)
                })
                .collect();
        }
        let mut out = Vec::new();
        for (f, file) in &item.formats {
            let Some(xml) = self.metadata(item, file) else {
                continue;
            };
            let schema = self.format_schema(f, Some(&xml));
            out.push((f.clone(), schema));
        }
        out
    }

    /// Every format announced, with its schema and namespace: oai_dc, and those of the
    /// index's line of formats.
    fn all_formats(&mut self, index: &Index) -> Vec<(String, (String, String))> {
        let mut names = std::collections::BTreeSet::from(["oai_dc".to_string()]);
        names.extend(index.formats.iter().cloned());
        names
            .into_iter()
            .map(|f| {
                let schema = self.format_schema(&f, None);
                (f, schema)
            })
            .collect()
    }

    /// The schema and namespace of a format: known, else what the root element of one of
    /// its files declares (as it is in the index; without the index, while it is built,
    /// the file `own` of the record asked about), else the format's name.
    fn format_schema(&mut self, prefix: &str, own: Option<&[u8]>) -> (String, String) {
        if let Some(known) = known_schema(prefix) {
            return known;
        }
        // The first records of that format, in the index's order (at most 8 files read,
        // among its first 10,000 lines): the first whose file names a schema, else the
        // first whose root has a namespace. One answer per format, whichever record is
        // asked about.
        let mut first: Option<(String, String)> = None;
        let mut tried = 0;
        let mut consider = |xml: Option<Vec<u8>>| -> bool {
            tried += 1;
            if let Some(found) = xml.as_deref().and_then(root_schema) {
                if !found.0.is_empty() {
                    first = Some(found);
                    return true;
                }
                first.get_or_insert(found);
            }
            tried == 8
        };
        if let Some(index) = Index::open(&self.archive.var()) {
            let lines: Vec<String> = index
                .lines_from(index.start())
                .map_while(Result::ok)
                .take(10_000)
                .filter(|(e, _)| !e.deleted && e.formats.iter().any(|f| f == prefix))
                .map(|(e, _)| e.rep)
                .take(8)
                .collect();
            for rep in lines {
                let xml = self.load(&rep).and_then(|item| {
                    let file = item.formats.get(prefix)?.clone();
                    self.metadata(&item, &file)
                });
                if consider(xml) {
                    break;
                }
            }
        } else if let Some(xml) = own {
            consider(Some(xml.to_vec()));
        }
        first.unwrap_or_default()
    }

    /// The metadata item `id` names (its persistent URL, any spelling of its IBI), or
    /// idDoesNotExist.
    fn record_item(&mut self, id: &str) -> Result<Item, OaiError> {
        let not_here = || {
            error(
                "idDoesNotExist",
                format!(
                    "{} is not the identifier of a record of this Archive",
                    shown(id)
                ),
            )
        };
        let (_, ibi) = self
            .config()
            .ibi_of_persistent_url(id)
            .ok_or_else(not_here)?;
        let lookup = self.archive.store().find(&ibi);
        self.log.extend(lookup.log.into_lines());
        match lookup.item {
            Some(item) if item.is_record() => Ok(item),
            _ => Err(not_here()),
        }
    }

    /// The item in `col/<rel>`, if it loads.
    /// (A directory without item.toml is no item, and says nothing; at most 8 lines go
    /// to the log, however many items of a page are faulty.)
    pub(super) fn load(&mut self, rel: &str) -> Option<Item> {
        let rep = Rep::parse(rel).ok()?;
        let dir = self.col.as_ref()?.item(rel).ok()?;
        if !dir.has_item_toml() {
            return None;
        }
        match Item::load(&dir, rep) {
            Ok(item) => Some(item),
            Err(e) => {
                if self.log.len() < 8 {
                    self.log.push(e.to_string());
                }
                None
            }
        }
    }

    pub(super) fn header(&self, doc: &mut Document, item: &Item, seconds: i64) {
        if item.state == State::Deleted {
            doc.open_with("header", &[("status", "deleted")]);
        } else {
            doc.open("header");
        }
        // A record's identifier: its item's persistent URL.
        let identifier = item.persistent_url(self.config());
        doc.element("identifier", &identifier);
        doc.element("datestamp", &datestamp(seconds));
        doc.end("header");
    }

    pub(super) fn record(
        &self,
        doc: &mut Document,
        item: &Item,
        seconds: i64,
        metadata: Option<&[u8]>,
    ) {
        doc.open("record");
        self.header(doc, item, seconds);
        if let Some(xml) = metadata {
            doc.open("metadata");
            doc.fragment(xml);
            doc.end("metadata");
        }
        doc.end("record");
    }

    /// The metadata file `file` of `item`, as XML to put inside `metadata`; `None`, with a
    /// line in the log, when it cannot be read or is not one well-formed element.
    pub(super) fn metadata(&mut self, item: &Item, file: &str) -> Option<Vec<u8>> {
        match read_metadata(item, file) {
            Ok(xml) => Some(xml),
            Err(e) => {
                self.log.push(format!(
                    "{}/{file}: {e}: left out of OAI-PMH answers",
                    item.doc().display()
                ));
                None
            }
        }
    }
}

/// ListSets: this Archive has no sets (and so gave no token for them).
fn list_sets(args: &Args) -> OaiError {
    match args.get("resumptionToken") {
        Some(t) => error(
            "badResumptionToken",
            format!(
                "{} is not a token this Archive gave: it has no sets",
                shown(t)
            ),
        ),
        None => error("noSetHierarchy", "this Archive has no sets"),
    }
}

/// Whether `item` has a record in `prefix`: a format of it, or, for a tombstone, oai_dc
/// (every record of a repository is in oai_dc).
pub(super) fn disseminates(item: &Item, prefix: &str) -> bool {
    item.formats.contains_key(prefix) || (item.state == State::Deleted && prefix == "oai_dc")
}

pub(super) fn cannot_disseminate(prefix: &str) -> OaiError {
    error(
        "cannotDisseminateFormat",
        format!(
            "{} is not a metadata format of this record or Archive",
            shown(prefix)
        ),
    )
}
