//! The landing page of an item (GetFileList, resolution standard §9.2 CRIARPARURL), at
//! `<baseurl>/<archiveserviceibi>/filelist/<rep>`: what it is (title, creators, date,
//! language, from its metadata item's `oai_dc` record), how to cite it (its persistent
//! URL, [`crate::config::Config::persistent_url`], and a citation), its files, its
//! editions, translations and metadata formats, in Portuguese or English
//! (Accept-Language); schema.org JSON-LD embedded, or alone for a client that prefers
//! `application/ld+json` (Accept); the same links as Signposting `Link` headers. A
//! tombstone (410) keeps the citation, with the removal date and its `reason`. The
//! protocol reference (docs/src/protocol.md), "Landing pages", says what is written where.
//!
//! Bounded whatever the item holds: at most [`MAX_SHOWN`] files are looked at (of
//! `layout::MAX_LISTED_ENTRIES` directory entries read), [`MAX_RELATED`] translations,
//! one metadata record of at most [`::ibi::dc::MAX_RECORD`] bytes, and the `Link`
//! header stays under [`MAX_LINK_HEADER`] bytes.

use std::net::IpAddr;

use serde::Serialize;

use crate::archive::Archive;
use crate::config::Config;
use crate::face::{self, STYLE};
use crate::http::Answer;
use crate::http::{content_type, Headers};
use crate::item::{Access, ContentType, Item, State, MAX_REASON};
use crate::layout;
use ::ibi::cite::{self, Work};
use ::ibi::dc::{DublinCore, MAX_RECORD};
use ::ibi::escape::{is_http_url, link_target, uri_reference};
use ::ibi::markup::escape_html;
use ::ibi::negotiate::{
    citation_options_of, negotiate, preferences, Given, LinksetFormat, PageLang, Wanted,
    OAI_DC_PROFILE,
};
use ::ibi::query::Query;
use ::ibi::schema::{Agent, Correction};
use ::ibi::Ibi;

/// Most files a page shows (and its JSON-LD lists).
pub const MAX_SHOWN: usize = 100;
/// Most files announced as `rel="item"` links...
pub const MAX_ITEM_LINKS: usize = 32;
/// ... and most bytes of the whole `Link` header: Apache refuses a CGI header line longer
/// than 8 KB. A link that would pass it is left out of the header (item links first: the
/// others come before them), and the page's `<link>` elements are the same.
pub const MAX_LINK_HEADER: usize = 6000;
/// Most translations a page links to.
pub const MAX_RELATED: usize = 32;

/// The media type of an item's HTML landing page.
const HTML: &str = "text/html; charset=utf-8";

/// The page for the item named `ibi` (as it appears in the page's URL,
/// `::ibi::persistent::split_file_list_path`), for a browser at `client` sending `headers` and the
/// query `query` (still %-escaped: `format=` asks what an `Accept` asks), with the lines
/// for the log its lookup wrote.
pub fn page(
    archive: &Archive,
    ibi: &[u8],
    client: Option<IpAddr>,
    headers: &Headers,
    query: &[u8],
) -> Answer {
    let Some(parsed) = std::str::from_utf8(ibi)
        .ok()
        .and_then(|ibi| Ibi::parse(ibi).ok())
    else {
        return html(404, "Not found", "<p>This is not the IBI of an item.</p>");
    };
    let asked = match asked(headers, query) {
        Ok(asked) => asked,
        Err(answer) => return *answer,
    };
    let found = archive.store().find(&parsed);
    let mut log = found.log.into_lines();
    let mut answer = match &found.item {
        Some(item) => {
            let lang = PageLang::of(&preferences(headers.accept_language.as_deref()));
            let landing = Landing::of(archive, item, client, lang, asked.wanted, &mut log);
            match asked.wanted {
                Wanted::JsonLd => landing.json_ld_answer(asked.by_query),
                Wanted::Citation(format) => {
                    // A link's query names its style and locale; an `Accept` its own
                    // (else the query's).
                    let accept = headers.accept.as_deref().filter(|_| !asked.by_query);
                    let options = citation_options_of(accept, Some(&asked.query));
                    landing.citation_answer(format, &options, asked.by_query.then_some(query))
                }
                Wanted::Linkset(format) => landing.linkset_answer(format, asked.by_query),
                Wanted::Default | Wanted::OaiDc => landing.html_answer(),
            }
        }
        None => html(
            404,
            "Not found",
            "<p>This Archive holds no item with this IBI.</p>",
        ),
    };
    answer.log = log;
    answer
}

/// What a request of a landing page asks for, whether its query asked it, and the query
/// (decoded once: `format=`, `style=` and `locale=` are read from it).
struct Asked {
    wanted: Wanted,
    by_query: bool,
    query: Query,
}

/// What the query's `format=` asks (a link's way), else what `Accept` asks. A query that
/// does not decode (a bad `%` escape, a `format=` that is not UTF-8) is answered 400, as
/// the service answers one; so is a `format=` that names nothing known, naming those
/// there are.
fn asked(headers: &Headers, query: &[u8]) -> Result<Asked, Box<Answer>> {
    let malformed = |e: ::ibi::query::QueryError| {
        let text = format!("malformed query string: {e}\n");
        Box::new(Answer {
            log: vec![format!("landing page: malformed query string: {e}")],
            ..Answer::text(400, text)
        })
    };
    let decoded = Query::parse(query).map_err(malformed)?;
    let format = decoded.get_str("format").map_err(malformed)?;
    let Some(format) = format else {
        return Ok(Asked {
            wanted: negotiate(headers.accept.as_deref(), Given::Html),
            by_query: false,
            query: decoded,
        });
    };
    match Wanted::by_query_name(format) {
        Some(wanted) => Ok(Asked {
            wanted,
            by_query: true,
            query: decoded,
        }),
        None => {
            let known: Vec<&str> = Wanted::DESCRIPTIONS
                .iter()
                .filter_map(|w| w.query_name())
                .collect();
            let shown = ::ibi::shown(format);
            Err(Box::new(Answer {
                log: vec![format!("landing page: unknown format= {shown}")],
                ..Answer::text(
                    400,
                    format!("no such format: {shown} (one of: {})\n", known.join(", ")),
                )
            }))
        }
    }
}

/// The Signposting links of a file of the item `rep` cited as `cited_as` (its IBIp, else
/// its rep: `Item::cited_as`), the `Link` values of `routes::file`: the item's persistent
/// URL (`cite-as`) and its landing page (`collection`). No file is looked at.
pub fn file_links(config: &Config, cited_as: &str, rep: &str) -> Vec<String> {
    let landing = config.landing_url(rep);
    let mut links = vec![
        Link::new(config.persistent_url(cited_as), "cite-as", None),
        Link::new(landing.clone(), "collection", Some("text/html")),
    ];
    links.extend(linkset_links(&landing));
    links.iter().map(Link::header_value).collect()
}

/// The links to the linkset of the item whose landing page is `landing`, in both its
/// forms (RFC 9264): the page's own URL with `?format=linkset-json` and
/// `?format=linkset`.
fn linkset_links(landing: &str) -> [Link; 2] {
    LinksetFormat::ALL.map(|f| {
        Link::new(
            format!("{landing}?format={}", f.name()),
            "linkset",
            Some(f.media_type()),
        )
    })
}

/// What an answer of the page was chosen by, for its `Vary` (see [`Landing::headers`]).
#[derive(Clone, Copy)]
enum Vary {
    /// Asked at a `?format=` URL: no header chose it.
    Nothing,
    /// Chosen by `Accept`.
    Accept,
    /// The HTML page: chosen by `Accept`, written in the language `Accept-Language` chose.
    Page,
}

/// One file shown.
struct FileRow {
    name: String,
    url: String,
    size: u64,
    media_type: &'static str,
}

/// A metadata format of the item, as its metadata item holds it.
struct Format {
    url: String,
    media_type: &'static str,
    profile: Option<&'static str>,
    /// Which format: the `oai_dc` record or the free-form page.
    oai_dc: bool,
}

/// What the files part of the page says.
enum Files {
    /// The files shown, and how many entries were read and left out (a lower bound when
    /// `more_unknown`: the listing stopped at its bound of entries).
    Listed {
        rows: Vec<FileRow>,
        unlisted: usize,
        more_unknown: bool,
    },
    /// Restricted, and the client is outside the licensed networks.
    Withheld,
    /// A tombstone: no file is served.
    Removed,
    /// Not looked at: the answer asked shows no file (a citation).
    Unread,
}

/// Everything a landing page says of an item, worked out once for its HTML, its JSON-LD
/// and its `Link` header.
struct Landing<'a> {
    lang: PageLang,
    config: &'a Config,
    item: &'a Item,
    /// Whether the page depends on the client's network: the item's files, or its
    /// metadata item's record, are shown only inside the licensed networks.
    private: bool,
    status: u16,
    persistent: String,
    ibi: String,
    dc: DublinCore,
    schema_type: &'static str,
    files: Files,
    formats: Vec<Format>,
    next_edition: Option<String>,
    /// The list of its editions at the resolver, for an item with a next edition.
    editions: Option<String>,
    translations: Vec<(String, String)>,
    license: Option<String>,
    /// The landing page's own URL (the linkset's anchor).
    landing: String,
    /// The metadata item, when it is not in this Archive: its record cannot be read
    /// here, and a citation is asked of its landing page (see [`Landing::citation_answer`]).
    metadata_elsewhere: Option<Ibi>,
    /// The accesses counted (`crate::acklog::access_count`); read for the HTML page only.
    accesses: u64,
    /// The URL of the repository's logo (`face::logo_url`).
    logo: Option<String>,
}

impl<'a> Landing<'a> {
    /// What the page says of `item`, as far as the representation `wanted` shows it: a
    /// citation reads the metadata record and no file (a `303` to another Archive not even
    /// that), the access count and the logo are the HTML page's alone.
    fn of(
        archive: &'a Archive,
        item: &'a Item,
        client: Option<IpAddr>,
        lang: PageLang,
        wanted: Wanted,
        log: &mut Vec<String>,
    ) -> Landing<'a> {
        let config = archive.config();
        let html = matches!(wanted, Wanted::Default | Wanted::OaiDc);
        let citation = matches!(wanted, Wanted::Citation(_));
        let access = item.access(config, client);
        let (dc, formats, meta_private, metadata_elsewhere) = metadata(archive, item, client, log);
        let files = match access {
            Access::Deleted => Files::Removed,
            Access::Restricted => Files::Withheld,
            Access::Granted if citation => Files::Unread,
            Access::Granted => list_files(config, item),
        };
        let live = item.state != State::Deleted;
        let is_self = |ibi: &Ibi| {
            ibi.key() == Ibi::Rep(item.rep.clone()).key()
                || item
                    .ibip
                    .as_ref()
                    .is_some_and(|p| ibi.key() == Ibi::Ibip(p.clone()).key())
        };
        let translations = if live {
            item.translations
                .iter()
                .filter(|(_, ibi)| !is_self(ibi))
                .take(MAX_RELATED)
                .map(|(l, ibi)| (l.to_string(), config.persistent_url(ibi.as_str())))
                .collect()
        } else {
            Vec::new()
        };
        let license = dc
            .all("rights")
            .map(str::trim)
            .find(|r| is_http_url(r))
            .map(str::to_string);
        let logo = match (&config.site.logo, &config.service) {
            _ if !html => None,
            (None, _) => None,
            (Some(_), Ibi::Rep(r)) => face::logo_url(config, Some(r.as_str())),
            (Some(_), service) => {
                let found = archive.item(service);
                face::logo_url(config, found.as_ref().map(|s| s.rep.as_str()))
            }
        };
        Landing {
            lang,
            config,
            item,
            private: item.depends_on_network() || meta_private,
            status: if live { 200 } else { 410 },
            persistent: item.persistent_url(config),
            ibi: item
                .ibip
                .as_ref()
                .map_or(item.rep.as_str(), |p| p.as_str())
                .to_string(),
            schema_type: schema_type(dc.all("type")),
            dc,
            files,
            formats,
            next_edition: item
                .nextedition
                .as_ref()
                .filter(|_| live)
                .map(|n| config.persistent_url(n.as_str())),
            editions: item
                .nextedition
                .as_ref()
                .filter(|_| live)
                .map(|_| config.editions_url(item.cited_as())),
            translations,
            license,
            landing: config.landing_url(item.rep.as_str()),
            metadata_elsewhere,
            accesses: if html {
                crate::acklog::access_count(&archive.var(), item.rep.as_str())
            } else {
                0
            },
            logo,
        }
    }

    /// The title, else none (the page then names the item by its IBI).
    fn title(&self) -> Option<&str> {
        self.dc.first("title")
    }

    fn language(&self) -> Option<String> {
        self.dc
            .first("language")
            .map(str::to_string)
            .or_else(|| self.item.language.as_ref().map(ToString::to_string))
    }

    /// The reason of a tombstone, cut to what a page shows.
    fn reason(&self) -> Option<&str> {
        match (&self.item.state, &self.item.reason) {
            (State::Deleted, Some(r)) if !r.trim().is_empty() => {
                Some(::ibi::text::prefix(r.trim(), MAX_REASON))
            }
            _ => None,
        }
    }

    /// The citation the page shows: the formatted reference in the default style (APA,
    /// as [`cite`] writes it), in the page's language.
    fn citation(&self) -> String {
        let options = cite::Options {
            style: None,
            locale: Some(self.lang.code().to_string()),
        };
        cite::render(&self.work(), cite::Format::Bibliography, &options)
            .map(|text| text.trim_end().to_string())
            .unwrap_or_default()
    }

    /// The item's Signposting links, each once, in order: `cite-as`, `type`,
    /// `describedby`, `license`, `author`, then an `item` link to every file shown (none
    /// when the files were not looked at). The one list both the `Link` header
    /// ([`Landing::links`]) and the linkset ([`Landing::linkset`]) write.
    fn signposts(&self) -> Vec<Link> {
        let mut links = vec![Link::new(self.persistent.clone(), "cite-as", None)];
        for t in ["AboutPage", self.schema_type] {
            links.push(Link::new(format!("https://schema.org/{t}"), "type", None));
        }
        for f in &self.formats {
            links.push(Link {
                profile: f.profile,
                ..Link::new(f.url.clone(), "describedby", Some(f.media_type))
            });
        }
        if let Some(l) = &self.license {
            links.push(Link::new(l.clone(), "license", None));
        }
        // An author is a link only when the record gives a URL for it (an ORCID, a
        // page): a name is no target.
        for creator in self.dc.all("creator").map(str::trim) {
            if is_http_url(creator) {
                links.push(Link::new(creator.to_string(), "author", None));
            }
        }
        for r in self.rows() {
            links.push(Link::new(r.url.clone(), "item", Some(r.media_type)));
        }
        links
    }

    /// The files shown (none when they are withheld, removed or not looked at).
    fn rows(&self) -> &[FileRow] {
        match &self.files {
            Files::Listed { rows, .. } => rows,
            _ => &[],
        }
    }

    /// The links of the `Link` header and of the page's `<link>` elements: the
    /// [`Landing::signposts`], the two `linkset` links after `cite-as`, at most
    /// [`MAX_ITEM_LINKS`] `item` links, and each link after `cite-as` only while the whole
    /// header stays under [`MAX_LINK_HEADER`] bytes (a long URL of the metadata item or of
    /// the licence is left out; the page's text still links to it, the linkset holds it).
    fn links(&self) -> Vec<Link> {
        let mut signposts = self.signposts().into_iter();
        let mut links: Vec<Link> = signposts.next().into_iter().collect();
        links.extend(linkset_links(&self.landing));
        // The header joins its links with `, `.
        let mut length = links
            .iter()
            .map(|l| l.header_value().len() + 2)
            .sum::<usize>()
            - 2;
        let mut items = 0;
        for link in signposts {
            if link.rel == "item" {
                if items == MAX_ITEM_LINKS {
                    break;
                }
                items += 1;
            }
            let more = link.header_value().len() + 2;
            if length + more <= MAX_LINK_HEADER {
                length += more;
                links.push(link);
            }
        }
        links
    }

    /// The "Cite as" links: the formatted styles in the page's locale, then the
    /// downloads, each the page's URL with `?format=` (relative: the same page asked
    /// otherwise).
    fn export_html(&self) -> String {
        let t = texts(self.lang);
        let locale = match self.lang {
            PageLang::Pt => "pt-BR",
            PageLang::En => "en-US",
        };
        let mut b = format!("<h3>{}</h3>\n<ul class=\"export\">\n", t.cite_as);
        for style in cite::Style::ALL {
            b.push_str(&format!(
                "<li><a href=\"?format=bibliography&amp;style={}&amp;locale={locale}\" type=\"text/x-bibliography\">{}</a></li>\n",
                style.name(),
                escape_html(style.label())
            ));
        }
        for (format, label) in [
            (cite::Format::BibTex, "BibTeX"),
            (cite::Format::Ris, "RIS"),
            (cite::Format::CslJson, "CSL-JSON"),
        ] {
            b.push_str(&format!(
                "<li><a href=\"?format={}\" type=\"{}\" download>{label}</a></li>\n",
                format.name(),
                format.media_type()
            ));
        }
        b.push_str("</ul>\n");
        b
    }

    /// The headers of an answer of the page: its links, what it was chosen by (`vary`:
    /// `Accept` when the header chose it, `Accept-Language` too for the HTML page, whose
    /// text is in the reader's language; nothing for an answer at a `?format=` URL,
    /// which no header changes), and `Content-Language` on the HTML page alone (the
    /// JSON-LD, the citations and the linksets say the same whatever the reader's
    /// language).
    fn headers(&self, vary: Vary) -> Vec<(String, String)> {
        self.headers_with(&self.links(), vary)
    }

    /// [`Landing::headers`] with the page's [`Landing::links`] already made.
    fn headers_with(&self, links: &[Link], vary: Vary) -> Vec<(String, String)> {
        let links: Vec<String> = links.iter().map(Link::header_value).collect();
        let mut h: Vec<(String, String)> = vec![("Link".into(), links.join(", "))];
        match vary {
            Vary::Nothing => {}
            Vary::Accept => h.push(("Vary".into(), "Accept".into())),
            Vary::Page => {
                h.push(("Vary".into(), "Accept, Accept-Language".into()));
                h.push(("Content-Language".into(), self.lang.code().into()));
            }
        }
        h.push((
            "Content-Security-Policy".into(),
            face::csp(self.logo.as_deref()),
        ));
        h.push(("X-Content-Type-Options".into(), "nosniff".into()));
        if self.private {
            // `Vary: *` (which says more than the fields) in place of the list.
            h.retain(|(n, _)| n != "Vary");
            h.extend(crate::http::PRIVATE.map(|(n, v)| (n.to_string(), v.to_string())));
        }
        h
    }

    /// The work a citation cites: the item, by its persistent URL; but a metadata item
    /// whose record's `dc:identifier` is a persistent URL of this Archive's resolver cites
    /// the work that record describes (what a reader sent here from that work wants).
    fn work(&self) -> Work {
        if self.item.contenttype == ContentType::Metadata {
            let described = self.dc.all("identifier").map(str::trim).find_map(|id| {
                let (ibi, _) = self.config.ibi_of_persistent_url(id)?;
                is_http_url(id).then_some((id, ibi))
            });
            if let Some((url, ibi)) = described {
                return Work::from_dc(&self.dc, url, ibi);
            }
        }
        Work::from_dc(&self.dc, &self.persistent, &self.ibi)
    }

    /// The citation in `format`, with the page's status and headers; a download
    /// (BibTeX, RIS, CSL-JSON) named by a Content-Disposition. An item whose metadata
    /// item is in another Archive has no record here: it is answered `303 See Other` to
    /// that item's persistent URL (with the query that asked, `query`), which the resolver
    /// takes to its landing page, where the record is and the same `Accept` is answered.
    /// A style or a locale not known: 406 when `Accept` named it, 400 when the link's
    /// query did (a bad parameter of the URL), naming those there are. Asked by a link
    /// (`query`), a tombstone's citation is answered 200: a browser fails a download
    /// answered 410, and the citation is there (as the linkset at its own URL); asked by
    /// `Accept`, with the page's status.
    fn citation_answer(
        &self,
        format: cite::Format,
        options: &cite::Options,
        query: Option<&[u8]>,
    ) -> Answer {
        let by_query = query.is_some();
        let mut headers = self.headers(if by_query {
            Vary::Nothing
        } else {
            Vary::Accept
        });
        if let Some(meta) = &self.metadata_elsewhere {
            let mut location = self.config.persistent_url(meta.as_str());
            if let Some(q) = query {
                location.push('?');
                location.push_str(&String::from_utf8_lossy(q));
            }
            let location = uri_reference(&location);
            headers.push(("Location".into(), location.clone()));
            return Answer {
                headers,
                ..Answer::text(303, format!("See {location}\n"))
            };
        }
        let work = self.work();
        let text = match cite::render(&work, format, options) {
            Ok(text) => text,
            Err(unknown) => {
                return Answer {
                    headers,
                    log: vec![format!("landing page: {unknown}")],
                    ..Answer::text(if by_query { 400 } else { 406 }, format!("{unknown}\n"))
                }
            }
        };
        if format != cite::Format::Bibliography {
            // Named after the work cited.
            let name: String = work
                .id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-.@".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            headers.push((
                "Content-Disposition".into(),
                format!("attachment; filename=\"{name}.{}\"", format.extension()),
            ));
        }
        Answer {
            content_type: format.content_type(),
            headers,
            ..Answer::text(if by_query { 200 } else { self.status }, text)
        }
    }

    /// The linkset (RFC 9264) of the page's Signposting links, with the page's headers:
    /// asked of the page by `Accept`, with its status (a tombstone's 410); at its own URL
    /// (`by_query`, what `rel="linkset"` links to), 200 — that resource is not gone, it
    /// describes what is, and a linkset reader takes a 4xx for a linkset missing.
    fn linkset_answer(&self, format: LinksetFormat, by_query: bool) -> Answer {
        Answer {
            content_type: format.media_type(),
            headers: self.headers(if by_query {
                Vary::Nothing
            } else {
                Vary::Accept
            }),
            ..Answer::text(
                if by_query { 200 } else { self.status },
                self.linkset(format),
            )
        }
    }

    /// The linkset: the landing page's links ([`Landing::signposts`], none left out for
    /// the length of a header: the `item` links to every file shown), its anchor the page;
    /// then each file shown, anchored at itself, with its `collection` (the page) and
    /// `cite-as` (the item), as its own `Link` header gives them.
    fn linkset(&self, format: LinksetFormat) -> String {
        let mut sets: Vec<(String, Vec<Link>)> = vec![(self.landing.clone(), self.signposts())];
        for r in self.rows() {
            sets.push((
                r.url.clone(),
                vec![
                    Link::new(self.persistent.clone(), "cite-as", None),
                    Link::new(self.landing.clone(), "collection", Some("text/html")),
                ],
            ));
        }
        match format {
            LinksetFormat::Json => linkset_json(&sets),
            LinksetFormat::LinkFormat => linkset_link_format(&sets),
        }
    }

    /// The JSON-LD alone, with the page's status: its text is the record's and the
    /// Archive's, in no language of the reader's.
    fn json_ld_answer(&self, by_query: bool) -> Answer {
        let mut body = self.json_ld();
        body.push('\n');
        Answer {
            content_type: "application/ld+json",
            headers: self.headers(if by_query {
                Vary::Nothing
            } else {
                Vary::Accept
            }),
            ..Answer::text(self.status, body)
        }
    }

    /// The page, its links made once for its `Link` header and its `<link>` elements.
    fn html_answer(&self) -> Answer {
        let links = self.links();
        Answer {
            content_type: HTML,
            headers: self.headers_with(&links, Vary::Page),
            ..Answer::text(self.status, self.html(&links))
        }
    }

    /// The schema.org description (docs/src/protocol.md, "Landing pages").
    fn json_ld(&self) -> String {
        let live = self.item.state != State::Deleted;
        let modified = self.item.timestamp.map(::ibi::time::iso8601);
        let media: Vec<Media> = match &self.files {
            Files::Listed { rows, .. } => rows.iter().map(Media::of).collect(),
            _ => Vec::new(),
        };
        let reference = |url: &str| Reference {
            id: url.to_string(),
            in_language: None,
        };
        let doc = JsonLd {
            context: Context {
                vocab: "https://schema.org/",
            },
            type_: self.schema_type,
            id: &self.persistent,
            identifier: &self.persistent,
            url: &self.persistent,
            name: self.title(),
            creator: self.dc.all("creator").map(Agent::of).collect(),
            date_published: self.dc.first("date"),
            in_language: self.language(),
            date_modified: modified.clone(),
            license: self.license.as_deref(),
            conditions_of_access: matches!(self.files, Files::Withheld).then_some(
                "The files of this item are open only to the networks the Archive licenses.",
            ),
            distribution: if self.schema_type == "Dataset" {
                media
                    .iter()
                    .map(|m| Media {
                        type_: "DataDownload",
                        ..m.clone()
                    })
                    .collect()
            } else {
                Vec::new()
            },
            encoding: media,
            work_translation: self
                .translations
                .iter()
                .map(|(lang, url)| Reference {
                    id: url.clone(),
                    in_language: Some(lang.clone()),
                })
                .collect(),
            reverse: self.next_edition.as_deref().map(|n| Reverse {
                is_based_on: reference(n),
            }),
            creative_work_status: (!live).then_some("Deleted"),
            expires: if live { None } else { modified.clone() },
            correction: self.reason().map(|r| Correction::new(r, modified.clone())),
        };
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    }

    /// The HTML page, with `links` as its `<link>` elements.
    fn html(&self, links: &[Link]) -> String {
        let t = texts(self.lang);
        let e = escape_html;
        let heading = match self.title() {
            Some(title) => e(title),
            None => t.item_named.replace("{}", &e(&self.ibi)),
        };
        let mut head_links = String::new();
        for l in links {
            head_links.push_str(&l.html_element());
        }
        // Inside <script>, `<` never appears as itself: no `</script>` or `<!--` in a value
        // can end the block.
        let json = self
            .json_ld()
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026");
        let mut b = String::new();
        b.push_str(&format!(
            "<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{heading}</title>\n{head_links}<style>{STYLE}</style>\n\
             <script type=\"application/ld+json\">\n{json}\n</script>\n</head>\n<body>\n{header}<main>\n\
             <h1>{heading}</h1>\n",
            lang = self.lang.code(),
            header = face::header(self.config, self.logo.as_deref()),
        ));
        if self.item.state == State::Deleted {
            b.push_str(&format!("<p class=\"gone\">{}</p>\n", t.removed));
        }
        // How to cite.
        b.push_str(&format!(
            "<h2>{}</h2>\n<p class=\"cite\">{}</p>\n<p>{}: <a href=\"{url}\">{url}</a></p>\n",
            t.how_to_cite,
            e(&self.citation()),
            t.persistent_url,
            url = e(&self.persistent)
        ));
        b.push_str(&self.export_html());
        // What it is.
        let label = |element: &str| face::dc_label(element, self.lang).unwrap_or_default();
        let abstracts: Vec<String> = self.dc.all("description").map(e).collect();
        if !abstracts.is_empty() {
            b.push_str(&format!("<h2>{}</h2>\n", label("description")));
            for a in abstracts {
                b.push_str(&format!("<p class=\"abstract\">{a}</p>\n"));
            }
        }
        b.push_str(&format!("<h2>{}</h2>\n<dl>\n", t.about));
        let mut row = |term: &str, value: String| {
            b.push_str(&format!("<dt>{term}</dt><dd>{value}</dd>\n"));
        };
        if let Some(title) = self.title() {
            row(label("title"), e(title));
        }
        let creators: Vec<String> = self.dc.all("creator").map(e).collect();
        if !creators.is_empty() {
            row(label("creator"), creators.join("; "));
        }
        if let Some(d) = self.dc.first("date") {
            row(label("date"), e(d));
        }
        let types: Vec<String> = self.dc.all("type").map(e).collect();
        if !types.is_empty() {
            row(label("type"), types.join("; "));
        }
        let publishers: Vec<String> = self.dc.all("publisher").map(e).collect();
        if !publishers.is_empty() {
            row(label("publisher"), publishers.join("; "));
        }
        if let Some(l) = self.language() {
            row(
                label("language"),
                format!(
                    "<span title=\"{code}\">{}</span>",
                    e(&face::language_name(&l, self.lang)),
                    code = e(&l)
                ),
            );
        }
        let rights: Vec<String> = self.dc.all("rights").map(face::rights_html).collect();
        if !rights.is_empty() {
            row(label("rights"), rights.join("<br>"));
        }
        row(t.identifier, e(&self.ibi));
        if let Some(ts) = self.item.timestamp {
            let iso = ::ibi::time::iso8601(ts);
            let label = if self.item.state == State::Deleted {
                t.removed_on
            } else {
                t.updated
            };
            row(
                label,
                format!("<time datetime=\"{iso}\">{}</time>", &iso[..10]),
            );
        }
        if let Some(r) = self.reason() {
            row(t.reason, e(r));
        }
        row(t.accesses, self.accesses.to_string());
        b.push_str("</dl>\n");
        self.files_html(t, &mut b);
        self.related_html(t, &mut b);
        self.formats_html(t, &mut b);
        b.push_str("</main>\n");
        b.push_str(&face::footer(self.config, self.lang));
        b.push_str("</body>\n</html>\n");
        b
    }

    /// The page's files: a table of those listed, or why there are none.
    fn files_html(&self, t: &Texts, b: &mut String) {
        let e = escape_html;
        match &self.files {
            Files::Removed | Files::Unread => {}
            Files::Withheld => {
                b.push_str(&format!("<h2>{}</h2>\n<p>{}</p>\n", t.files, t.withheld))
            }
            Files::Listed { rows, .. } if rows.is_empty() => {
                b.push_str(&format!("<h2>{}</h2>\n<p>{}</p>\n", t.files, t.no_files))
            }
            Files::Listed {
                rows,
                unlisted,
                more_unknown,
            } => {
                b.push_str(&format!(
                    "<h2>{}</h2>\n<table>\n<thead><tr><th scope=\"col\">{}</th><th scope=\"col\">{}</th><th scope=\"col\">{}</th></tr></thead>\n<tbody>\n",
                    t.files, t.name, t.size, t.type_
                ));
                for r in rows {
                    b.push_str(&format!(
                        "<tr><th scope=\"row\"><a href=\"{}\" type=\"{}\">{}</a></th><td>{}</td><td>{}</td></tr>\n",
                        e(&r.url),
                        r.media_type,
                        e(&r.name),
                        human_size(r.size, self.lang),
                        r.media_type
                    ));
                }
                b.push_str("</tbody>\n</table>\n");
                if *more_unknown {
                    b.push_str(&format!(
                        "<p>{}</p>\n",
                        t.more_unknown.replace("{}", &unlisted.to_string())
                    ));
                } else if *unlisted > 0 {
                    b.push_str(&format!(
                        "<p>{}</p>\n",
                        t.more.replace("{}", &unlisted.to_string())
                    ));
                }
            }
        }
    }

    /// The page's editions (the next, the last, all of them at the resolver) and translations.
    fn related_html(&self, t: &Texts, b: &mut String) {
        let e = escape_html;
        if self.next_edition.is_some() || !self.translations.is_empty() {
            b.push_str(&format!("<h2>{}</h2>\n<ul>\n", t.related));
            if let Some(n) = &self.next_edition {
                b.push_str(&format!(
                    "<li>{}: <a href=\"{url}\">{url}</a></li>\n",
                    t.next_edition,
                    url = e(n)
                ));
                // The resolver follows the editions to the last (modifier `!`).
                b.push_str(&format!(
                    "<li>{}: <a href=\"{url}!\">{url}!</a></li>\n",
                    t.last_edition,
                    url = e(&self.persistent)
                ));
            }
            // Every edition, which only the resolver can walk across Archives.
            if let Some(all) = &self.editions {
                b.push_str(&format!(
                    "<li>{}: <a href=\"{url}\">{url}</a></li>\n",
                    t.all_editions,
                    url = e(all)
                ));
            }
            for (lang, url) in &self.translations {
                b.push_str(&format!(
                    "<li>{} (<span lang=\"{l}\">{l}</span>): <a href=\"{url}\" hreflang=\"{l}\">{url}</a></li>\n",
                    t.translation,
                    l = e(lang),
                    url = e(url)
                ));
            }
            b.push_str("</ul>\n");
        }
    }

    /// The page's metadata formats: the Dublin Core record and the free-form page.
    fn formats_html(&self, t: &Texts, b: &mut String) {
        let e = escape_html;
        if !self.formats.is_empty() {
            b.push_str(&format!("<h2>{}</h2>\n<ul>\n", t.metadata));
            for f in &self.formats {
                b.push_str(&format!(
                    "<li><a href=\"{}\" type=\"{}\">{}</a></li>\n",
                    e(&f.url),
                    f.media_type,
                    if f.oai_dc { t.oai_dc } else { t.free_form }
                ));
            }
            b.push_str("</ul>\n");
        }
    }
}

/// The metadata item's Dublin Core record and formats, when there is one this client may
/// have: the item's `metadata`, or the item itself when it is a metadata item; whether
/// that depended on the client's network (a restricted metadata item); and the metadata
/// item when it is another Archive's. A metadata item not found here is another
/// Archive's unless it is this one's own ([`is_own`]): then the reference dangles (a
/// line in the log says so), and the page goes on without a record — a citation of the
/// item itself, never a redirect to a persistent URL that would lead back here.
fn metadata(
    archive: &Archive,
    item: &Item,
    client: Option<IpAddr>,
    log: &mut Vec<String>,
) -> (DublinCore, Vec<Format>, bool, Option<Ibi>) {
    let found;
    let meta: &Item = match &item.metadata {
        Some(ibi) => {
            let lookup = archive.store().find(ibi);
            log.extend(lookup.log.into_lines());
            match lookup.item {
                Some(m) => {
                    found = m;
                    &found
                }
                None if is_own(archive, ibi) => {
                    log.push(format!(
                        "{}: metadata item {} is this Archive's, and not found here",
                        item.dir.display(),
                        ::ibi::shown(ibi.as_str())
                    ));
                    return Default::default();
                }
                None => return (DublinCore::default(), Vec::new(), false, Some(ibi.clone())),
            }
        }
        None if item.contenttype == ContentType::Metadata => item,
        None => return Default::default(),
    };
    let private = meta.depends_on_network();
    if meta.access(archive.config(), client) != Access::Granted {
        return (DublinCore::default(), Vec::new(), private, None);
    }
    let mut formats = Vec::new();
    let mut dc = DublinCore::default();
    if let Some(file) = meta.formats.get("oai_dc") {
        if let Some(url) = archive.doc_url(meta, file.as_bytes()) {
            formats.push(Format {
                url: uri_reference(&String::from_utf8_lossy(&url)),
                media_type: content_type(file.as_bytes()),
                profile: Some(OAI_DC_PROFILE),
                oai_dc: true,
            });
            match read_record(meta, file) {
                Ok(record) => dc = record,
                Err(e) => log.push(format!("{}/{file}: {e}", meta.doc().display())),
            }
        }
    }
    if let Some(target) = &meta.target {
        if let Some(url) = archive.doc_url(meta, target.as_bytes()) {
            formats.push(Format {
                url: uri_reference(&String::from_utf8_lossy(&url)),
                media_type: content_type(target.as_bytes()),
                profile: None,
                oai_dc: false,
            });
        }
    }
    (dc, formats, private, None)
}

/// Whether the item `ibi`, not found in this Archive, is this Archive's own all the same:
/// col/ cannot be opened (nothing can be said to be elsewhere), or col/ has a directory
/// for it that does not load ([`crate::store::Store::has_item_directory`]), or it bears a
/// prefix this Archive mints (`[minting]`: the rep prefix of its host and port, the IBIp
/// prefix of its address and port).
fn is_own(archive: &Archive, ibi: &Ibi) -> bool {
    let store = archive.store();
    if store.unavailable() {
        return true;
    }
    let minting = archive.config().minting().ok().flatten();
    match ibi {
        Ibi::Rep(rep) => {
            store.has_item_directory(rep)
                || minting.is_some_and(|m| {
                    ::ibi::mint::rep_prefix(&m.host, m.port).is_ok_and(|p| {
                        p.split_once('/').is_some_and(|(sub, wp)| {
                            sub.eq_ignore_ascii_case(rep.subdomain()) && rep.has_word_port(wp)
                        })
                    })
                })
        }
        Ibi::Ibip(ibip) => minting.is_some_and(|m| {
            m.ip.is_some_and(|ip| ::ibi::mint::ibip_prefix(ip, m.ibip_port) == ibip.prefix())
        }),
    }
}

/// A linkset as `application/linkset+json` (RFC 9264 §4.2): `{"linkset": [{"anchor":
/// …, "<rel>": [{"href": …, "type": …}], …}, …]}`, the relations of each context (and
/// the members of a target) in alphabetical order, each relation's targets in the order
/// of the page's links. The URLs as the page writes them ([`Link::href`]: a JSON string
/// needs no escape of `,` or `;`). A `describedby`'s `profile` is left out: RFC 9264
/// (§4.2.4.3) writes such an extension attribute as an array, which the FAIR Signposting
/// parser cannot read, and the `Link` header and `application/linkset` give it.
fn linkset_json(sets: &[(String, Vec<Link>)]) -> String {
    let contexts: Vec<serde_json::Value> = sets
        .iter()
        .map(|(anchor, links)| {
            let mut object = serde_json::Map::new();
            object.insert("anchor".into(), uri_reference(anchor).into());
            for link in links {
                let mut target = serde_json::Map::new();
                target.insert("href".into(), link.href().into());
                if let Some(t) = link.media_type {
                    target.insert("type".into(), t.into());
                }
                let targets = object
                    .entry(link.rel)
                    .or_insert_with(|| serde_json::Value::Array(Vec::new()));
                if let serde_json::Value::Array(a) = targets {
                    a.push(target.into());
                }
            }
            serde_json::Value::Object(object)
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&serde_json::json!({ "linkset": contexts }))
        .unwrap_or_default();
    out.push('\n');
    out
}

/// A linkset as `application/linkset` (RFC 9264 §4.1): the links as a `Link` header
/// writes them (the target in `<…>` with `,` and `;` escaped, [`Link::target`]), each
/// with its `anchor`, one a line, separated by commas. The anchor, a quoted string, as
/// the page writes the URL ([`uri_reference`] leaves no `"` or `\` in it): inside quotes
/// a comma or a semicolon splits nothing, and a reader matching the anchor to the URL it
/// was given finds it.
fn linkset_link_format(sets: &[(String, Vec<Link>)]) -> String {
    let lines: Vec<String> = sets
        .iter()
        .flat_map(|(anchor, links)| {
            links
                .iter()
                .map(move |l| format!("{}; anchor=\"{}\"", l.header_value(), uri_reference(anchor)))
        })
        .collect();
    let mut out = lines.join(",\n");
    out.push('\n');
    out
}

/// The Dublin Core record `file` of the metadata item `meta`, opened as it is served
/// (under its name stored as Latin-1 bytes too, `ItemDir::stored_doc_name`).
fn read_record(meta: &Item, file: &str) -> Result<DublinCore, String> {
    let dir = meta.handle.as_ref().ok_or("no directory")?;
    let text = dir
        .doc_text(file.as_bytes(), MAX_RECORD)
        .map_err(|e| match e {
            layout::DocTextError::TooLarge(_) => format!("{e}: not shown on landing pages"),
            e => e.to_string(),
        })?;
    DublinCore::parse(&text)
}

/// The item's files, at most [`MAX_SHOWN`] (see `ItemDir::list_doc`).
fn list_files(config: &Config, item: &Item) -> Files {
    let listing = item
        .handle
        .as_ref()
        .map(|dir| dir.list_doc(MAX_SHOWN))
        .unwrap_or_default();
    let rows = listing
        .files
        .iter()
        .map(|(rel, size)| {
            let mut url = config.baseurl.clone();
            layout::push_doc_url_path(&mut url, item.rep.as_str(), rel);
            FileRow {
                name: display_name(rel),
                // A URI reference in the page and the JSON-LD as in the Link header.
                url: uri_reference(&url),
                size: *size,
                media_type: content_type(rel),
            }
        })
        .collect();
    Files::Listed {
        rows,
        unlisted: listing.unlisted,
        more_unknown: listing.exhausted,
    }
}

/// The schema.org type of the first Dublin Core type (DCMI Type Vocabulary, by name or
/// URI, any case) that has a more specific one than CreativeWork: Dataset → Dataset,
/// Software → SoftwareSourceCode, Image and StillImage → ImageObject, MovingImage →
/// VideoObject, Sound → AudioObject, Collection → Collection. Text and the others:
/// CreativeWork.
fn schema_type<'d>(types: impl Iterator<Item = &'d str>) -> &'static str {
    for t in types {
        let name = t
            .trim()
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let specific = match name.as_str() {
            "dataset" => "Dataset",
            "software" => "SoftwareSourceCode",
            "image" | "stillimage" => "ImageObject",
            "movingimage" => "VideoObject",
            "sound" => "AudioObject",
            "collection" => "Collection",
            _ => continue,
        };
        return specific;
    }
    "CreativeWork"
}

/// One Signposting link.
struct Link {
    url: String,
    rel: &'static str,
    media_type: Option<&'static str>,
    profile: Option<&'static str>,
}

impl Link {
    fn new(url: String, rel: &'static str, media_type: Option<&'static str>) -> Link {
        Link {
            url,
            rel,
            media_type,
            profile: None,
        }
    }

    /// The target as the page, its JSON-LD and a JSON linkset write it: a URI reference.
    fn href(&self) -> String {
        uri_reference(&self.url)
    }

    /// The target as a `Link` header and an `application/linkset` write it
    /// ([`link_target`]: [`Link::href`] with `,` and `;` %-escaped too). Only there.
    fn target(&self) -> String {
        link_target(&self.url)
    }

    /// As a `Link` header value (RFC 8288), every parameter quoted.
    fn header_value(&self) -> String {
        let mut v = format!("<{}>; rel=\"{}\"", self.target(), self.rel);
        if let Some(t) = self.media_type {
            v.push_str(&format!("; type=\"{t}\""));
        }
        if let Some(p) = self.profile {
            v.push_str(&format!("; profile=\"{p}\""));
        }
        v
    }

    /// As a `<link>` element (without its profile, which HTML cannot write).
    fn html_element(&self) -> String {
        let mut v = format!(
            "<link rel=\"{}\" href=\"{}\"",
            self.rel,
            escape_html(&self.url)
        );
        if let Some(t) = self.media_type {
            v.push_str(&format!(" type=\"{t}\""));
        }
        // HTML has no profile attribute: the header alone gives it.
        v.push_str(">\n");
        v
    }
}

#[derive(Serialize)]
struct JsonLd<'a> {
    #[serde(rename = "@context")]
    context: Context,
    #[serde(rename = "@type")]
    type_: &'static str,
    #[serde(rename = "@id")]
    id: &'a str,
    identifier: &'a str,
    url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    creator: Vec<Agent>,
    #[serde(rename = "datePublished", skip_serializing_if = "Option::is_none")]
    date_published: Option<&'a str>,
    #[serde(rename = "inLanguage", skip_serializing_if = "Option::is_none")]
    in_language: Option<String>,
    #[serde(rename = "dateModified", skip_serializing_if = "Option::is_none")]
    date_modified: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    license: Option<&'a str>,
    #[serde(rename = "conditionsOfAccess", skip_serializing_if = "Option::is_none")]
    conditions_of_access: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    encoding: Vec<Media>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    distribution: Vec<Media>,
    #[serde(rename = "workTranslation", skip_serializing_if = "Vec::is_empty")]
    work_translation: Vec<Reference>,
    #[serde(rename = "@reverse", skip_serializing_if = "Option::is_none")]
    reverse: Option<Reverse>,
    #[serde(rename = "creativeWorkStatus", skip_serializing_if = "Option::is_none")]
    creative_work_status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    correction: Option<Correction>,
}

#[derive(Serialize)]
struct Context {
    #[serde(rename = "@vocab")]
    vocab: &'static str,
}

#[derive(Serialize, Clone)]
struct Media {
    #[serde(rename = "@type")]
    type_: &'static str,
    name: String,
    #[serde(rename = "contentUrl")]
    content_url: String,
    #[serde(rename = "encodingFormat")]
    encoding_format: &'static str,
    #[serde(rename = "contentSize")]
    content_size: String,
}

impl Media {
    fn of(r: &FileRow) -> Media {
        Media {
            type_: "MediaObject",
            name: r.name.clone(),
            content_url: r.url.clone(),
            encoding_format: r.media_type,
            content_size: format!("{} bytes", r.size),
        }
    }
}

#[derive(Serialize)]
struct Reference {
    #[serde(rename = "@id")]
    id: String,
    #[serde(rename = "inLanguage", skip_serializing_if = "Option::is_none")]
    in_language: Option<String>,
}

#[derive(Serialize)]
struct Reverse {
    #[serde(rename = "isBasedOn")]
    is_based_on: Reference,
}

/// A size for people: bytes below a thousand, else kB, MB, GB with one decimal (a comma
/// in Portuguese).
fn human_size(bytes: u64, lang: PageLang) -> String {
    if bytes == 1 {
        return "1 byte".into();
    }
    if bytes < 1000 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = "kB";
    for next in ["MB", "GB", "TB"] {
        if value < 1000.0 {
            break;
        }
        value /= 1000.0;
        unit = next;
    }
    let shown = format!("{value:.1} {unit}");
    match lang {
        PageLang::Pt => shown.replace('.', ","),
        PageLang::En => shown,
    }
}

/// A file name for people: UTF-8 as it is, anything else read as Latin-1.
fn display_name(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// The texts of a landing page in one language (HTML; `{}` stands for a value).
struct Texts {
    item_named: &'static str,
    removed: &'static str,
    how_to_cite: &'static str,
    persistent_url: &'static str,
    about: &'static str,
    cite_as: &'static str,
    accesses: &'static str,
    last_edition: &'static str,
    all_editions: &'static str,
    identifier: &'static str,
    updated: &'static str,
    removed_on: &'static str,
    reason: &'static str,
    files: &'static str,
    name: &'static str,
    size: &'static str,
    type_: &'static str,
    no_files: &'static str,
    withheld: &'static str,
    more: &'static str,
    more_unknown: &'static str,
    related: &'static str,
    next_edition: &'static str,
    translation: &'static str,
    metadata: &'static str,
    oai_dc: &'static str,
    free_form: &'static str,
}

fn texts(lang: PageLang) -> &'static Texts {
    match lang {
        PageLang::En => &EN,
        PageLang::Pt => &PT,
    }
}

const EN: Texts = Texts {
    item_named: "Item {}",
    removed: "This item has been removed from the Archive. Its persistent URL still cites it.",
    how_to_cite: "How to cite",
    persistent_url: "Persistent URL",
    about: "About this item",
    cite_as: "Cite as",
    accesses: "Accesses",
    last_edition: "Latest edition",
    all_editions: "All editions",
    identifier: "Identifier (IBI)",
    updated: "Last updated",
    removed_on: "Removed on",
    reason: "Reason",
    files: "Files",
    name: "Name",
    size: "Size",
    type_: "Type",
    no_files: "This item has no files.",
    withheld: "The files of this item are open only to the networks the Archive licenses.",
    more: "… and {} more entries not listed here.",
    more_unknown: "… and more than {} entries not listed here.",
    related: "Related items",
    next_edition: "Next edition",
    translation: "Translation",
    metadata: "Metadata",
    oai_dc: "Dublin Core record (oai_dc, XML)",
    free_form: "Metadata page",
};

const PT: Texts = Texts {
    item_named: "Item {}",
    removed: "Este item foi removido do Arquivo. Sua URL persistente continua a citá-lo.",
    how_to_cite: "Como citar",
    persistent_url: "URL persistente",
    about: "Sobre este item",
    cite_as: "Citar como",
    accesses: "Acessos",
    last_edition: "Edição mais recente",
    all_editions: "Todas as edições",
    identifier: "Identificador (IBI)",
    updated: "Última atualização",
    removed_on: "Removido em",
    reason: "Motivo",
    files: "Arquivos",
    name: "Nome",
    size: "Tamanho",
    type_: "Tipo",
    no_files: "Este item não tem arquivos.",
    withheld: "Os arquivos deste item estão abertos apenas às redes licenciadas pelo Arquivo.",
    more: "… e mais {} entradas não listadas aqui.",
    more_unknown: "… e mais de {} entradas não listadas aqui.",
    related: "Itens relacionados",
    next_edition: "Próxima edição",
    translation: "Tradução",
    metadata: "Metadados",
    oai_dc: "Registro Dublin Core (oai_dc, XML)",
    free_form: "Página de metadados",
};

/// The page for a path that names no item.
fn html(status: u16, title: &str, body: &str) -> Answer {
    let text = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\n<body><h1>{title}</h1>\n{body}\n</body></html>\n"
    );
    Answer {
        content_type: HTML,
        ..Answer::text(status, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dc_types_map_to_schema_org_types() {
        assert_eq!(schema_type(["Text"].into_iter()), "CreativeWork");
        assert_eq!(schema_type([].into_iter()), "CreativeWork");
        assert_eq!(schema_type(["dataset"].into_iter()), "Dataset");
        assert_eq!(
            schema_type(["Text", "http://purl.org/dc/dcmitype/StillImage"].into_iter()),
            "ImageObject"
        );
        assert_eq!(schema_type(["Software"].into_iter()), "SoftwareSourceCode");
        assert_eq!(schema_type(["MovingImage"].into_iter()), "VideoObject");
        assert_eq!(schema_type(["Sound"].into_iter()), "AudioObject");
        assert_eq!(schema_type(["Collection"].into_iter()), "Collection");
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_size(0, PageLang::En), "0 bytes");
        assert_eq!(human_size(1, PageLang::Pt), "1 byte");
        assert_eq!(human_size(999, PageLang::En), "999 bytes");
        assert_eq!(human_size(1000, PageLang::En), "1.0 kB");
        assert_eq!(human_size(52_428_800, PageLang::En), "52.4 MB");
        assert_eq!(human_size(52_428_800, PageLang::Pt), "52,4 MB");
        assert_eq!(human_size(2_000_000_000_000, PageLang::En), "2.0 TB");
    }

    #[test]
    fn link_targets_escape_what_strict_parsers_split_at() {
        let l = Link::new(
            "http://a.org/col/x/doc/a,b;c d\"e<f>.pdf".into(),
            "item",
            Some("application/pdf"),
        );
        assert_eq!(
            l.header_value(),
            "<http://a.org/col/x/doc/a%2Cb%3Bc%20d%22e%3Cf%3E.pdf>; rel=\"item\"; type=\"application/pdf\""
        );
        assert_eq!(
            Link {
                profile: Some(OAI_DC_PROFILE),
                ..Link::new("http://a.org/m.xml".into(), "describedby", Some("application/xml"))
            }
            .header_value(),
            "<http://a.org/m.xml>; rel=\"describedby\"; type=\"application/xml\"; profile=\"http://www.openarchives.org/OAI/2.0/oai_dc/\""
        );
        assert_eq!(
            linkset_links("http://a.org/s/filelist/x")
                .iter()
                .map(Link::header_value)
                .collect::<Vec<_>>(),
            [
                "<http://a.org/s/filelist/x?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\"",
                "<http://a.org/s/filelist/x?format=linkset>; rel=\"linkset\"; type=\"application/linkset\"",
            ]
        );
    }

    fn sets() -> Vec<(String, Vec<Link>)> {
        vec![
            (
                "http://a.org/s/filelist/x".into(),
                vec![
                    Link::new("http://r.org/X".into(), "cite-as", None),
                    Link {
                        profile: Some(OAI_DC_PROFILE),
                        ..Link::new(
                            "http://a.org/m.xml".into(),
                            "describedby",
                            Some("application/xml"),
                        )
                    },
                    Link::new("http://a.org/f,1.txt".into(), "item", Some("text/plain")),
                    Link::new("http://a.org/f2.txt".into(), "item", Some("text/plain")),
                ],
            ),
            (
                "http://a.org/f,1.txt".into(),
                vec![Link::new(
                    "http://a.org/s/filelist/x".into(),
                    "collection",
                    Some("text/html"),
                )],
            ),
        ]
    }

    /// RFC 9264 §4.2: the anchors and the targets as the page writes them (a `,` in a
    /// file's name as it is: a JSON string holds it), no `profile` (see [`linkset_json`]).
    #[test]
    fn a_linkset_as_json() {
        assert_eq!(
            linkset_json(&sets()),
            r#"{
  "linkset": [
    {
      "anchor": "http://a.org/s/filelist/x",
      "cite-as": [
        {
          "href": "http://r.org/X"
        }
      ],
      "describedby": [
        {
          "href": "http://a.org/m.xml",
          "type": "application/xml"
        }
      ],
      "item": [
        {
          "href": "http://a.org/f,1.txt",
          "type": "text/plain"
        },
        {
          "href": "http://a.org/f2.txt",
          "type": "text/plain"
        }
      ]
    },
    {
      "anchor": "http://a.org/f,1.txt",
      "collection": [
        {
          "href": "http://a.org/s/filelist/x",
          "type": "text/html"
        }
      ]
    }
  ]
}
"#
        );
    }

    /// RFC 9264 §4.1: each link as a `Link` header writes it, its target's `,` escaped
    /// (a parser may split at it before it reads the brackets), its anchor a quoted
    /// string, the URL as the page writes it.
    #[test]
    fn a_linkset_in_link_format() {
        assert_eq!(
            linkset_link_format(&sets()),
            "<http://r.org/X>; rel=\"cite-as\"; anchor=\"http://a.org/s/filelist/x\",\n\
             <http://a.org/m.xml>; rel=\"describedby\"; type=\"application/xml\"; profile=\"http://www.openarchives.org/OAI/2.0/oai_dc/\"; anchor=\"http://a.org/s/filelist/x\",\n\
             <http://a.org/f%2C1.txt>; rel=\"item\"; type=\"text/plain\"; anchor=\"http://a.org/s/filelist/x\",\n\
             <http://a.org/f2.txt>; rel=\"item\"; type=\"text/plain\"; anchor=\"http://a.org/s/filelist/x\",\n\
             <http://a.org/s/filelist/x>; rel=\"collection\"; type=\"text/html\"; anchor=\"http://a.org/f,1.txt\"\n"
        );
    }

    impl Texts {
        /// Every text by its name. The pattern names every field: a text added to
        /// [`Texts`] and not here does not compile.
        fn all(&self) -> Vec<(&'static str, &'static str)> {
            let Texts {
                item_named,
                removed,
                how_to_cite,
                persistent_url,
                about,
                cite_as,
                accesses,
                last_edition,
                all_editions,
                identifier,
                updated,
                removed_on,
                reason,
                files,
                name,
                size,
                type_,
                no_files,
                withheld,
                more,
                more_unknown,
                related,
                next_edition,
                translation,
                metadata,
                oai_dc,
                free_form,
            } = *self;
            vec![
                ("item_named", item_named),
                ("removed", removed),
                ("how_to_cite", how_to_cite),
                ("persistent_url", persistent_url),
                ("about", about),
                ("cite_as", cite_as),
                ("accesses", accesses),
                ("last_edition", last_edition),
                ("all_editions", all_editions),
                ("identifier", identifier),
                ("updated", updated),
                ("removed_on", removed_on),
                ("reason", reason),
                ("files", files),
                ("name", name),
                ("size", size),
                ("type_", type_),
                ("no_files", no_files),
                ("withheld", withheld),
                ("more", more),
                ("more_unknown", more_unknown),
                ("related", related),
                ("next_edition", next_edition),
                ("translation", translation),
                ("metadata", metadata),
                ("oai_dc", oai_dc),
                ("free_form", free_form),
            ]
        }
    }

    /// Every text is there in both languages: not empty, with as many `{}` as the
    /// English (one where a value goes, none elsewhere), nothing HTML would read as
    /// markup (they are written as they are), and a translation, not a copy — but the
    /// words both languages share ("Item").
    #[test]
    fn every_text_in_both_languages() {
        let (en, pt) = (EN.all(), PT.all());
        let with_value = ["item_named", "more", "more_unknown"];
        let same_in_both = ["item_named"];
        for ((name, en), (_, pt)) in en.into_iter().zip(pt) {
            let holes = usize::from(with_value.contains(&name));
            for text in [en, pt] {
                assert!(!text.trim().is_empty(), "{name}");
                assert_eq!(text.matches("{}").count(), holes, "{name}: {text}");
                assert!(!text.contains(['<', '>', '&', '"']), "{name}: {text}");
            }
            assert_eq!(
                en == pt,
                same_in_both.contains(&name),
                "{name}: {en} / {pt}"
            );
        }
    }
}
