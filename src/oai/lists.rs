//! The list verbs (ListIdentifiers, ListRecords): a list's pages from `var/oai-records`,
//! found by a binary search and believed only while each item says the same; the index
//! built apart from the request when it is missing or older than `col/`.

use crate::item::is_format_name;
use crate::item::{Item, State};
use crate::oai::document::Document;
use crate::oai::provider::{cannot_disseminate, disseminates, Provider};
use crate::oai::request::{error, parse_date, Args, Failure, OaiError, Verb};
use crate::oai::token::{ListState, Position, Signer};
use crate::oai_build;
use crate::oai_index::{self, Index};
use ::ibi::shown;

/// Most bytes of the index a new list counts its size in (about 35,000 lines): past
/// them, the size is estimated.
const MAX_COUNTED: u64 = 2 * 1024 * 1024;
/// Most bytes of metadata in one page: the page ends early past it.
const MAX_PAGE_METADATA: usize = 8 * 1024 * 1024;

/// One record found for a page: the item and its datestamp.
struct Found {
    item: Item,
    seconds: i64,
}

/// A page of a list: its records, and where the next begins (`None`: this is the last).
struct Page {
    records: Vec<Found>,
    next: Option<Position>,
    total: Option<u64>,
}

impl Page {
    /// Where a list continues after `found`.
    fn position_after(&self, found: &Found) -> Position {
        Position::Index(found.seconds, found.item.rep.as_str().to_string())
    }
}

/// The records of a page answered: their index in it, and their metadata for ListRecords.
type Kept = Vec<(usize, Option<Vec<u8>>)>;

impl Provider<'_> {
    /// ListIdentifiers and ListRecords: a page of the list its arguments or its token
    /// give, and the token of the next.
    pub(super) fn list(
        &mut self,
        verb: Verb,
        args: &Args,
        doc: &mut Document,
        attributes: &[(&str, &str)],
    ) -> Result<(), Failure> {
        let headers_only = verb == Verb::ListIdentifiers;
        let signer = Signer::new(self.archive.url_keys(), self.config());
        let state = match args.get("resumptionToken") {
            Some(t) => ListState::from_token(t, headers_only, &signer).ok_or_else(|| {
                error(
                    "badResumptionToken",
                    format!(
                        "{} is not a token this Archive gave for {}",
                        shown(t),
                        verb.name()
                    ),
                )
            })?,
            None => self.new_list(args, headers_only)?,
        };
        // The arguments judged, the index is needed (a bad argument or token is told at
        // once, built index or not).
        let index = self.index()?;
        // A format the repository does not support: oai_dc (every record's, the
        // protocol's own) and the formats of the index's records are what
        // ListMetadataFormats announces, and any other is cannotDisseminateFormat (not
        // noRecordsMatch: no record is in it, whatever the dates).
        let supported = state.prefix == "oai_dc" || index.formats.contains(&state.prefix);
        if state.after.is_none() && !supported {
            return Err(cannot_disseminate(&state.prefix).into());
        }
        let fresh = state.after.is_none() && state.cursor == 0;
        let (state, page, kept) = self.answered_page(&index, state, fresh)?;
        let last = kept.last().map_or(0, |(i, _)| *i);
        let next = if last + 1 < page.records.len() {
            Some(page.position_after(&page.records[last]))
        } else {
            page.next.clone()
        };
        doc.request(attributes);
        doc.open(verb.name());
        doc.text("\n");
        let handed = kept.len() as u64;
        for (i, metadata) in kept {
            let found = &page.records[i];
            if headers_only {
                self.header(doc, &found.item, found.seconds);
            } else {
                self.record(doc, &found.item, found.seconds, metadata.as_deref());
            }
        }
        if next.is_some() || !fresh {
            let total = state.total.or(page.total);
            resumption(doc, &state, handed, total, next, &signer);
        }
        doc.end(verb.name());
        Ok(())
    }

    /// A page of the list `state` from `index`, and what of it is answered (the index of
    /// each record in the page, and its metadata for ListRecords), with the state it was
    /// found at: a live record whose file does not read is left out, and a page whose
    /// every record is left out gives way to the next, since a list holds at least one
    /// record.
    fn answered_page(
        &mut self,
        index: &Index,
        mut state: ListState,
        fresh: bool,
    ) -> Result<(ListState, Page, Kept), Failure> {
        loop {
            let page = self.page(index, &state)?;
            if page.records.is_empty() {
                if fresh {
                    return Err(error(
                        "noRecordsMatch",
                        "no record has that format and a datestamp in those dates",
                    )
                    .into());
                }
                return Err(error(
                    "badResumptionToken",
                    "the list has changed since this token was given: harvest again from its start",
                )
                .into());
            }
            let kept = self.kept(&page, &state);
            if !kept.is_empty() {
                return Ok((state, page, kept));
            }
            match page.next {
                Some(next) => {
                    state = ListState {
                        after: Some(next),
                        ..state
                    };
                }
                None => {
                    return Err(error(
                        "noRecordsMatch",
                        "no record of the rest of the list can be answered in that format",
                    )
                    .into())
                }
            }
        }
    }

    /// The records of `page` answered, by their index in it, with their metadata for
    /// ListRecords: a live record whose file does not read left out (with its line in
    /// the log), the page ended early past [`MAX_PAGE_METADATA`].
    fn kept(&mut self, page: &Page, state: &ListState) -> Kept {
        let mut kept = Vec::new();
        let mut bytes = 0;
        for (i, found) in page.records.iter().enumerate() {
            let metadata = if state.headers_only || found.item.state == State::Deleted {
                None
            } else {
                let file = found
                    .item
                    .formats
                    .get(&state.prefix)
                    .cloned()
                    .unwrap_or_default();
                match self.metadata(&found.item, &file) {
                    Some(m) => Some(m),
                    None => continue,
                }
            };
            bytes += metadata.as_ref().map_or(0, Vec::len);
            kept.push((i, metadata));
            if bytes > MAX_PAGE_METADATA {
                break;
            }
        }
        kept
    }

    /// A new list's state from its arguments.
    fn new_list(&self, args: &Args, headers_only: bool) -> Result<ListState, OaiError> {
        if args.get("set").is_some() {
            return Err(error("noSetHierarchy", "this Archive has no sets"));
        }
        let prefix = args.get("metadataPrefix").unwrap_or_default();
        let date = |name: &str, until: bool| -> Result<Option<(i64, bool)>, OaiError> {
            match args.get(name) {
                None => Ok(None),
                Some(v) => parse_date(v, until).map(Some).ok_or_else(|| {
                    error(
                        "badArgument",
                        format!("{name} {} is not a date of the form YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ", shown(v)),
                    )
                }),
            }
        };
        let from = date("from", false)?;
        let until = date("until", true)?;
        if let (Some((f, fs)), Some((u, us))) = (from, until) {
            if fs != us {
                return Err(error(
                    "badArgument",
                    "from and until are not of the same granularity",
                ));
            }
            if f > u {
                return Err(error("badArgument", "from is later than until"));
            }
        }
        if !is_format_name(prefix) {
            return Err(cannot_disseminate(prefix));
        }
        Ok(ListState {
            headers_only,
            prefix: prefix.to_string(),
            from: from.map(|(s, _)| s),
            until: until.map(|(s, _)| s),
            cursor: 0,
            total: None,
            after: None,
        })
    }

    /// One page of the list `state`, from `index`. A line that does not read makes the
    /// index unusable: it is built again, and the harvester asked to come back.
    fn page(&mut self, index: &Index, state: &ListState) -> Result<Page, Failure> {
        let e = match self.index_page(index, state) {
            Ok(page) => return Ok(page),
            Err(e) => e,
        };
        let var = self.archive.var();
        self.log.push(format!(
            "{}: {e}; it is built again",
            var.join(oai_index::FILE_NAME).display()
        ));
        match oai_build::start(self.archive.root(), self.now) {
            // Built in the request: the page from the new index (once).
            oai_build::Started::Built => match Index::open(&var) {
                Some(index) => self
                    .index_page(&index, state)
                    .map_err(|_| self.unavailable("it was built but does not read", 60)),
                None => Err(self.unavailable("it was built but does not read", 60)),
            },
            started => Err(self.not_yet(started)),
        }
    }

    /// The index of the lists, built first when there is none (the answer is then a
    /// `503` unless this process builds in the request); an index older than col/ is
    /// answered as it is while it is built again apart from the request. Never a walk
    /// of col/: its staleness is told by the stamp ([`oai_build::is_fresh`]).
    pub(super) fn index(&mut self) -> Result<Index, Failure> {
        let var = self.archive.var();
        let path = var.join(oai_index::FILE_NAME);
        if let Some(index) = Index::open(&var) {
            let fresh = self
                .col
                .as_ref()
                .is_none_or(|col| oai_build::is_fresh(&var, col));
            if fresh {
                return Ok(index);
            }
            match oai_build::start(self.archive.root(), self.now) {
                oai_build::Started::Built => {
                    return Index::open(&var)
                        .ok_or_else(|| self.unavailable("it was built but does not read", 60))
                }
                oai_build::Started::Begun { .. } => self.log.push(format!(
                    "{}: col/ has changed since it was written; it is built again apart from the request, and answered as it is meanwhile",
                    path.display()
                )),
                oai_build::Started::Paced {
                    retry_after,
                    failed: Some(why),
                } => self.log.push(format!(
                    "{}: col/ has changed since it was written, and its last build {why}; it is built again in {retry_after} s, and answered as it is meanwhile",
                    path.display()
                )),
                oai_build::Started::UnderWay { .. } | oai_build::Started::Paced { .. } => {}
                oai_build::Started::Impossible(why) => self.log.push(format!(
                    "{}: col/ has changed since it was written, and it cannot be built again here: {why}; answered as it is (run ibi-archive check where var/ can be written)",
                    path.display()
                )),
            }
            return Ok(index);
        }
        match oai_build::start(self.archive.root(), self.now) {
            oai_build::Started::Built => Index::open(&var)
                .ok_or_else(|| self.unavailable("it was built but does not read", 60)),
            started => Err(self.not_yet(started)),
        }
    }

    /// `503`, with a line in the log when a build begins, cannot begin, or last failed.
    fn not_yet(&mut self, started: oai_build::Started) -> Failure {
        match started {
            oai_build::Started::Built => Failure::Unavailable { retry_after: 1 },
            oai_build::Started::Begun { retry_after } => self.unavailable(
                "absent or unreadable: it is built apart from the request, and lists answer 503 meanwhile",
                retry_after,
            ),
            oai_build::Started::UnderWay { retry_after } => Failure::Unavailable { retry_after },
            oai_build::Started::Paced {
                retry_after,
                failed: None,
            } => Failure::Unavailable { retry_after },
            oai_build::Started::Paced {
                retry_after,
                failed: Some(why),
            } => self.unavailable(
                &format!("absent, and its last build {why}; it is built again in {retry_after} s"),
                retry_after,
            ),
            oai_build::Started::Impossible(why) => self.unavailable(
                &format!("absent, and it cannot be built here: {why}; lists answer 503 until ibi-archive check writes it where var/ can be written"),
                3600,
            ),
        }
    }

    fn unavailable(&mut self, why: &str, retry_after: u64) -> Failure {
        self.log.push(format!(
            "{}: {why}",
            self.archive.var().join(oai_index::FILE_NAME).display()
        ));
        Failure::Unavailable { retry_after }
    }

    /// The page of the list `state` in `index`: from the line after the last page's
    /// (or the first at or after `from`, by a binary search), the lines it hands out and
    /// the one after, each believed only while its item says the same.
    fn index_page(&mut self, index: &Index, state: &ListState) -> std::io::Result<Page> {
        let size = self.config().oai.page_size;
        let at = match &state.after {
            Some(Position::Index(s, r)) => index.seek((*s, r), true)?,
            _ => index.seek((state.from.unwrap_or(i64::MIN), ""), false)?,
        };
        let total = match (state.total, &state.after) {
            (Some(t), _) => Some(t),
            (None, None) => Some(self.count(index, at, state)?),
            (None, Some(_)) => None,
        };
        let mut records = Vec::new();
        let mut next = None;
        for line in index.lines_from(at) {
            let (entry, _) = line?;
            if state.until.is_some_and(|u| entry.seconds > u) {
                break;
            }
            if !entry_has(&entry, &state.prefix) {
                continue;
            }
            let Some(item) = self.load(&entry.rep) else {
                continue;
            };
            // Believed only while the item says the same (the datestamp of an item.toml
            // without timestamp is the newest modification in its directory, as check
            // worked it out: not worked out again here).
            if !item.is_record()
                || (item.state == State::Deleted) != entry.deleted
                || item.timestamp.is_some_and(|t| t != entry.seconds)
                || !disseminates(&item, &state.prefix)
            {
                continue;
            }
            if records.len() == size {
                // One more there: this page ends before it.
                next = records
                    .last()
                    .map(|f: &Found| Position::Index(f.seconds, f.item.rep.as_str().to_string()));
                break;
            }
            records.push(Found {
                seconds: entry.seconds,
                item,
            });
        }
        Ok(Page {
            records,
            next,
            total,
        })
    }

    /// How many lines of the index from `at` are in the list (their format and dates;
    /// a line whose item has changed since is counted: the size is then a bound), once
    /// per list: counted in the first [`MAX_COUNTED`] bytes of the list's lines, past
    /// them estimated in proportion (completeListSize, which the protocol makes
    /// optional, is a guide to the harvester, not a promise: the list may change while
    /// it is harvested).
    fn count(&self, index: &Index, at: u64, state: &ListState) -> std::io::Result<u64> {
        let end = match state.until {
            Some(u) => index.seek((u, "\u{10ffff}"), true)?,
            None => index.end(),
        };
        Ok(index.count(at, end, &state.prefix, Some(MAX_COUNTED))?.0)
    }
}

/// The `resumptionToken` element of a page of the list `state` that handed out `handed`
/// records: the token of the page at `next`, empty on the last page.
fn resumption(
    doc: &mut Document,
    state: &ListState,
    handed: u64,
    total: Option<u64>,
    next: Option<Position>,
    signer: &Signer<'_>,
) {
    let cursor = state.cursor.to_string();
    let size = total.map(|t| t.max(state.cursor + handed).to_string());
    let mut attrs: Vec<(&str, &str)> = Vec::new();
    if let Some(s) = &size {
        attrs.push(("completeListSize", s));
    }
    attrs.push(("cursor", &cursor));
    match next {
        Some(at) => {
            let token = ListState {
                cursor: state.cursor + handed,
                total,
                after: Some(at),
                ..state.clone()
            }
            .token(signer);
            doc.open_with("resumptionToken", &attrs);
            doc.text(&token);
            doc.end("resumptionToken");
        }
        None => doc.empty_with("resumptionToken", &attrs),
    }
}

/// Whether a line of the index is in the list of format `prefix`.
fn entry_has(entry: &oai_index::Entry, prefix: &str) -> bool {
    entry.formats.iter().any(|f| f == prefix) || (entry.deleted && prefix == "oai_dc")
}
