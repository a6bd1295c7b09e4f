//! An item's citation in the forms reference managers and readers ask for, as doi.org
//! answers them for a DOI by content negotiation: BibTeX (`application/x-bibtex`), RIS
//! (`application/x-research-info-systems`), CSL-JSON
//! (`application/vnd.citationstyles.csl+json`) and a formatted reference
//! (`text/x-bibliography`, in a style and a locale named as doi.org names them, APA in
//! American English when none is named).
//!
//! A citation is made of what the item's Dublin Core record says ([`Work::from_dc`]) and
//! its persistent URL; nothing is looked up. Creators are read as Dublin Core writes them:
//! `Family, Given` for a person, anything without a comma as a name to be written as it is
//! (an institution). The formatted styles are written here, one function each, for what a
//! Dublin Core record can hold (creators, title, date, publisher, type, URL); the CSL-JSON
//! is what a CSL processor needs to render any other style.

use std::fmt;

use serde_json::{json, Map, Value};

use crate::dc::DublinCore;

/// A form of citation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// BibTeX, one `@type{key, …}` entry.
    BibTex,
    /// RIS, one record from `TY` to `ER`, a line a tag.
    Ris,
    /// CSL-JSON, one item (an object, as doi.org gives it).
    CslJson,
    /// A formatted reference, plain text, in a style and a locale ([`Options`]).
    Bibliography,
}

impl Format {
    /// Every form, in the order a page offers them.
    pub const ALL: [Format; 4] = [
        Format::Bibliography,
        Format::BibTex,
        Format::Ris,
        Format::CslJson,
    ];

    /// Its media type, as `Accept` names it.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::BibTex => "application/x-bibtex",
            Format::Ris => "application/x-research-info-systems",
            Format::CslJson => "application/vnd.citationstyles.csl+json",
            Format::Bibliography => "text/x-bibliography",
        }
    }

    /// Its name in a `format=` query.
    pub fn name(self) -> &'static str {
        match self {
            Format::BibTex => "bibtex",
            Format::Ris => "ris",
            Format::CslJson => "csl-json",
            Format::Bibliography => "bibliography",
        }
    }

    /// Its `Content-Type`: [`Format::media_type`], in UTF-8.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::BibTex => "application/x-bibtex; charset=utf-8",
            Format::Ris => "application/x-research-info-systems; charset=utf-8",
            Format::CslJson => "application/vnd.citationstyles.csl+json; charset=utf-8",
            Format::Bibliography => "text/x-bibliography; charset=utf-8",
        }
    }

    /// The extension of a file of it, for a download's name.
    pub fn extension(self) -> &'static str {
        match self {
            Format::BibTex => "bib",
            Format::Ris => "ris",
            Format::CslJson => "json",
            Format::Bibliography => "txt",
        }
    }
}

/// The style and locale of a formatted reference, as asked (`style=`, `locale=`); the
/// defaults when absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub style: Option<String>,
    pub locale: Option<String>,
}

/// What cannot be written: a style or a locale this program does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unknown {
    Style(String),
    Locale(String),
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unknown::Style(s) => write!(
                f,
                "no such citation style: {s:?} (one of: {})",
                Style::ALL.map(Style::name).join(", ")
            ),
            Unknown::Locale(l) => write!(
                f,
                "no such locale for citations: {l:?} (en-US, pt-BR, or another en-* or pt-*)"
            ),
        }
    }
}

impl std::error::Error for Unknown {}

/// The formatted styles, each by the name doi.org (and the CSL style repository) gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Apa,
    ChicagoAuthorDate,
    Ieee,
    Mla,
    Harvard,
    Vancouver,
    Abnt,
}

impl Style {
    pub const ALL: [Style; 7] = [
        Style::Apa,
        Style::ChicagoAuthorDate,
        Style::Ieee,
        Style::Mla,
        Style::Harvard,
        Style::Vancouver,
        Style::Abnt,
    ];

    /// Its name, as `style=` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Style::Apa => "apa",
            Style::ChicagoAuthorDate => "chicago-author-date",
            Style::Ieee => "ieee",
            Style::Mla => "modern-language-association",
            Style::Harvard => "harvard-cite-them-right",
            Style::Vancouver => "vancouver",
            Style::Abnt => "associacao-brasileira-de-normas-tecnicas",
        }
    }

    /// What a page calls it.
    pub fn label(self) -> &'static str {
        match self {
            Style::Apa => "APA",
            Style::ChicagoAuthorDate => "Chicago",
            Style::Ieee => "IEEE",
            Style::Mla => "MLA",
            Style::Harvard => "Harvard",
            Style::Vancouver => "Vancouver",
            Style::Abnt => "ABNT",
        }
    }

    /// The style `name` names (any case), or one of its usual short names (`mla`,
    /// `harvard`, `harvard1`, `abnt`, `chicago`).
    pub fn parse(name: &str) -> Option<Style> {
        let name = name.trim().to_ascii_lowercase();
        let short = match name.as_str() {
            "mla" => Some(Style::Mla),
            "harvard" | "harvard1" => Some(Style::Harvard),
            "abnt" => Some(Style::Abnt),
            "chicago" => Some(Style::ChicagoAuthorDate),
            _ => None,
        };
        short.or_else(|| Style::ALL.into_iter().find(|s| s.name() == name))
    }
}

/// The language of a formatted reference's own words (`and`, `n.d.`, `Available at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locale {
    En,
    Pt,
}

impl Locale {
    /// `en-US`, `en-GB`, `en` … → English; `pt-BR`, `pt` … → Portuguese.
    pub fn parse(tag: &str) -> Option<Locale> {
        let tag = tag.trim().to_ascii_lowercase();
        let language = tag.split(['-', '_']).next().unwrap_or("");
        let rest_ok = tag[language.len()..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        match language {
            "en" if rest_ok => Some(Locale::En),
            "pt" if rest_ok => Some(Locale::Pt),
            _ => None,
        }
    }

    fn words(self) -> &'static Words {
        match self {
            Locale::En => &EN,
            Locale::Pt => &PT,
        }
    }
}

/// A locale's words.
struct Words {
    and: &'static str,
    no_date: &'static str,
    available_at: &'static str,
    available_from: &'static str,
    online: &'static str,
    data_set: &'static str,
    software: &'static str,
}

const EN: Words = Words {
    and: "and",
    no_date: "n.d.",
    available_at: "Available at",
    available_from: "Available from",
    online: "[Online]",
    data_set: "Data set",
    software: "Computer software",
};

const PT: Words = Words {
    and: "e",
    no_date: "s.d.",
    available_at: "Disponível em",
    available_from: "Disponível em",
    online: "[On-line]",
    data_set: "Conjunto de dados",
    software: "Software",
};

/// What kind of work it is, as its first Dublin Core `type` says (the DCMI Type
/// Vocabulary, and the usual words in English and Portuguese).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Article,
    Book,
    Thesis,
    Report,
    Dataset,
    Software,
    Image,
    Other,
}

impl Kind {
    /// The kind a `type` value names.
    pub fn of(dc_type: Option<&str>) -> Kind {
        let Some(t) = dc_type else {
            return Kind::Other;
        };
        let t = t.trim().to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
        if has(&["article", "artigo"]) {
            Kind::Article
        } else if has(&["thesis", "dissertation", "tese", "dissertação"]) {
            Kind::Thesis
        } else if has(&["book", "livro"]) {
            Kind::Book
        } else if has(&["dataset", "data set", "conjunto de dados"]) {
            Kind::Dataset
        } else if has(&["software"]) {
            Kind::Software
        } else if has(&["image", "imagem"]) {
            Kind::Image
        } else if has(&["text", "report", "relatório", "texto"]) {
            Kind::Report
        } else {
            Kind::Other
        }
    }

    fn bibtex(self, has_publisher: bool) -> &'static str {
        match self {
            Kind::Article => "article",
            Kind::Book => "book",
            Kind::Thesis => "phdthesis",
            Kind::Report if has_publisher => "techreport",
            _ => "misc",
        }
    }

    fn ris(self) -> &'static str {
        match self {
            Kind::Article => "JOUR",
            Kind::Book => "BOOK",
            Kind::Thesis => "THES",
            Kind::Report => "RPRT",
            Kind::Dataset => "DATA",
            Kind::Software => "COMP",
            Kind::Image => "FIGURE",
            Kind::Other => "GEN",
        }
    }

    fn csl(self) -> &'static str {
        match self {
            Kind::Article => "article-journal",
            Kind::Book => "book",
            Kind::Thesis => "thesis",
            Kind::Report => "report",
            Kind::Dataset => "dataset",
            Kind::Software => "software",
            Kind::Image => "graphic",
            Kind::Other => "document",
        }
    }

    /// What APA and Harvard write in brackets after the title.
    fn bracket(self, w: &Words) -> Option<&'static str> {
        match self {
            Kind::Dataset => Some(w.data_set),
            Kind::Software => Some(w.software),
            _ => None,
        }
    }
}

/// A creator, as Dublin Core writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    /// `Family, Given`.
    Person { family: String, given: String },
    /// Anything without a comma: written as it is.
    Literal(String),
}

impl Name {
    pub fn parse(creator: &str) -> Name {
        match creator.split_once(',') {
            Some((family, given)) if !family.trim().is_empty() && !given.trim().is_empty() => {
                Name::Person {
                    family: family.trim().to_string(),
                    given: given.trim().to_string(),
                }
            }
            _ => Name::Literal(creator.trim().trim_matches(',').trim().to_string()),
        }
    }

    /// `Family, G. M.` (APA, Harvard without the dots' spaces aside).
    fn family_initials(&self) -> String {
        match self {
            Name::Person { family, given } => format!("{family}, {}", initials(given, ". ")),
            Name::Literal(s) => s.clone(),
        }
    }

    /// `G. M. Family` (IEEE).
    fn initials_family(&self) -> String {
        match self {
            Name::Person { family, given } => format!("{} {family}", initials(given, ". ")),
            Name::Literal(s) => s.clone(),
        }
    }

    /// `Family, Given` (Chicago's and MLA's first author).
    fn inverted(&self) -> String {
        match self {
            Name::Person { family, given } => format!("{family}, {given}"),
            Name::Literal(s) => s.clone(),
        }
    }

    /// `Given Family` (Chicago's and MLA's others).
    fn direct(&self) -> String {
        match self {
            Name::Person { family, given } => format!("{given} {family}"),
            Name::Literal(s) => s.clone(),
        }
    }

    /// `Family GM` (Vancouver).
    fn vancouver(&self) -> String {
        match self {
            Name::Person { family, given } => format!("{family} {}", initials(given, "")),
            Name::Literal(s) => s.clone(),
        }
    }

    /// `FAMILY, Given` (ABNT).
    fn abnt(&self) -> String {
        match self {
            Name::Person { family, given } => format!("{}, {given}", family.to_uppercase()),
            Name::Literal(s) => s.to_uppercase(),
        }
    }
}

/// The initials of given names, each followed by `sep` trimmed at the end: `Gerald Jean` →
/// `G. J.` (`". "`) or `GJ` (`""`); a hyphenated name keeps its hyphen (`Jean-Paul` →
/// `J.-P.`).
fn initials(given: &str, sep: &str) -> String {
    let dot = sep.trim_end();
    let mut words = Vec::new();
    for word in given.split_whitespace() {
        let parts: Vec<String> = word
            .split('-')
            .filter_map(|p| p.chars().next())
            .map(|c| format!("{c}{dot}"))
            .collect();
        if !parts.is_empty() {
            words.push(parts.join("-"));
        }
    }
    let space = if sep.ends_with(' ') { " " } else { "" };
    words.join(space)
}

/// A date as a record writes it, read as far as it goes: `2012`, `2012-06`,
/// `2012-06-15` (anything after is left out); else the first run of four digits, a year.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issued {
    pub year: u32,
    pub month: Option<u32>,
    pub day: Option<u32>,
}

impl Issued {
    pub fn parse(date: &str) -> Option<Issued> {
        let date = date.trim();
        let mut parts = date.splitn(3, '-');
        let number = |s: Option<&str>, len: usize, max: u32| {
            s.filter(|s| !s.as_bytes().get(len).is_some_and(u8::is_ascii_digit))
                .map(|s| s.get(..len.min(s.len())).unwrap_or(s))
                .filter(|s| s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|s| s.parse::<u32>().ok())
                .filter(|n| (1..=max).contains(n))
        };
        if let Some(year) = number(parts.next(), 4, 9999) {
            let month = number(parts.next(), 2, 12);
            let day = month.and_then(|_| number(parts.next(), 2, 31));
            return Some(Issued { year, month, day });
        }
        // The first four digits standing alone.
        let bytes = date.as_bytes();
        (0..bytes.len().saturating_sub(3)).find_map(|i| {
            let run = &bytes[i..i + 4];
            let alone = (i == 0 || !bytes[i - 1].is_ascii_digit())
                && bytes.get(i + 4).is_none_or(|b| !b.is_ascii_digit());
            (alone && run.iter().all(u8::is_ascii_digit))
                .then(|| date[i..i + 4].parse().ok())
                .flatten()
                .map(|year| Issued {
                    year,
                    month: None,
                    day: None,
                })
        })
    }
}

/// The work cited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    pub title: Option<String>,
    pub creators: Vec<Name>,
    pub issued: Option<Issued>,
    pub publisher: Option<String>,
    pub kind: Kind,
    pub language: Option<String>,
    pub abstract_text: Option<String>,
    /// The persistent URL.
    pub url: String,
    /// The IBI it is cited by (the key of the BibTeX entry, the RIS `ID`).
    pub id: String,
}

impl Work {
    /// The work a Dublin Core record describes, cited by `url`, its IBI `ibi`.
    pub fn from_dc(dc: &DublinCore, url: &str, ibi: &str) -> Work {
        let owned = |e: &str| dc.first(e).map(str::to_string);
        Work {
            title: owned("title"),
            creators: dc.all("creator").map(Name::parse).collect(),
            issued: dc.first("date").and_then(Issued::parse),
            publisher: owned("publisher"),
            kind: Kind::of(dc.first("type")),
            language: owned("language"),
            abstract_text: owned("description"),
            url: url.to_string(),
            id: ibi.to_string(),
        }
    }

    /// The title, else the IBI.
    fn title_or_id(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.id)
    }
}

/// The citation of `work` in `format` (`options` for a formatted reference), ending with
/// a line end.
pub fn render(work: &Work, format: Format, options: &Options) -> Result<String, Unknown> {
    let mut out = match format {
        Format::BibTex => bibtex(work),
        Format::Ris => ris(work),
        Format::CslJson => csl_json(work),
        Format::Bibliography => {
            let style = match &options.style {
                Some(s) => Style::parse(s).ok_or_else(|| Unknown::Style(s.clone()))?,
                None => Style::Apa,
            };
            let locale = match &options.locale {
                Some(l) => Locale::parse(l).ok_or_else(|| Unknown::Locale(l.clone()))?,
                None => Locale::En,
            };
            bibliography(work, style, locale)
        }
    };
    out.push('\n');
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// BibTeX

/// A BibTeX value: the characters TeX treats as commands or groups escaped, so that braces
/// always balance and the text reads back as written.
fn tex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '{' | '}' | '&' | '%' | '$' | '#' | '_' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            c => out.push(c),
        }
    }
    out
}

/// The key of the entry: the IBI's letters and digits, `_` for the rest.
fn bibtex_key(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A creator in an `author` field: a person `Family, Given`; an institution in braces, so
/// that it is not read as a person's names (nor split at an `and` of its own).
fn bibtex_name(name: &Name) -> String {
    match name {
        Name::Person { family, given } => {
            let braced = |s: &str| {
                if s.split_whitespace().any(|w| w.eq_ignore_ascii_case("and")) {
                    format!("{{{}}}", tex(s))
                } else {
                    tex(s)
                }
            };
            format!("{}, {}", braced(family), braced(given))
        }
        Name::Literal(s) => format!("{{{}}}", tex(s)),
    }
}

fn bibtex(w: &Work) -> String {
    let kind = w.kind.bibtex(w.publisher.is_some());
    let mut fields: Vec<(&str, String)> = Vec::new();
    if !w.creators.is_empty() {
        let names: Vec<String> = w.creators.iter().map(bibtex_name).collect();
        fields.push(("author", names.join(" and ")));
    }
    fields.push(("title", tex(w.title_or_id())));
    if let Some(i) = w.issued {
        fields.push(("year", i.year.to_string()));
        if let Some(m) = i.month {
            fields.push(("month", m.to_string()));
        }
    }
    if let Some(p) = &w.publisher {
        let field = match kind {
            "techreport" => "institution",
            "phdthesis" => "school",
            _ => "publisher",
        };
        fields.push((field, tex(p)));
    }
    if let Some(l) = &w.language {
        fields.push(("language", tex(l)));
    }
    fields.push(("url", w.url.replace('{', "%7B").replace('}', "%7D")));
    let mut out = format!("@{kind}{{{},\n", bibtex_key(&w.id));
    let last = fields.len() - 1;
    for (i, (name, value)) in fields.iter().enumerate() {
        let comma = if i == last { "" } else { "," };
        out.push_str(&format!("  {name} = {{{value}}}{comma}\n"));
    }
    out.push('}');
    out
}

// ---------------------------------------------------------------------------------------
// RIS

fn ris(w: &Work) -> String {
    let mut lines: Vec<(&str, String)> = vec![("TY", w.kind.ris().to_string())];
    for c in &w.creators {
        let au = match c {
            Name::Person { family, given } => format!("{family}, {given}"),
            Name::Literal(s) => s.clone(),
        };
        lines.push(("AU", au));
    }
    lines.push(("TI", w.title_or_id().to_string()));
    if let Some(i) = w.issued {
        lines.push(("PY", i.year.to_string()));
        // RIS dates: YYYY/MM/DD/ with what is known.
        let two = |n: Option<u32>| n.map(|n| format!("{n:02}")).unwrap_or_default();
        lines.push(("DA", format!("{}/{}/{}/", i.year, two(i.month), two(i.day))));
    }
    if let Some(p) = &w.publisher {
        lines.push(("PB", p.clone()));
    }
    if let Some(l) = &w.language {
        lines.push(("LA", l.clone()));
    }
    if let Some(a) = &w.abstract_text {
        lines.push(("AB", a.clone()));
    }
    lines.push(("UR", w.url.clone()));
    lines.push(("ID", w.id.clone()));
    lines.push(("ER", String::new()));
    let mut out = String::new();
    for (tag, value) in lines {
        // One line a tag: a value never holds a line end (a record's white space is
        // collapsed, but a Work may be made otherwise).
        let value: String = value
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        out.push_str(&format!("{tag}  - {value}\n"));
    }
    out.pop();
    out
}

// ---------------------------------------------------------------------------------------
// CSL-JSON

fn csl_json(w: &Work) -> String {
    let mut item = Map::new();
    item.insert("id".into(), json!(w.id));
    item.insert("type".into(), json!(w.kind.csl()));
    item.insert("title".into(), json!(w.title_or_id()));
    if !w.creators.is_empty() {
        let authors: Vec<Value> = w
            .creators
            .iter()
            .map(|c| match c {
                Name::Person { family, given } => json!({"family": family, "given": given}),
                Name::Literal(s) => json!({ "literal": s }),
            })
            .collect();
        item.insert("author".into(), Value::Array(authors));
    }
    if let Some(i) = w.issued {
        let mut parts = vec![i.year];
        parts.extend(i.month);
        parts.extend(i.day);
        item.insert("issued".into(), json!({ "date-parts": [parts] }));
    }
    if let Some(p) = &w.publisher {
        item.insert("publisher".into(), json!(p));
    }
    if let Some(l) = &w.language {
        item.insert("language".into(), json!(l));
    }
    if let Some(a) = &w.abstract_text {
        item.insert("abstract".into(), json!(a));
    }
    item.insert("URL".into(), json!(w.url));
    serde_json::to_string_pretty(&Value::Object(item)).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Formatted references

/// `s` with a full stop after it, unless it ends with one already (or `?`/`!`).
fn sentence(s: &str) -> String {
    if s.ends_with(['.', '?', '!']) {
        s.to_string()
    } else {
        format!("{s}.")
    }
}

/// Names joined with `and` before the last: `a and b` (`a, and b` when `comma_for_two`),
/// `a, b and c` (`a, b, and c` when `serial`).
fn list(names: &[String], and: &str, comma_for_two: bool, serial: bool) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] if comma_for_two => format!("{a}, {and} {b}"),
        [a, b] => format!("{a} {and} {b}"),
        _ => {
            let (last, rest) = names.split_last().expect("three or more");
            let comma = if serial { "," } else { "" };
            format!("{}{comma} {and} {last}", rest.join(", "))
        }
    }
}

fn bibliography(w: &Work, style: Style, locale: Locale) -> String {
    let words = locale.words();
    let year = w
        .issued
        .map(|i| i.year.to_string())
        .unwrap_or_else(|| words.no_date.to_string());
    let title = w.title_or_id();
    let publisher = w.publisher.as_deref();
    let url = &w.url;
    let mut parts: Vec<String> = Vec::new();
    match style {
        Style::Apa => {
            // Family, G., Family, G., & Family, G. (2012). Title [Data set]. Publisher. URL
            let names: Vec<String> = w.creators.iter().map(Name::family_initials).collect();
            let bracket = w
                .kind
                .bracket(words)
                .map(|b| format!(" [{b}]"))
                .unwrap_or_default();
            let dated = format!("({year}).");
            if names.is_empty() {
                parts.push(sentence(&format!("{title}{bracket}")));
                parts.push(dated);
            } else {
                parts.push(sentence(&list(&names, "&", true, true)));
                parts.push(dated);
                parts.push(sentence(&format!("{title}{bracket}")));
            }
            if let Some(p) = publisher {
                parts.push(sentence(p));
            }
            parts.push(url.clone());
        }
        Style::ChicagoAuthorDate => {
            // Family, Given, and Given Family. 2012. Title. Publisher. URL.
            let names: Vec<String> = w
                .creators
                .iter()
                .enumerate()
                .map(|(i, c)| if i == 0 { c.inverted() } else { c.direct() })
                .collect();
            if !names.is_empty() {
                parts.push(sentence(&list(&names, words.and, true, true)));
            }
            parts.push(sentence(&year));
            parts.push(sentence(title));
            if let Some(p) = publisher {
                parts.push(sentence(p));
            }
            parts.push(sentence(url));
        }
        Style::Ieee => {
            // G. Family and G. Family, "Title," Publisher, 2012. [Online]. Available: URL
            let names: Vec<String> = w.creators.iter().map(Name::initials_family).collect();
            let mut head = String::new();
            if !names.is_empty() {
                head.push_str(&list(&names, words.and, false, true));
                head.push_str(", ");
            }
            head.push_str(&format!("\u{201c}{title},\u{201d}"));
            if let Some(p) = publisher {
                head.push_str(&format!(" {p},"));
            }
            head.push_str(&format!(" {year}."));
            parts.push(head);
            parts.push(format!("{}.", words.online));
            let available = match locale {
                Locale::En => "Available:",
                Locale::Pt => "Disponível em:",
            };
            parts.push(format!("{available} {url}"));
        }
        Style::Mla => {
            // Family, Given, and Given Family. Title. Publisher, 2012, URL.
            let names: Vec<String> = match w.creators.as_slice() {
                [] => Vec::new(),
                [one] => vec![one.inverted()],
                [a, b] => vec![a.inverted(), b.direct()],
                [a, ..] => vec![format!("{}, et al", a.inverted())],
            };
            if !names.is_empty() {
                parts.push(sentence(&list(&names, words.and, true, true)));
            }
            parts.push(sentence(title));
            let mut tail: Vec<String> = publisher.into_iter().map(str::to_string).collect();
            if w.issued.is_some() {
                tail.push(year.clone());
            }
            tail.push(url.clone());
            parts.push(sentence(&tail.join(", ")));
        }
        Style::Harvard => {
            // Family, G. and Family, G. (2012) Title. Publisher. Available at: URL.
            let names: Vec<String> = w.creators.iter().map(Name::family_initials).collect();
            let mut head = String::new();
            if !names.is_empty() {
                head.push_str(&list(&names, words.and, false, false));
                head.push(' ');
            }
            head.push_str(&format!("({year})"));
            parts.push(head);
            let bracket = w
                .kind
                .bracket(words)
                .map(|b| format!(" [{b}]"))
                .unwrap_or_default();
            parts.push(sentence(&format!("{title}{bracket}")));
            if let Some(p) = publisher {
                parts.push(sentence(p));
            }
            parts.push(format!("{}: {url}.", words.available_at));
        }
        Style::Vancouver => {
            // Family GM, Family G. Title [Internet]. Publisher; 2012. Available from: URL
            let names: Vec<String> = w.creators.iter().map(Name::vancouver).collect();
            if !names.is_empty() {
                parts.push(sentence(&names.join(", ")));
            }
            let internet = match locale {
                Locale::En => "[Internet]",
                Locale::Pt => "[Internet]",
            };
            parts.push(format!("{} {internet}.", title.trim_end_matches('.')));
            match publisher {
                Some(p) => parts.push(format!("{p}; {year}.")),
                None => parts.push(sentence(&year)),
            }
            parts.push(format!("{}: {url}", words.available_from));
        }
        Style::Abnt => {
            // FAMILY, Given; FAMILY, Given. Title. Publisher, 2012. Disponível em: URL.
            let names: Vec<String> = w.creators.iter().map(Name::abnt).collect();
            if !names.is_empty() {
                parts.push(sentence(&names.join("; ")));
            }
            parts.push(sentence(title));
            match publisher {
                Some(p) => parts.push(format!("{p}, {year}.")),
                None => parts.push(sentence(&year)),
            }
            parts.push(format!("{}: {url}.", words.available_at));
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://urlib.net/8JMKD3MGP8W/35MME4E";

    fn record(xml_body: &str) -> DublinCore {
        DublinCore::parse(&format!(
            "<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" \
             xmlns:dc=\"http://purl.org/dc/elements/1.1/\">{xml_body}</oai_dc:dc>"
        ))
        .unwrap()
    }

    /// A report with accents, braces, an ampersand and quotes in its title and names.
    fn report() -> Work {
        let dc = record(
            "<dc:title>Relatório {final} &amp; \"dados\" 100% de_Ti</dc:title>\
             <dc:creator>Banon, Gerald Jean Francis</dc:creator>\
             <dc:creator>Ribeiro, Márcia</dc:creator>\
             <dc:creator>Instituto Nacional de Pesquisas Espaciais</dc:creator>\
             <dc:date>2012-06-15</dc:date>\
             <dc:type>Text</dc:type>\
             <dc:publisher>INPE</dc:publisher>\
             <dc:language>pt</dc:language>\
             <dc:description>Um resumo.</dc:description>",
        );
        Work::from_dc(&dc, URL, "8JMKD3MGP8W/35MME4E")
    }

    fn cite(w: &Work, format: Format) -> String {
        render(w, format, &Options::default()).unwrap()
    }

    fn styled(w: &Work, style: &str, locale: &str) -> String {
        render(
            w,
            Format::Bibliography,
            &Options {
                style: Some(style.into()),
                locale: Some(locale.into()),
            },
        )
        .unwrap()
    }

    #[test]
    fn bibtex_escapes_what_tex_reads() {
        assert_eq!(
            cite(&report(), Format::BibTex),
            "@techreport{8JMKD3MGP8W_35MME4E,\n\
             \x20 author = {Banon, Gerald Jean Francis and Ribeiro, Márcia and {Instituto Nacional de Pesquisas Espaciais}},\n\
             \x20 title = {Relatório \\{final\\} \\& \"dados\" 100\\% de\\_Ti},\n\
             \x20 year = {2012},\n\
             \x20 month = {6},\n\
             \x20 institution = {INPE},\n\
             \x20 language = {pt},\n\
             \x20 url = {http://urlib.net/8JMKD3MGP8W/35MME4E}\n\
             }\n"
        );
    }

    #[test]
    fn bibtex_of_the_least_a_record_can_say() {
        let w = Work::from_dc(&DublinCore::default(), URL, "8JMKD3MGP8W/35MME4E");
        assert_eq!(
            cite(&w, Format::BibTex),
            "@misc{8JMKD3MGP8W_35MME4E,\n  title = {8JMKD3MGP8W/35MME4E},\n  url = {http://urlib.net/8JMKD3MGP8W/35MME4E}\n}\n"
        );
        // A person named with `and`, and TeX's other specials.
        let dc =
            record("<dc:creator>Smith and Sons, Jo</dc:creator><dc:title>a\\b~c^d$e#f</dc:title>");
        let w = Work::from_dc(&dc, URL, "x");
        assert_eq!(
            cite(&w, Format::BibTex),
            "@misc{x,\n  author = {{Smith and Sons}, Jo},\n  title = {a\\textbackslash{}b\\textasciitilde{}c\\textasciicircum{}d\\$e\\#f},\n  url = {http://urlib.net/8JMKD3MGP8W/35MME4E}\n}\n"
        );
    }

    #[test]
    fn ris_one_tag_a_line() {
        assert_eq!(
            cite(&report(), Format::Ris),
            "TY  - RPRT\nAU  - Banon, Gerald Jean Francis\nAU  - Ribeiro, Márcia\n\
             AU  - Instituto Nacional de Pesquisas Espaciais\n\
             TI  - Relatório {final} & \"dados\" 100% de_Ti\nPY  - 2012\nDA  - 2012/06/15/\n\
             PB  - INPE\nLA  - pt\nAB  - Um resumo.\n\
             UR  - http://urlib.net/8JMKD3MGP8W/35MME4E\nID  - 8JMKD3MGP8W/35MME4E\nER  - \n"
        );
    }

    #[test]
    fn csl_json_one_item() {
        let v: Value = serde_json::from_str(&cite(&report(), Format::CslJson)).unwrap();
        assert_eq!(
            v,
            json!({
                "id": "8JMKD3MGP8W/35MME4E",
                "type": "report",
                "title": "Relatório {final} & \"dados\" 100% de_Ti",
                "author": [
                    {"family": "Banon", "given": "Gerald Jean Francis"},
                    {"family": "Ribeiro", "given": "Márcia"},
                    {"literal": "Instituto Nacional de Pesquisas Espaciais"}
                ],
                "issued": {"date-parts": [[2012, 6, 15]]},
                "publisher": "INPE",
                "language": "pt",
                "abstract": "Um resumo.",
                "URL": URL
            })
        );
    }

    #[test]
    fn every_style_by_hand() {
        let w = report();
        let t = "Relatório {final} & \"dados\" 100% de_Ti";
        assert_eq!(
            cite(&w, Format::Bibliography),
            format!("Banon, G. J. F., Ribeiro, M., & Instituto Nacional de Pesquisas Espaciais. (2012). {t}. INPE. {URL}\n")
        );
        assert_eq!(
            styled(&w, "chicago-author-date", "en-US"),
            format!("Banon, Gerald Jean Francis, Márcia Ribeiro, and Instituto Nacional de Pesquisas Espaciais. 2012. {t}. INPE. {URL}.\n")
        );
        assert_eq!(
            styled(&w, "ieee", "en-US"),
            format!("G. J. F. Banon, M. Ribeiro, and Instituto Nacional de Pesquisas Espaciais, \u{201c}{t},\u{201d} INPE, 2012. [Online]. Available: {URL}\n")
        );
        assert_eq!(
            styled(&w, "MLA", "en-US"),
            format!("Banon, Gerald Jean Francis, et al. {t}. INPE, 2012, {URL}.\n")
        );
        assert_eq!(
            styled(&w, "harvard1", "en-GB"),
            format!("Banon, G. J. F., Ribeiro, M. and Instituto Nacional de Pesquisas Espaciais (2012) {t}. INPE. Available at: {URL}.\n")
        );
        assert_eq!(
            styled(&w, "vancouver", "en-US"),
            format!("Banon GJF, Ribeiro M, Instituto Nacional de Pesquisas Espaciais. {t} [Internet]. INPE; 2012. Available from: {URL}\n")
        );
        assert_eq!(
            styled(&w, "associacao-brasileira-de-normas-tecnicas", "pt-BR"),
            format!("BANON, Gerald Jean Francis; RIBEIRO, Márcia; INSTITUTO NACIONAL DE PESQUISAS ESPACIAIS. {t}. INPE, 2012. Disponível em: {URL}.\n")
        );
    }

    #[test]
    fn no_creator_no_date_and_the_locale_words() {
        let dc = record("<dc:title>Dados de chuva</dc:title><dc:type>Dataset</dc:type>");
        let w = Work::from_dc(&dc, URL, "x");
        assert_eq!(
            styled(&w, "apa", "pt-BR"),
            format!("Dados de chuva [Conjunto de dados]. (s.d.). {URL}\n")
        );
        assert_eq!(
            styled(&w, "apa", "en-US"),
            format!("Dados de chuva [Data set]. (n.d.). {URL}\n")
        );
        let two = record("<dc:creator>Banon, Gerald</dc:creator><dc:creator>Ribeiro, Márcia</dc:creator><dc:date>June 2012</dc:date>");
        let w = Work::from_dc(&two, URL, "x");
        assert_eq!(
            styled(&w, "chicago", "pt-BR"),
            format!("Banon, Gerald, e Márcia Ribeiro. 2012. x. {URL}.\n")
        );
        assert_eq!(
            styled(&w, "ieee", "en-US"),
            format!(
                "G. Banon and M. Ribeiro, \u{201c}x,\u{201d} 2012. [Online]. Available: {URL}\n"
            )
        );
        assert_eq!(
            styled(&w, "apa", "en-US"),
            format!("Banon, G., & Ribeiro, M. (2012). x. {URL}\n")
        );
        assert_eq!(
            styled(&w, "mla", "en-US"),
            format!("Banon, Gerald, and Márcia Ribeiro. x. 2012, {URL}.\n")
        );
        assert_eq!(
            styled(&w, "harvard-cite-them-right", "pt-BR"),
            format!("Banon, G. e Ribeiro, M. (2012) x. Disponível em: {URL}.\n")
        );
    }

    #[test]
    fn unknown_styles_and_locales_are_refused() {
        let w = report();
        let ask = |style: Option<&str>, locale: Option<&str>| {
            render(
                &w,
                Format::Bibliography,
                &Options {
                    style: style.map(Into::into),
                    locale: locale.map(Into::into),
                },
            )
        };
        assert_eq!(
            ask(Some("nature"), None),
            Err(Unknown::Style("nature".into()))
        );
        assert_eq!(
            ask(None, Some("fr-FR")),
            Err(Unknown::Locale("fr-FR".into()))
        );
        assert_eq!(
            ask(None, Some("en-US<")),
            Err(Unknown::Locale("en-US<".into()))
        );
        assert!(Unknown::Style("nature".into())
            .to_string()
            .contains("apa, chicago-author-date, ieee"));
    }

    #[test]
    fn dates_names_and_kinds_as_read() {
        assert_eq!(
            Issued::parse("2012-06"),
            Some(Issued {
                year: 2012,
                month: Some(6),
                day: None
            })
        );
        assert_eq!(
            Issued::parse("2012-13-01").map(|i| (i.year, i.month)),
            Some((2012, None))
        );
        assert_eq!(Issued::parse("c. 1999?").map(|i| i.year), Some(1999));
        assert_eq!(Issued::parse("12345"), None);
        assert_eq!(Issued::parse(""), None);
        assert_eq!(initials("Jean-Paul Marie", ". "), "J.-P. M.");
        assert_eq!(initials("Jean-Paul Marie", ""), "J-PM");
        assert_eq!(
            Name::parse(" INPE, "),
            Name::Literal("INPE".into()),
            "a trailing comma names no given names"
        );
        assert_eq!(Kind::of(Some("Dissertação (Mestrado)")), Kind::Thesis);
        assert_eq!(Kind::of(Some("StillImage")), Kind::Image);
        assert_eq!(Kind::of(None), Kind::Other);
        for f in Format::ALL {
            assert_eq!(
                f.content_type(),
                format!("{}; charset=utf-8", f.media_type())
            );
        }
        for s in Style::ALL {
            assert_eq!(Style::parse(s.name()), Some(s));
        }
    }
}
