//! The OAI-PMH 2.0 data provider (the Open Archives Initiative Protocol for Metadata
//! Harvesting), at the Archive service URL: a request to the service with a `verb` and no
//! `servicesubject` is answered here, the same under the CGI and `serve`.
//!
//! - Records are the Archive's metadata items (`contenttype = "Metadata"`): one record per
//!   item, in each format of its `[formats]`, the XML of that file of its doc/. A data item
//!   without a metadata item has no record (Identify says so).
//! - The OAI identifier of a record is its metadata item's persistent URL
//!   ([`Item::persistent_url`](crate::item::Item::persistent_url): of its IBIp, else its
//!   rep): a URI, the same whichever Archive holds the item, and what a reader follows.
//! - The datestamp is the item's timestamp (seconds, UTC); a tombstone (state Deleted) is a
//!   deleted record, kept for ever (`deletedRecord` persistent).
//! - No sets.
//! - Lists come in pages of `[oai] page_size` records (100 by default), in the order of
//!   `var/oai-records` ([`crate::oai_index`]: datestamp, then rep), found there by a binary
//!   search. No request walks col/: an index missing, unreadable or older than col/ is
//!   built apart from the request ([`crate::oai_build`]), a list meanwhile answered from
//!   the index as it is, or `503` with `Retry-After` without one. A resumption token
//!   holds where the next page starts, signed with the Archive's secret (no state is kept
//!   between requests).
//! - Every answer is written by quick-xml's writer; a record's metadata is the file's XML
//!   read by quick-xml and written again, so that a file that is not well-formed UTF-8
//!   XML, or larger than [`metadata::MAX_METADATA`], is left out (one line in the log) and never
//!   breaks the answer.
//!
//! The module's map, one concept a file; each imports only those below it, but
//! [`lists`], which adds the list verbs to [`provider`]'s `Provider`:
//! - this file: the entry points, [`is_oai`], [`is_oai_request`] and [`answer`];
//! - [`provider`]: the provider of one request: Identify, ListSets, ListMetadataFormats,
//!   GetRecord, the records written, the items and files read;
//! - [`lists`]: ListIdentifiers and ListRecords, their pages from the index;
//! - [`token`]: a list's state and its signed resumption token;
//! - [`metadata`]: what a metadata file may be to be answered, the known formats (what
//!   `check` and the index ask too: it imports nothing of the index);
//! - [`document`]: the XML document written;
//! - [`request`]: the base URL, the verb and arguments of a request, the protocol's
//!   errors.

mod document;
mod lists;
pub(crate) mod metadata;
mod provider;
mod request;
mod token;

use std::rc::Rc;

use crate::archive::Archive;
use crate::http::Answer;
use crate::layout::Col;
use ::ibi::query::Query;

use document::Document;
use provider::Provider;
use request::{parse_request, Failure};

/// The media type of every answer.
const CONTENT_TYPE: &str = "text/xml; charset=utf-8";

/// Whether a service request without `servicesubject` is one for the data provider: a
/// `verb` (the service looks at `servicesubject` first).
pub fn is_oai(query: &Query) -> bool {
    query.get("verb").is_some()
}

/// Whether a whole request is one for the data provider: a `verb` and no
/// `servicesubject` (what may be POSTed).
pub fn is_oai_request(query: &Query) -> bool {
    is_oai(query) && query.get("servicesubject").is_none()
}

/// The answer to an OAI-PMH request `query` at POSIX second `now`.
pub fn answer(archive: &Archive, query: &Query, now: i64) -> Answer {
    let mut doc = Document::new(now, &archive.config().service_url());
    let mut log = Vec::new();
    match parse_request(query) {
        Err(e) => {
            // badVerb and badArgument: the request element has no attributes.
            doc.request(&[]);
            doc.error(&e);
        }
        Ok((verb, args)) => {
            let attributes: Vec<(&str, &str)> = std::iter::once(("verb", verb.name()))
                .chain(args.given.iter().map(|(n, v)| (n.as_str(), v.as_str())))
                .collect();
            let provider = Provider {
                archive,
                log: &mut log,
                col: Col::open(archive.root()).ok().map(Rc::new),
                now,
            };
            match provider.answer(verb, &args, &mut doc, &attributes) {
                Ok(()) => {}
                Err(Failure::Unavailable { retry_after }) => {
                    // The flow control of the protocol (OAI-PMH 2.0, §3.1.2.2): a
                    // harvester asks again after Retry-After.
                    return Answer {
                        status: 503,
                        content_type: "text/plain",
                        body: format!(
                            "the index of this Archive's records is being built: try again in {retry_after} s\n"
                        )
                        .into_bytes(),
                        headers: vec![("Retry-After".into(), retry_after.to_string())],
                        log,
                    };
                }
                Err(Failure::Protocol(e)) => {
                    let attrs = if matches!(e.code, "badArgument" | "badVerb") {
                        &[][..]
                    } else {
                        &attributes[..]
                    };
                    doc.restart(now);
                    doc.request(attrs);
                    doc.error(&e);
                }
            }
        }
    }
    Answer {
        status: 200,
        content_type: CONTENT_TYPE,
        body: doc.finish(),
        headers: Vec::new(),
        log,
    }
}
