//! The landing page of an item (GetFileList, resolution standard §9.2 CRIARPARURL), at
//! `<baseurl>/<archiveserviceibi>/filelist/<rep>`: what it is (title, creators, date,
//! language, from its metadata item's `oai_dc` record), how to cite it (its persistent
//! URL, [`crate::config::Config::persistent_url`], and a citation), its files, its
//! editions, translations and metadata formats, in Portuguese or English
//! (Accept-Language); schema.org JSON-LD embedded, or alone for a client that prefers
//! `application/ld+json` (Accept); the same links as Signposting `Link` headers. A
//! tombstone (410) keeps the citation, with the removal date and its `reason`. README.md,
//! "Landing pages", says what is written where.
//!
//! Bounded whatever the item holds: at most [`MAX_SHOWN`] files are looked at (of
//! `layout::MAX_LISTED_ENTRIES` directory entries read), [`MAX_RELATED`] translations,
//! one metadata record of at most [`::ibi::dc::MAX_RECORD`] bytes, and the `Link`
//! header stays under [`MAX_LINK_HEADER`] bytes.

use std::io::Read;
use std::net::IpAddr;

use serde::Serialize;

use crate::config::Config;
use crate::ibi::Ibi;
use crate::item::{Access, ContentType, Item, State, MAX_REASON};
use crate::layout::{self, DocEntry};
use crate::markup::escape_html;
use crate::routes::{content_type, Headers};
use crate::service::{Answer, Archive};
use ::ibi::dc::{DublinCore, MAX_RECORD};
use ::ibi::escape::uri_reference;
use ::ibi::negotiate::{negotiate, preferences, Given, PageLang, Wanted, OAI_DC_PROFILE};

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
/// The Content-Security-Policy of the pages: no script, no external resource; the one
/// inline style.
pub const PAGE_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

/// The page for the item named `ibi` (as it appears in the page's URL,
/// `layout::split_file_list_path`), for a browser at `client` sending `headers`, with the
/// lines for the log its lookup wrote.
pub fn page(archive: &Archive, ibi: &[u8], client: Option<IpAddr>, headers: &Headers) -> Answer {
    let Some(parsed) = std::str::from_utf8(ibi)
        .ok()
        .and_then(|ibi| Ibi::parse(ibi).ok())
    else {
        return html(404, "Not found", "<p>This is not the IBI of an item.</p>");
    };
    let found = archive.store().find(&parsed);
    let mut log = found.log.into_lines();
    let mut answer = match &found.item {
        Some(item) => {
            let lang = PageLang::of(&preferences(headers.accept_language.as_deref()));
            let landing = Landing::of(archive, item, client, lang, &mut log);
            if negotiate(headers.accept.as_deref(), Given::Html) == Wanted::JsonLd {
                landing.json_ld_answer()
            } else {
                landing.html_answer()
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

/// The URL of the landing page of the item `rep` (what `Archive::file_list_url` gives).
pub fn landing_url(config: &Config, rep: &str) -> String {
    let mut url = format!("{}/{}", config.baseurl, config.service);
    layout::push_file_list_path(&mut url, rep);
    url
}

/// The persistent URL of an item: by its IBIp, else its rep.
pub fn persistent_url(config: &Config, item: &Item) -> String {
    config.persistent_url(item.cited_as())
}

/// The Signposting links of a file of the item `rep` cited as `cited_as` (its IBIp, else
/// its rep: `Item::cited_as`), the `Link` values of `routes::file`: the item's persistent
/// URL (`cite-as`) and its landing page (`collection`). No file is looked at.
pub fn file_links(config: &Config, cited_as: &str, rep: &str) -> Vec<String> {
    vec![
        format!(
            "<{}>; rel=\"cite-as\"",
            uri_reference(&config.persistent_url(cited_as))
        ),
        format!(
            "<{}>; rel=\"collection\"; type=\"text/html\"",
            uri_reference(&landing_url(config, rep))
        ),
    ]
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
}

/// Everything a landing page says of an item, worked out once for its HTML, its JSON-LD
/// and its `Link` header.
struct Landing<'a> {
    lang: PageLang,
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
    translations: Vec<(String, String)>,
    license: Option<String>,
}

impl<'a> Landing<'a> {
    fn of(
        archive: &Archive,
        item: &'a Item,
        client: Option<IpAddr>,
        lang: PageLang,
        log: &mut Vec<String>,
    ) -> Landing<'a> {
        let config = archive.config();
        let access = item.access(config, client);
        let (dc, formats, meta_private) = metadata(archive, item, client, log);
        let files = match access {
            Access::Deleted => Files::Removed,
            Access::Restricted => Files::Withheld,
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
            .find(|r| {
                (r.starts_with("http://") || r.starts_with("https://"))
                    && !r.contains(|c: char| c.is_whitespace() || "<>\"".contains(c))
            })
            .map(str::to_string);
        Landing {
            lang,
            item,
            private: item.depends_on_network() || meta_private,
            status: if live { 200 } else { 410 },
            persistent: persistent_url(config, item),
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
            translations,
            license,
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

    /// The citation: `Creator; Creator. Title. Date. Persistent URL.` (the elements of
    /// DataCite's recommended citation, without publisher, in its order), each part
    /// there is, the title the IBI when there is none.
    fn citation(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let creators: Vec<&str> = self.dc.all("creator").collect();
        if !creators.is_empty() {
            parts.push(creators.join("; "));
        }
        parts.push(self.title().unwrap_or(&self.ibi).to_string());
        if let Some(d) = self.dc.first("date") {
            parts.push(d.to_string());
        }
        parts.push(self.persistent.clone());
        let mut out = String::new();
        for p in parts {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&p);
            if !p.ends_with('.') {
                out.push('.');
            }
        }
        out
    }

    /// The Signposting links, in order: `cite-as`, `type`, `describedby`, `license`, then
    /// `item` links, each after `cite-as` only while the whole `Link` header stays under
    /// [`MAX_LINK_HEADER`] bytes (a long URL of the metadata item or of the licence is
    /// left out; the page's text still links to it).
    fn links(&self) -> Vec<Link> {
        let mut candidates = Vec::new();
        for t in ["AboutPage", self.schema_type] {
            candidates.push(Link {
                url: format!("https://schema.org/{t}"),
                rel: "type",
                media_type: None,
                profile: None,
            });
        }
        for f in &self.formats {
            candidates.push(Link {
                url: f.url.clone(),
                rel: "describedby",
                media_type: Some(f.media_type),
                profile: f.profile,
            });
        }
        if let Some(l) = &self.license {
            candidates.push(Link {
                url: l.clone(),
                rel: "license",
                media_type: None,
                profile: None,
            });
        }
        if let Files::Listed { rows, .. } = &self.files {
            for r in rows.iter().take(MAX_ITEM_LINKS) {
                candidates.push(Link {
                    url: r.url.clone(),
                    rel: "item",
                    media_type: Some(r.media_type),
                    profile: None,
                });
            }
        }
        let cite_as = Link {
            url: self.persistent.clone(),
            rel: "cite-as",
            media_type: None,
            profile: None,
        };
        // The header joins its links with `, `.
        let mut length = cite_as.header_value().len();
        let mut links = vec![cite_as];
        for link in candidates {
            let more = link.header_value().len() + 2;
            if length + more <= MAX_LINK_HEADER {
                length += more;
                links.push(link);
            }
        }
        links
    }

    /// The headers every answer of the page carries.
    fn headers(&self) -> Vec<(String, String)> {
        let links: Vec<String> = self.links().iter().map(Link::header_value).collect();
        let mut h: Vec<(String, String)> = vec![
            ("Link".into(), links.join(", ")),
            ("Vary".into(), "Accept, Accept-Language".into()),
            ("Content-Language".into(), self.lang.code().into()),
            ("Content-Security-Policy".into(), PAGE_CSP.into()),
            ("X-Content-Type-Options".into(), "nosniff".into()),
        ];
        if self.private {
            // `Vary: *` (which says more than the two fields) in place of the list.
            h.retain(|(n, _)| n != "Vary");
            h.extend(crate::routes::PRIVATE.map(|(n, v)| (n.to_string(), v.to_string())));
        }
        h
    }

    fn json_ld_answer(&self) -> Answer {
        let mut body = self.json_ld();
        body.push('\n');
        Answer {
            content_type: "application/ld+json",
            headers: self.headers(),
            ..Answer::text(self.status, body)
        }
    }

    fn html_answer(&self) -> Answer {
        Answer {
            content_type: HTML,
            headers: self.headers(),
            ..Answer::text(self.status, self.html())
        }
    }

    /// The schema.org description (README.md, "The JSON-LD of an item").
    fn json_ld(&self) -> String {
        let live = self.item.state != State::Deleted;
        let modified = self.item.timestamp.map(crate::time::iso8601);
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
            correction: self.reason().map(|r| Correction {
                type_: "CorrectionComment",
                text: r.to_string(),
                date_published: modified.clone(),
            }),
        };
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    }

    fn html(&self) -> String {
        let t = texts(self.lang);
        let e = escape_html;
        let heading = match self.title() {
            Some(title) => e(title),
            None => t.item_named.replace("{}", &e(&self.ibi)),
        };
        let mut head_links = String::new();
        for l in self.links() {
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
             <script type=\"application/ld+json\">\n{json}\n</script>\n</head>\n<body>\n<main>\n\
             <h1>{heading}</h1>\n",
            lang = self.lang.code(),
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
        // What it is.
        b.push_str(&format!("<h2>{}</h2>\n<dl>\n", t.about));
        let mut row = |term: &str, value: String| {
            b.push_str(&format!("<dt>{term}</dt><dd>{value}</dd>\n"));
        };
        if let Some(title) = self.title() {
            row(t.title, e(title));
        }
        let creators: Vec<String> = self.dc.all("creator").map(e).collect();
        if !creators.is_empty() {
            row(t.creators, creators.join("; "));
        }
        if let Some(d) = self.dc.first("date") {
            row(t.date, e(d));
        }
        if let Some(l) = self.language() {
            row(t.language, e(&l));
        }
        if let Some(r) = self.dc.first("rights") {
            row(t.rights, e(r));
        }
        row(t.identifier, e(&self.ibi));
        if let Some(ts) = self.item.timestamp {
            let iso = crate::time::iso8601(ts);
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
        b.push_str("</dl>\n");
        // Its files.
        match &self.files {
            Files::Removed => {}
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
        // Its editions and translations.
        if self.next_edition.is_some() || !self.translations.is_empty() {
            b.push_str(&format!("<h2>{}</h2>\n<ul>\n", t.related));
            if let Some(n) = &self.next_edition {
                b.push_str(&format!(
                    "<li>{}: <a href=\"{url}\">{url}</a></li>\n",
                    t.next_edition,
                    url = e(n)
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
        // Its metadata.
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
        b.push_str("</main>\n</body>\n</html>\n");
        b
    }
}

/// The metadata item's Dublin Core record and formats, when there is one this client may
/// have: the item's `metadata`, or the item itself when it is a metadata item; and
/// whether that depended on the client's network (a restricted metadata item).
fn metadata(
    archive: &Archive,
    item: &Item,
    client: Option<IpAddr>,
    log: &mut Vec<String>,
) -> (DublinCore, Vec<Format>, bool) {
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
                None => return Default::default(),
            }
        }
        None if item.contenttype == ContentType::Metadata => item,
        None => return Default::default(),
    };
    let private = meta.depends_on_network();
    if meta.access(archive.config(), client) != Access::Granted {
        return (DublinCore::default(), Vec::new(), private);
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
    (dc, formats, private)
}

/// The Dublin Core record `file` of the metadata item `meta`, opened as it is served
/// (under its name stored as Latin-1 bytes too, `ItemDir::stored_doc_name`).
fn read_record(meta: &Item, file: &str) -> Result<DublinCore, String> {
    let dir = meta.handle.as_ref().ok_or("no directory")?;
    let stored = dir
        .stored_doc_name(file.as_bytes())
        .map_err(|_| "cannot be opened")?;
    let Ok(DocEntry::File(f)) = dir.open_doc(&stored) else {
        return Err("cannot be opened".into());
    };
    if f.len > MAX_RECORD {
        return Err(format!(
            "larger than {MAX_RECORD} bytes: not shown on landing pages"
        ));
    }
    let mut text = String::new();
    (&f.file)
        .take(MAX_RECORD)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
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
    /// As a `Link` header value (RFC 8288).
    fn header_value(&self) -> String {
        let mut v = format!("<{}>; rel=\"{}\"", uri_reference(&self.url), self.rel);
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

#[derive(Serialize)]
struct Agent {
    #[serde(rename = "@type")]
    type_: &'static str,
    name: String,
}

impl Agent {
    /// A creator: a Person when written `Family, Given` (the form Dublin Core gives
    /// persons), else an Organization.
    fn of(name: &str) -> Agent {
        Agent {
            type_: if name.contains(',') {
                "Person"
            } else {
                "Organization"
            },
            name: name.to_string(),
        }
    }
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

#[derive(Serialize)]
struct Correction {
    #[serde(rename = "@type")]
    type_: &'static str,
    text: String,
    #[serde(rename = "datePublished", skip_serializing_if = "Option::is_none")]
    date_published: Option<String>,
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
    title: &'static str,
    creators: &'static str,
    date: &'static str,
    language: &'static str,
    rights: &'static str,
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
    title: "Title",
    creators: "Creators",
    date: "Date",
    language: "Language",
    rights: "Rights",
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
    title: "Título",
    creators: "Autoria",
    date: "Data",
    language: "Idioma",
    rights: "Direitos",
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

/// The page's one style: readable on a phone, contrast above 7:1 for text and links.
const STYLE: &str =
    "body{margin:0;font:1rem/1.5 system-ui,sans-serif;color:#1b1b1b;background:#fff}\
main{max-width:50rem;margin:0 auto;padding:1rem}\
h1{font-size:1.6rem;line-height:1.25;margin:.5rem 0 1rem}\
h2{font-size:1.2rem;margin:1.5rem 0 .5rem}\
a{color:#0b3d91}\
.cite{background:#f2f2f2;border-left:4px solid #555;padding:.75rem;overflow-wrap:anywhere}\
.gone{background:#fbe9e7;color:#5c1a10;border-left:4px solid #8c2a1c;padding:.75rem}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}\
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}\
table{border-collapse:collapse;width:100%}\
th,td{text-align:left;vertical-align:top;padding:.3rem .5rem;border-bottom:1px solid #999}\
tbody th{font-weight:normal;overflow-wrap:anywhere}\
@media (max-width:32rem){dl{grid-template-columns:1fr}dd{margin-bottom:.5rem}}";

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
    fn creators_with_a_comma_are_persons() {
        assert_eq!(Agent::of("Banon, Gerald").type_, "Person");
        assert_eq!(Agent::of("CCSDS").type_, "Organization");
        assert_eq!(
            Agent::of("Instituto Nacional de Pesquisas Espaciais").type_,
            "Organization"
        );
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
    fn every_text_in_both_languages() {
        for t in [&EN, &PT] {
            for text in [t.item_named, t.more, t.more_unknown] {
                assert!(text.contains("{}"), "{text}");
            }
        }
    }
}
