//! The pages a reader sees when a persistent URL is not followed: small HTML in Portuguese
//! or English, without script, and the inspection view (HTML, or JSON for
//! `Accept: application/json`). Every text of them is one of [`Text`]'s.

use ibi::item::State;
use ibi::markup::escape_html;
use ibi::persistent::Refusal;
use ibi::Ibi;

use crate::config::Site;
use crate::lang::{count, decimal, PageLang, Text};
use crate::resolve::{
    AskResult, ChainEnd, Found, MayHold, Missing, Outcome, SaidState, Trace, Why,
};
use crate::tombstone::Tombstone;

/// A page: status, content type and body; `framed`: the language of an HTML page of the
/// resolver's own frame, which [`Page::with_site`] names its operator in.
pub struct Page {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    pub framed: Option<PageLang>,
}

impl Page {
    /// A page that is no HTML page of the resolver's frame (JSON, say).
    pub fn plain(status: u16, content_type: &'static str, body: String) -> Page {
        Page {
            status,
            content_type,
            body,
            framed: None,
        }
    }

    /// The page with the operator of the resolver (`[site]`) in its header and footer:
    /// its name after the link home, and a footer naming it and how to reach it. Nothing
    /// changes without a `[site]`, nor for a page outside the frame.
    pub fn with_site(mut self, site: &Site) -> Page {
        let Some(lang) = self.framed else {
            return self;
        };
        if site.name.is_none() && site.contact.is_none() {
            return self;
        }
        let e = escape_html;
        if let Some(name) = &site.name {
            let run_by = Text::SiteRunBy.fill(lang, &[("name", &e(name))]);
            self.body = match self.body.split_once(HEADER_END) {
                Some((before, after)) => {
                    format!("{before} <span class=\"site\">{run_by}</span>{HEADER_END}{after}")
                }
                None => self.body.replacen(
                    BODY_START,
                    &format!("{BODY_START}<header><span class=\"site\">{run_by}</span></header>\n"),
                    1,
                ),
            };
        }
        let mut footer = String::new();
        if let Some(name) = &site.name {
            footer.push_str(&Text::SiteFooter.fill(lang, &[("name", &e(name))]));
        }
        if let Some(contact) = &site.contact {
            let shown = contact.strip_prefix("mailto:").unwrap_or(contact);
            let link = format!("<a href=\"{}\">{}</a>", e(contact), e(shown));
            if !footer.is_empty() {
                footer.push(' ');
            }
            footer.push_str(&Text::SiteContact.fill(lang, &[("contact", &link)]));
        }
        self.body = self.body.replacen(
            MAIN_END,
            &format!("{MAIN_END}<footer><p>{footer}</p></footer>\n"),
            1,
        );
        self
    }
}

/// Where the frame's parts end and begin, as [`shell`] writes them (every value in a page
/// is escaped: none of them can hold these).
const HEADER_END: &str = "</header>\n";
const BODY_START: &str = "<body>\n";
const MAIN_END: &str = "</main>\n";

/// The `<meta>` of a page that fits a phone's width.
const VIEWPORT: &str = "<meta name=\"viewport\" content=\"width=device-width\">";

/// The one stylesheet of every page, in its `<style>` (the pages' CSP allows inline
/// styles and nothing else: no file, font or image is fetched). A column of readable
/// width that fits a phone, long IBIs and URLs wrapped, colours of WCAG AA contrast at
/// least in light and in dark mode, a visible focus. It holds none of `<`, `>`, `"`, `'`
/// and `&`, so that it reads as the same text in any HTML parser.
pub const STYLE: &str = concat!(
    ":root{color-scheme:light dark;--bg:#fff;--fg:#1b1b1b;--muted:#505050;--link:#0a4fb5;--line:#c4c4c4;--code:#f0f0f0;--focus:#b3261e}",
    "@media (prefers-color-scheme:dark){:root{--bg:#141414;--fg:#ececec;--muted:#b8b8b8;--link:#8cb8ff;--line:#5a5a5a;--code:#262626;--focus:#ffb4a9}}",
    "html{background:var(--bg);color:var(--fg);font:1.0625rem/1.55 system-ui,-apple-system,Segoe UI,Roboto,Noto Sans,sans-serif;-webkit-text-size-adjust:100%;text-size-adjust:100%}",
    "body{max-width:46rem;margin:0 auto;padding:.75rem 1rem 2rem}",
    "header{border-bottom:1px solid var(--line);padding:.25rem 0 .5rem}",
    "header a{font-weight:600}",
    "header .site{color:var(--muted)}",
    "footer{border-top:1px solid var(--line);margin-top:2rem;padding-top:.5rem;color:var(--muted);font-size:.95em}",
    "h1{font-size:1.6rem;line-height:1.25;margin:1rem 0}",
    "h2{font-size:1.2rem;line-height:1.3;margin:1.75rem 0 .5rem}",
    "a{color:var(--link)}",
    ":focus-visible{outline:3px solid var(--focus);outline-offset:2px}",
    "p,li,h1,h2,td,code,a{overflow-wrap:anywhere}",
    "code,pre{font-family:ui-monospace,DejaVu Sans Mono,monospace;font-size:.92em}",
    "code{background:var(--code);border-radius:3px;padding:0 .2em}",
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}",
    "ul{padding-left:1.25rem}",
    "table{border-collapse:collapse;width:100%;table-layout:fixed;font-size:.95em}",
    "th,td{border:1px solid var(--line);padding:.3rem .45rem;text-align:left;vertical-align:top}",
    "th:nth-child(1){width:28%}th:nth-child(2){width:20%}th:nth-child(3){width:3em}",
    "@media (max-width:30rem){table{font-size:.85em}th,td{padding:.25rem .3rem}}",
    "form{display:flex;flex-wrap:wrap;gap:.5rem;margin:1.5rem 0}",
    "label{flex-basis:100%;font-weight:600}",
    "input{flex:1 1 14rem;min-width:0;font:inherit;padding:.5rem .6rem;border:2px solid var(--muted);border-radius:4px;background:var(--bg);color:var(--fg)}",
    "button{font:inherit;font-weight:600;padding:.5rem 1.1rem;border:2px solid var(--link);border-radius:4px;background:var(--link);color:var(--bg);cursor:pointer}",
);

/// The page shell, the same for every page: `title` (escaped) as title and heading, the
/// stylesheet, a link to the home page (but on the home page), then `body` (HTML) in
/// `<main>`.
fn shell(status: u16, lang: PageLang, title: &str, body: &str, home_link: bool) -> Page {
    let header = if home_link {
        format!(
            "<header><a href=\"/\">{}</a></header>\n",
            Text::HomeTitle.get(lang)
        )
    } else {
        String::new()
    };
    let title = escape_html(title);
    Page {
        framed: Some(lang),
        status,
        content_type: "text/html; charset=utf-8",
        body: format!(
            "<!DOCTYPE html>\n<html lang=\"{}\">\n<head><meta charset=\"utf-8\">{VIEWPORT}<title>{title}</title><style>{STYLE}</style></head>\n<body>\n{header}<main>\n<h1>{title}</h1>\n{body}</main>\n</body>\n</html>\n",
            lang.code(),
        ),
    }
}

fn html(status: u16, lang: PageLang, title: Text, body: &str) -> Page {
    shell(status, lang, title.get(lang), body, true)
}

/// The form that resolves an IBI: `GET /?ibi=…`, its field holding `value` (escaped).
fn form(lang: PageLang, value: &str) -> String {
    format!(
        "<form action=\"/\" method=\"get\">\n<label for=\"ibi\">{}</label>\n<input id=\"ibi\" name=\"ibi\" type=\"text\" value=\"{}\" required autocapitalize=\"off\" spellcheck=\"false\">\n<button type=\"submit\">{}</button>\n</form>\n",
        Text::FormLabel.get(lang),
        escape_html(value),
        Text::FormButton.get(lang)
    )
}

/// `<code>value</code>`, the value escaped.
fn code(value: &str) -> String {
    format!("<code>{}</code>", escape_html(value))
}

/// The list of `items` (escaped), one `<li>` each.
fn list(items: &[String]) -> String {
    let items: String = items
        .iter()
        .map(|i| format!("<li>{}</li>\n", escape_html(i)))
        .collect();
    format!("<ul>\n{items}</ul>\n")
}

/// The Archives `archives` (as resolutions show them, `address (service IBI)`) in a list,
/// each by its name alone: a reader's page never shows an Archive's address.
fn archive_list(archives: &[String]) -> String {
    let names: Vec<String> = archives
        .iter()
        .map(|a| crate::resolve::archive_name(a).to_string())
        .collect();
    list(&names)
}

/// The resolver's home page: what it is and how to use it (`publicurl`, the service's
/// IBI, and how many Archives are included), with the persistent URL of `example`, an
/// IBI this resolver has resolved, when there is one.
pub fn home(
    lang: PageLang,
    publicurl: &str,
    serviceibi: &Ibi,
    archives: usize,
    example: Option<&str>,
) -> Page {
    let mut body = format!(
        "<p>{}</p>\n{}",
        Text::HomeIntro.fill(lang, &[("publicurl", &escape_html(publicurl))]),
        form(lang, "")
    );
    if let Some(ibi) = example {
        let url = escape_html(&format!("{publicurl}/{ibi}"));
        body.push_str(&format!(
            "<p>{}</p>\n",
            Text::HomeExample.fill(lang, &[("url", &url)])
        ));
    }
    body.push_str(&format!(
        "<p>{}. {}</p>\n",
        count(
            lang,
            archives,
            Text::ArchivesIncludedZero,
            Text::ArchivesIncludedOne,
            Text::ArchivesIncludedMany
        ),
        Text::ResolverService.fill(
            lang,
            &[(
                "service",
                &escape_html(&format!("{publicurl}/{serviceibi}"))
            )]
        )
    ));
    shell(200, lang, Text::HomeTitle.get(lang), &body, false)
}

/// 400: what was typed in the home page's form, `typed`, is no IBI (none was typed when
/// it is empty); `refusal` says why. The form again, holding it.
pub fn form_refused(lang: PageLang, typed: &str, refusal: Option<&Refusal>) -> Page {
    let said = if typed.is_empty() {
        format!("<p>{}</p>\n", Text::FormEmpty.get(lang))
    } else {
        format!(
            "<p>{}</p>\n<p>{}</p>\n{}",
            Text::FormRefusedIntro.get(lang),
            code(typed),
            refusal
                .map(|r| format!("<p>{}</p>\n", why(lang, r)))
                .unwrap_or_default()
        )
    };
    html(
        400,
        lang,
        Text::FormRefusedTitle,
        &format!("{said}{}", form(lang, typed)),
    )
}

/// 303: the persistent URL the home page's form asked for, `location`.
pub fn see_other(lang: PageLang, location: &str) -> Page {
    let location = escape_html(location);
    html(
        303,
        lang,
        Text::SeeOtherTitle,
        &format!("<p><a href=\"{location}\">{location}</a></p>\n"),
    )
}

/// 503: as many resolutions as allowed are under way.
pub fn overloaded(lang: PageLang) -> Page {
    html(
        503,
        lang,
        Text::OverloadedTitle,
        &format!("<p>{}</p>\n", Text::OverloadedText.get(lang)),
    )
}

/// 429: the reader's network is beyond one of its bounds.
pub fn too_many(lang: PageLang) -> Page {
    html(
        429,
        lang,
        Text::TooManyTitle,
        &format!("<p>{}</p>\n", Text::TooManyText.get(lang)),
    )
}

/// 400: the path and query are not a persistent URL; `why` (HTML) says why.
fn refused(lang: PageLang, path: &str, why: &str) -> Page {
    let why = if why.is_empty() {
        String::new()
    } else {
        format!("<p>{why}</p>\n")
    };
    html(
        400,
        lang,
        Text::BadRequestTitle,
        &format!(
            "<p>{}</p>\n<p>{}</p>\n{why}",
            Text::BadRequestIntro.get(lang),
            code(path),
        ),
    )
}

/// 400: the path and query are not a persistent URL, for `refusal` (none: the page does
/// not say why, since the path holds what is not to be shown).
pub fn bad_request(lang: PageLang, path: &str, refusal: Option<&Refusal>) -> Page {
    refused(
        lang,
        path,
        &refusal.map(|r| why(lang, r)).unwrap_or_default(),
    )
}

/// 400: the persistent URL `path` was asked with an `Accept-Datetime` that is no
/// HTTP-date, `value` (quoted, cut to 64 bytes).
pub fn bad_datetime(lang: PageLang, path: &str, value: &str) -> Page {
    let value = code(&format!("{:?}", ibi::text::cut(value, 64)));
    let text = Text::BadDatetime.fill(lang, &[("value", &value), ("path", &code(path))]);
    html(
        400,
        lang,
        Text::BadDatetimeTitle,
        &format!("<p>{text}</p>\n"),
    )
}

/// Why a path and query are not a persistent URL, in `lang` (HTML).
fn why(lang: PageLang, refusal: &Refusal) -> String {
    let e = escape_html;
    let (text, values): (Text, Vec<(&str, String)>) = match refusal {
        Refusal::PathTooLong { length, max } => (
            Text::RefusedPathTooLong,
            vec![("length", length.to_string()), ("max", max.to_string())],
        ),
        Refusal::NoLeadingSlash => (Text::RefusedNoLeadingSlash, vec![]),
        Refusal::EmptyPath => (Text::RefusedEmptyPath, vec![]),
        Refusal::IbiPartNotUtf8 { part } => (Text::RefusedIbiPartNotUtf8, vec![("part", e(part))]),
        Refusal::IbiPartSlash { part } => (Text::RefusedIbiPartSlash, vec![("part", e(part))]),
        Refusal::NoIbi => (Text::RefusedNoIbi, vec![]),
        Refusal::RepSegments { found } => {
            (Text::RefusedRepSegments, vec![("found", found.to_string())])
        }
        Refusal::OneSegment { segment } => (Text::RefusedOneSegment, vec![("segment", e(segment))]),
        Refusal::ModifierNotClosed { modifier } => (
            Text::RefusedModifierNotClosed,
            vec![("modifier", e(modifier))],
        ),
        Refusal::LastEditionParameter { modifier } => (
            Text::RefusedLastEditionParameter,
            vec![("modifier", e(modifier))],
        ),
        Refusal::ModifierLanguage { modifier, language } => (
            Text::RefusedModifierLanguage,
            vec![("modifier", e(modifier)), ("language", e(language))],
        ),
        Refusal::MetadataFormat { modifier, format } => (
            Text::RefusedMetadataFormat,
            vec![("modifier", e(modifier)), ("format", e(format))],
        ),
        Refusal::ModifierSymbol { modifier, symbol } => (
            Text::RefusedModifierSymbol,
            vec![("modifier", e(modifier)), ("symbol", e(symbol))],
        ),
        Refusal::ModifierComposition { modifier } => (
            Text::RefusedModifierComposition,
            vec![("modifier", e(modifier))],
        ),
        Refusal::FileDotSegment => (Text::RefusedFileDotSegment, vec![]),
        Refusal::FileControl => (Text::RefusedFileControl, vec![]),
        Refusal::QueryNotPairs => (Text::RefusedQueryNotPairs, vec![]),
        Refusal::VerbListNotText => (Text::RefusedVerbListNotText, vec![]),
        Refusal::UnknownCode {
            modifier,
            word,
            code,
            country,
        } => {
            let text = match (word.is_some(), country) {
                (false, false) => Text::RefusedModifierLanguageCode,
                (false, true) => Text::RefusedModifierCountryCode,
                (true, false) => Text::RefusedVerbLanguageCode,
                (true, true) => Text::RefusedVerbCountryCode,
            };
            let mut values = vec![("code", e(code))];
            if let Some(m) = modifier {
                values.push(("modifier", e(m)));
            }
            if let Some(w) = word {
                values.push(("word", e(w)));
            }
            (text, values)
        }
        Refusal::NotAVerb { word } => (Text::RefusedNotAVerb, vec![("word", e(word))]),
        Refusal::RequiredStatus { value } => {
            (Text::RefusedRequiredStatus, vec![("value", e(value))])
        }
        Refusal::NoRelation { verbs } => (Text::RefusedNoRelation, vec![("verbs", e(verbs))]),
    };
    let values: Vec<(&str, &str)> = values.iter().map(|(n, v)| (*n, v.as_str())).collect();
    text.fill(lang, &values)
}

/// 400 (the caller makes it 414): the path and query are `length` bytes long, more than
/// the `max` read.
pub fn too_long(lang: PageLang, path: &str, length: usize, max: usize) -> Page {
    let why = Text::TooLong.fill(
        lang,
        &[("length", &length.to_string()), ("max", &max.to_string())],
    );
    refused(lang, path, &why)
}

/// The page of [`Outcome::NotFound`]: not found (once every Archive that may hold the
/// IBI answered), or what an Archive has the item without, and those that did not answer.
fn not_found_parts(
    lang: PageLang,
    ibi_html: &str,
    related: &str,
    (asked, missing, unasked): (usize, &Option<Missing>, &[String]),
) -> (Text, String) {
    let ibi_value = [("ibi", ibi_html)];
    let mut body = match missing {
        Some(m) => format!(
            "<p>{}</p>
",
            missing_text(lang, m, ibi_html)
        ),
        None if unasked.is_empty() => {
            format!(
                "<p>{}</p>
",
                Text::NotFoundText.fill(lang, &ibi_value)
            )
        }
        None => format!(
            "<p>{}</p>
",
            Text::UnavailableText.fill(lang, &ibi_value)
        ),
    };
    if asked == 0 {
        body.push_str(&format!(
            "<p>{}</p>
",
            Text::NoArchiveIncluded.get(lang)
        ));
    }
    body.push_str(&unasked_list(lang, unasked));
    body.push_str(related);
    let title = match missing {
        None => Text::NotFoundTitle,
        Some(Missing::File(_)) => Text::NoFileTitle,
        Some(Missing::Metadata(_)) => Text::NoMetadataTitle,
        Some(_) => Text::NothingFoundTitle,
    };
    (title, body)
}

/// The page of [`Outcome::Unavailable`]: nothing found while Archives that may hold the
/// IBI did not answer, named, and those not asked.
fn unavailable_parts(
    lang: PageLang,
    ibi_html: &str,
    related: &str,
    (archives, asked, unasked): (&[String], usize, &[String]),
) -> String {
    let ibi_value = [("ibi", ibi_html)];
    let one = archives.len() == 1;
    // Asked, and none of them answered: none "that answered".
    let text = if archives.len() >= asked {
        Text::NoneAnsweredText
    } else {
        Text::UnavailableText
    };
    let (silent, may_hold) = if one {
        (Text::SilentOne, Text::MayHoldOne)
    } else {
        (Text::SilentMany, Text::MayHoldMany)
    };
    format!(
        "<p>{} {} {}</p>\n{}{related}<p>{}</p>\n{}",
        text.fill(lang, &ibi_value),
        count(
            lang,
            asked,
            Text::AskedMany,
            Text::AskedOne,
            Text::AskedMany
        ),
        silent.get(lang),
        archive_list(archives),
        may_hold.get(lang),
        unasked_list(lang, unasked)
    )
}

/// The page of [`Outcome::Unverifiable`]: the Archives that may hold the Original did
/// not answer, and the copies found meanwhile.
fn unverifiable_parts(
    lang: PageLang,
    ibi_value: &[(&str, &str)],
    archives: &[String],
    copies: &[Found],
) -> String {
    let text = if archives.len() == 1 {
        Text::UnverifiableOne
    } else {
        Text::UnverifiableMany
    };
    let found = if copies.is_empty() {
        String::new()
    } else {
        format!(
            "<p>{}</p>\n{}",
            Text::MeanwhileFound.get(lang),
            answers_found(lang, copies)
        )
    };
    format!(
        "<p>{}</p>\n{}{found}<p>{}</p>\n",
        text.fill(lang, ibi_value),
        archive_list(archives),
        Text::TryLater.get(lang)
    )
}

/// An outcome other than a redirect, as its page and the inspection view say it: its
/// status, title and paragraphs (HTML). `ibi`: the IBI the reader asked for.
fn outcome_parts(lang: PageLang, trace: &Trace, ibi: &str) -> (u16, Text, String) {
    let ibi_html = code(ibi);
    let ibi_value = [("ibi", ibi_html.as_str())];
    // When the last round asked for another item than the reader's (a related one an
    // Archive named), the page says which.
    let related = match trace.rounds.last() {
        Some(last) if trace.rounds.len() > 1 && last.ibi != ibi => format!(
            "<p>{}</p>\n",
            Text::RelatedAsked.fill(
                lang,
                &[("last", &escape_html(&last.ibi)), ("ibi", &ibi_html)]
            )
        ),
        _ => String::new(),
    };
    let status = status_of(&trace.outcome);
    match &trace.outcome {
        Outcome::Found(f) => {
            let location = escape_html(trace.location.as_deref().unwrap_or(&f.url));
            (
                status,
                Text::FoundTitle,
                format!("<p><a href=\"{location}\">{location}</a></p>\n"),
            )
        }
        Outcome::NotFound {
            asked,
            missing,
            unasked,
        } => {
            let (title, body) =
                not_found_parts(lang, &ibi_html, &related, (*asked, missing, unasked));
            (status, title, body)
        }
        Outcome::Unavailable {
            archives,
            asked,
            unasked,
        } => (
            status,
            Text::UnavailableTitle,
            unavailable_parts(lang, &ibi_html, &related, (archives, *asked, unasked)),
        ),
        Outcome::NoTranslation { language } => (
            status,
            Text::NoTranslationTitle,
            format!(
                "<p>{}</p>\n",
                Text::NoTranslationText.fill(
                    lang,
                    &[("ibi", &ibi_html), ("language", &escape_html(language))]
                )
            ),
        ),
        Outcome::Deleted { date, .. } => (
            status,
            Text::DeletedTitle,
            format!(
                "<p>{}</p>\n",
                Text::DeletedText.fill(lang, &[("ibi", &ibi_html), ("date", &escape_html(date))])
            ),
        ),
        Outcome::Suspicion { archives } => (
            status,
            Text::SuspicionTitle,
            format!(
                "<p>{}</p>\n{}<p>{}</p>\n",
                Text::SuspicionText.fill(lang, &ibi_value),
                archive_list(archives),
                Text::InvestigationNeeded.get(lang)
            ),
        ),
        Outcome::NoOriginal { copies, unasked } => {
            let text = match (copies.len() == 1, unasked.is_empty()) {
                (true, true) => Text::NoOriginalOne,
                (false, true) => Text::NoOriginalMany,
                (true, false) => Text::NoOriginalAnsweredOne,
                (false, false) => Text::NoOriginalAnsweredMany,
            };
            (
                status,
                Text::NoOriginalTitle,
                format!(
                    "<p>{}</p>
{}{}",
                    text.fill(lang, &ibi_value),
                    answers_found(lang, copies),
                    unasked_list(lang, unasked)
                ),
            )
        }
        Outcome::Unverifiable { archives, copies } => (
            status,
            Text::UnverifiableTitle,
            unverifiable_parts(lang, &ibi_value, archives, copies),
        ),
        Outcome::Throttled { .. } => (
            status,
            Text::TooManyTitle,
            format!("<p>{}</p>\n", Text::TooManyText.get(lang)),
        ),
        Outcome::Chain { detail } => {
            let text = match detail {
                ChainEnd::TooLong { max } => {
                    Text::ChainLong.fill(lang, &[("ibi", &ibi_html), ("max", &max.to_string())])
                }
                ChainEnd::Again { ibi: again, why } => {
                    let again = escape_html(again);
                    match why {
                        None => {
                            Text::ChainAgain.fill(lang, &[("ibi", &ibi_html), ("again", &again)])
                        }
                        Some(w) => Text::ChainAgainWhy.fill(
                            lang,
                            &[
                                ("ibi", &ibi_html),
                                ("again", &again),
                                ("why", &why_asked(lang, w)),
                            ],
                        ),
                    }
                }
            };
            (status, Text::ChainTitle, format!("<p>{text}</p>\n"))
        }
    }
}

/// What an Archive that has the item `ibi` (HTML) has it without, in words.
fn missing_text(lang: PageLang, missing: &Missing, ibi: &str) -> String {
    match missing {
        Missing::File(path) => Text::NoSuchFile.fill(lang, &[("ibi", ibi), ("path", &code(path))]),
        Missing::Metadata(None) => Text::NoMetadata.fill(lang, &[("ibi", ibi)]),
        Missing::Metadata(Some(format)) => {
            Text::NoMetadataIn.fill(lang, &[("ibi", ibi), ("format", &code(format))])
        }
        Missing::Relation(verbs) => {
            Text::NothingFor.fill(lang, &[("ibi", ibi), ("verbs", &code(verbs))])
        }
        Missing::Url => Text::NoUrlGiven.fill(lang, &[("ibi", ibi)]),
    }
}

/// The Archives that could not be asked, none of which may hold the IBI (nothing when
/// none).
fn unasked_list(lang: PageLang, unasked: &[String]) -> String {
    if unasked.is_empty() {
        return String::new();
    }
    let text = if unasked.len() == 1 {
        Text::UnaskedOne
    } else {
        Text::UnaskedMany
    };
    format!(
        "<p>{}</p>
{}",
        text.get(lang),
        archive_list(unasked)
    )
}

/// Each answer found, with its link and what it says it is: a copy, no state, or the
/// word it said.
fn answers_found(lang: PageLang, found: &[Found]) -> String {
    let items: String = found
        .iter()
        .map(|f| {
            let said = match &f.state {
                Some(SaidState::Known(State::Copy)) => Text::SaysCopy.get(lang).to_string(),
                None => Text::SaysNoState.get(lang).to_string(),
                Some(other) => Text::SaysState.fill(lang, &[("state", &code(other.as_str()))]),
            };
            format!(
                "<li>{} ({}): <a href=\"{}\">{}</a> — {said}</li>\n",
                escape_html(&f.address),
                escape_html(&f.archive),
                escape_html(&f.url),
                escape_html(&f.url)
            )
        })
        .collect();
    format!("<ul>\n{items}</ul>\n")
}

/// The page of an outcome other than a redirect (for a redirect, the page of its
/// `Location`).
pub fn outcome(lang: PageLang, trace: &Trace, ibi: &str) -> Page {
    if let Outcome::Throttled { .. } = trace.outcome {
        return too_many(lang);
    }
    let (status, title, body) = outcome_parts(lang, trace, ibi);
    html(status, lang, title, &body)
}

/// 410: the item `ibi` was removed on `date`; what its tombstone says of it (title,
/// authors, why), how to cite it (`citation`, its persistent URL) and where its Archive
/// describes it. Every value escaped.
pub fn tombstone(
    lang: PageLang,
    (ibi, date): (&str, &str),
    tombstone: &Tombstone,
    (citation, persistent): (&str, &str),
) -> Page {
    let e = escape_html;
    let link = |url: &str| format!("<a href=\"{0}\">{0}</a>", e(url));
    let mut body = format!(
        "<p>{}</p>\n",
        Text::DeletedText.fill(lang, &[("ibi", &code(ibi)), ("date", &e(date))])
    );
    if !tombstone.creators.is_empty() {
        body.push_str(&format!(
            "<h2>{}</h2>\n{}",
            Text::TombstoneAuthors.get(lang),
            list(&tombstone.creators)
        ));
    }
    if let Some(reason) = &tombstone.reason {
        body.push_str(&format!(
            "<h2>{}</h2>\n<p>{}</p>\n",
            Text::TombstoneReason.get(lang),
            e(reason)
        ));
    }
    body.push_str(&format!(
        "<h2>{}</h2>\n<p>{}</p>\n<p>{}</p>\n",
        Text::TombstoneCite.get(lang),
        e(citation),
        Text::TombstonePersistent.fill(lang, &[("url", &link(persistent))])
    ));
    if !tombstone.landing.is_empty() {
        body.push_str(&format!(
            "<p>{}</p>\n",
            Text::TombstoneLanding.fill(lang, &[("url", &link(&tombstone.landing))])
        ));
    }
    let title = tombstone
        .name
        .as_deref()
        .unwrap_or(Text::DeletedTitle.get(lang));
    shell(410, lang, title, &body, true)
}

/// 200: the editions of the item `ibi` the resolver found (`listed`, in time order, not
/// empty; `capped` when the walk stopped at its bound), each with its date in `lang`, its
/// persistent URL and its location; then the original and the TimeMap, by their URLs
/// (`rel="original"`, `rel="timemap"`). Every value escaped: the locations, as the
/// Archives said them, above all.
pub fn editions(
    lang: PageLang,
    ibi: &str,
    (original, timemap): (&str, &str),
    listed: &[crate::editions::Listed],
    capped: Option<usize>,
) -> Page {
    let e = escape_html;
    let link = |url: &str| format!("<a href=\"{0}\">{0}</a>", e(url));
    let intro = match listed.len() {
        1 => Text::EditionsIntroOne.fill(lang, &[("ibi", &code(ibi))]),
        n => Text::EditionsIntroMany.fill(lang, &[("ibi", &code(ibi)), ("n", &n.to_string())]),
    };
    let mut body = format!("<p>{intro}</p>\n<ol>\n");
    for edition in listed {
        body.push_str(&format!(
            "<li><p><time datetime=\"{}\">{}</time>: {}</p>\n<ul>\n<li>{}</li>\n<li>{}</li>\n</ul></li>\n",
            ibi::time::iso8601(edition.datetime),
            crate::lang::datetime(lang, edition.datetime),
            code(&edition.ibi),
            Text::EditionPersistent.fill(lang, &[("url", &link(&edition.persistent))]),
            Text::EditionLocation.fill(lang, &[("url", &link(&edition.location))]),
        ));
    }
    body.push_str("</ol>\n");
    if let Some(max) = capped {
        body.push_str(&format!(
            "<p>{}</p>\n",
            Text::EditionsAtMost.fill(lang, &[("max", &max.to_string())])
        ));
    }
    body.push_str(&format!(
        "<p>{}</p>\n<p>{}</p>\n",
        Text::EditionsOriginal.fill(
            lang,
            &[(
                "url",
                &format!("<a href=\"{0}\" rel=\"original\">{0}</a>", e(original))
            )]
        ),
        Text::EditionsTimeMap.fill(
            lang,
            &[(
                "url",
                &format!(
                    "<a href=\"{0}\" rel=\"timemap\" type=\"{1}\">{0}</a>",
                    e(timemap),
                    crate::editions::LINK_FORMAT
                )
            )]
        ),
    ));
    html(200, lang, Text::EditionsTitle, &body)
}

/// The status code a resolution's outcome is answered with.
pub fn status_of(outcome: &Outcome) -> u16 {
    match outcome {
        Outcome::Found(_) => 302,
        Outcome::Deleted { .. } => 410,
        Outcome::Suspicion { .. } => 409,
        Outcome::Unverifiable { .. } | Outcome::Unavailable { .. } => 503,
        Outcome::Throttled { .. } => 429,
        _ => 404,
    }
}

/// Why a round was asked, in `lang` (HTML).
fn why_asked(lang: PageLang, why: &Why) -> String {
    let e = escape_html;
    match why {
        Why::Named {
            address,
            archive,
            pair,
            of,
        } => Text::WhyNamed.fill(
            lang,
            &[
                ("address", &e(address)),
                ("archive", &e(archive)),
                ("pair", &e(pair)),
                ("ibi", &e(of)),
            ],
        ),
        Why::NextEdition {
            address,
            archive,
            of,
        } => Text::WhyNextEdition.fill(
            lang,
            &[
                ("address", &e(address)),
                ("archive", &e(archive)),
                ("ibi", &e(of)),
            ],
        ),
        Why::OwnLanguage => Text::WhyOwnLanguage.get(lang).to_string(),
    }
}

/// What became of the request to one Archive, in words.
fn result_text(result: AskResult) -> Text {
    match result {
        AskResult::Answered => Text::Answered,
        AskResult::Empty => Text::Empty,
        AskResult::Failed => Text::Failed,
        AskResult::TimedOut => Text::TimedOut,
        AskResult::Overloaded => Text::ArchiveOverloaded,
        AskResult::Busy => Text::NotSentBusy,
        AskResult::Refused => Text::Refused,
        AskResult::Dormant => Text::Dormant,
        AskResult::NotAwaited => Text::NotAwaited,
    }
}

/// The inspection view: the resolution shown, not followed. `ibi`: the IBI the reader
/// asked for; `persistent_url`: the persistent URL as readers are given it (the
/// trace's, in JSON, is `url.persistent` as sent to Archives).
pub fn inspection(
    lang: PageLang,
    trace: &Trace,
    json: bool,
    ibi: &str,
    persistent_url: &str,
) -> Page {
    if json {
        return Page::plain(
            200,
            "application/json",
            serde_json::to_string_pretty(trace).unwrap_or_else(|_| "{}".into()) + "\n",
        );
    }
    let mut body = format!(
        "<p>{}</p>\n",
        Text::ResolvedIn.fill(
            lang,
            &[
                ("url", &escape_html(persistent_url)),
                ("ms", &decimal(lang, trace.ms))
            ]
        )
    );
    for (n, round) in trace.rounds.iter().enumerate() {
        body.push_str(&format!(
            "<h2>{}: <code>{}</code>{}{}</h2>\n{}<table>\n<tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>\n",
            Text::Round.fill(lang, &[("n", &(n + 1).to_string())]),
            escape_html(&round.ibi),
            if round.verblist.is_empty() { String::new() } else { format!(" {}", code(&round.verblist)) },
            if round.remembered { Text::RememberedArchive.get(lang) } else if round.home { Text::HomeArchive.get(lang) } else { "" },
            round.why.as_ref().map(|why| format!("<p>{}</p>\n", Text::AskedBecause.fill(lang, &[("why", &why_asked(lang, why))]))).unwrap_or_default(),
            Text::ColumnArchive.get(lang),
            Text::ColumnResult.get(lang),
            Text::ColumnMs.get(lang),
            Text::ColumnAnswer.get(lang),
        ));
        for a in &round.asked {
            let pairs: String = a
                .pairs
                .iter()
                .map(|(n, v)| format!("{} {}\n", escape_html(n), escape_html(v)))
                .collect();
            let may_hold = match a.may_hold {
                Some(MayHold::Home) => format!("<br>{}", Text::MayHoldHome.get(lang)),
                Some(MayHold::SharedHome) => {
                    format!("<br>{}", Text::MayHoldSharedHome.get(lang))
                }
                Some(MayHold::Remembered) => format!("<br>{}", Text::MayHoldRemembered.get(lang)),
                None => String::new(),
            };
            body.push_str(&format!(
                "<tr><td>{}<br><code>{}</code>{may_hold}</td><td>{}{}</td><td>{}</td><td><pre>{pairs}</pre></td></tr>\n",
                escape_html(&a.address),
                escape_html(&a.archive),
                result_text(a.result).get(lang),
                a.detail.as_deref().map(|d| format!(": {}", escape_html(d))).unwrap_or_default(),
                decimal(lang, a.ms)
            ));
        }
        body.push_str("</table>\n");
    }
    match &trace.outcome {
        Outcome::Found(f) => body.push_str(&format!(
            "<p>{}</p>\n",
            Text::Chosen.fill(
                lang,
                &[
                    ("url", &escape_html(&f.url)),
                    ("address", &escape_html(&f.address))
                ]
            )
        )),
        _ => {
            let (_, title, text) = outcome_parts(lang, trace, ibi);
            body.push_str(&format!(
                "<h2>{}</h2>\n{text}",
                Text::OutcomeIs.fill(lang, &[("title", &escape_html(title.get(lang)))])
            ));
        }
    }
    if !trace.conflicts.is_empty() {
        body.push_str(&format!("<h2>{}</h2>\n<ul>\n", Text::Conflicts.get(lang)));
        for c in &trace.conflicts {
            let holder = match &c.holder {
                Some(h) => Text::RememberedAt.fill(lang, &[("holder", &escape_html(h))]),
                None => Text::NoneRemembered.get(lang).to_string(),
            };
            body.push_str(&format!(
                "<li>{}</li>\n",
                Text::ClaimsOriginal.fill(
                    lang,
                    &[
                        ("claimant", &escape_html(&c.claimant)),
                        ("ibi", &escape_html(&c.ibi)),
                        ("holder", &holder)
                    ]
                )
            ));
        }
        body.push_str("</ul>\n");
    }
    html(200, lang, Text::InspectionTitle, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operator_is_named_in_the_header_and_the_footer() {
        let site = Site {
            name: Some("Biblioteca & <INPE>".into()),
            contact: Some("mailto:urlib@inpe.br".into()),
        };
        let main = |page: &Page| {
            let at = page.body.find("<body>").unwrap();
            page.body[at..].to_string()
        };
        // Nothing changes without a [site], nor outside the frame.
        let plain = overloaded(PageLang::En);
        let before = plain.body.clone();
        assert_eq!(plain.with_site(&Site::default()).body, before);
        let json = Page::plain(200, "application/json", "{}".into()).with_site(&site);
        assert_eq!(json.body, "{}");
        assert_eq!(
            main(&overloaded(PageLang::En).with_site(&site)),
            "<body>\n<header><a href=\"/\">IBI resolver</a> <span class=\"site\">run by Biblioteca &amp; &lt;INPE&gt;</span></header>\n\
             <main>\n<h1>Resolver overloaded</h1>\n<p>The resolver is answering as many requests as it takes. Try again in a moment.</p>\n</main>\n\
             <footer><p>This resolver is run by Biblioteca &amp; &lt;INPE&gt;. Contact: <a href=\"mailto:urlib@inpe.br\">urlib@inpe.br</a></p></footer>\n\
             </body>\n</html>\n"
        );
        // The home page, which has no link home: a header of its own; a contact alone.
        let service = Ibi::parse("J8LNKB5R7W/3FUQHC5").unwrap();
        let home = home(PageLang::Pt, "http://r.example", &service, 0, None);
        let framed = home.with_site(&Site {
            name: Some("INPE".into()),
            contact: None,
        });
        assert!(
            framed.body.contains(
                "<body>\n<header><span class=\"site\">mantido por INPE</span></header>\n<main>\n"
            ),
            "{}",
            framed.body
        );
        assert!(
            framed.body.contains(
                "</main>\n<footer><p>Este resolvedor é mantido por INPE.</p></footer>\n</body>"
            ),
            "{}",
            framed.body
        );
        let contact_only = overloaded(PageLang::Pt).with_site(&Site {
            name: None,
            contact: Some("https://r.example/fale?a=1&b=2".into()),
        });
        assert!(contact_only.body.contains(
            "<footer><p>Contato: <a href=\"https://r.example/fale?a=1&amp;b=2\">https://r.example/fale?a=1&amp;b=2</a></p></footer>"
        ));
        assert!(contact_only
            .body
            .contains("<header><a href=\"/\">Resolvedor de IBI</a></header>"));
    }
    use crate::memory::Conflict;
    use crate::resolve::{AskResult, Asked, Found, Round, SaidState};

    /// The home page counts its Archives in the reader's language, one in the singular,
    /// and is titled in it.
    #[test]
    fn the_home_page_counts_its_archives_in_the_readers_language() {
        let ibi = Ibi::parse("J8LNKB5R7W/3FUQHC5").unwrap();
        let count = |lang, n| home(lang, "http://r.example", &ibi, n, None).body;
        assert!(count(PageLang::En, 0).contains("<p>No Archive included. "));
        assert!(count(PageLang::En, 1).contains("<p>1 Archive included. "));
        assert!(count(PageLang::En, 2).contains("<p>2 Archives included. "));
        assert!(count(PageLang::Pt, 0).contains("<p>Nenhum Arquivo incluído. "));
        assert!(count(PageLang::Pt, 1).contains("<p>1 Arquivo incluído. "));
        assert!(count(PageLang::Pt, 2).contains("<p>2 Arquivos incluídos. "));
        assert!(count(PageLang::Pt, 1).contains("<title>Resolvedor de IBI</title><style>"));
        assert!(count(PageLang::Pt, 1)
            .contains("</style></head>\n<body>\n<main>\n<h1>Resolvedor de IBI</h1>"));
        assert!(count(PageLang::En, 1)
            .contains("</style></head>\n<body>\n<main>\n<h1>IBI resolver</h1>"));
    }

    /// The home page, whole: its form first, the example, the Archives included; no link
    /// to itself.
    #[test]
    fn the_home_page_has_a_form_to_resolve_an_ibi() {
        let ibi = Ibi::parse("J8LNKB5R7W/3FUQHC5").unwrap();
        let page = home(
            PageLang::En,
            "http://r.example",
            &ibi,
            2,
            Some("8JMKD3MGP8W/35MME4E"),
        );
        assert_eq!(page.status, 200);
        assert_eq!(
            page.body,
            format!("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>IBI resolver</title><style>{STYLE}</style></head>\n<body>\n<main>\n<h1>IBI resolver</h1>\n<p>This is an IBI resolver: add an IBI to this address, <code>http://r.example/</code>, to reach the item; add <code>?noredirect</code> to see the resolution without following it.</p>\n<form action=\"/\" method=\"get\">\n<label for=\"ibi\">IBI or persistent URL</label>\n<input id=\"ibi\" name=\"ibi\" type=\"text\" value=\"\" required autocapitalize=\"off\" spellcheck=\"false\">\n<button type=\"submit\">Resolve</button>\n</form>\n<p>For example: <a href=\"http://r.example/8JMKD3MGP8W/35MME4E\">http://r.example/8JMKD3MGP8W/35MME4E</a></p>\n<p>2 Archives included. Resolver service: <code>http://r.example/J8LNKB5R7W/3FUQHC5</code>.</p>\n</main>\n</body>\n</html>\n")
        );
        let pt = home(PageLang::Pt, "http://r.example", &ibi, 0, None).body;
        assert!(pt.contains("<form action=\"/\" method=\"get\">\n<label for=\"ibi\">IBI ou URL persistente</label>\n<input id=\"ibi\" name=\"ibi\" type=\"text\" value=\"\" required autocapitalize=\"off\" spellcheck=\"false\">\n<button type=\"submit\">Resolver</button>\n</form>\n<p>Nenhum Arquivo incluído. "), "{pt}");
    }

    /// What the form answers: 400 with the form again holding what was typed (escaped),
    /// and why; 303 with a link to the persistent URL.
    #[test]
    fn the_forms_answers_in_the_readers_language() {
        let refusal = Refusal::OneSegment {
            segment: "\"<x>\"".into(),
        };
        let page = form_refused(PageLang::Pt, "<x>", Some(&refusal));
        assert_eq!(page.status, 400);
        assert_eq!(
            page.body,
            format!("<!DOCTYPE html>\n<html lang=\"pt-BR\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>IBI inválido</title><style>{STYLE}</style></head>\n<body>\n<header><a href=\"/\">Resolvedor de IBI</a></header>\n<main>\n<h1>IBI inválido</h1>\n<p>O que foi digitado não é um IBI:</p>\n<p><code>&lt;x&gt;</code></p>\n<p>Nenhum IBI no início do caminho: &quot;&lt;x&gt;&quot; é um só segmento; um IBIp tem dois, um nome uniforme de repositório, quatro.</p>\n<form action=\"/\" method=\"get\">\n<label for=\"ibi\">IBI ou URL persistente</label>\n<input id=\"ibi\" name=\"ibi\" type=\"text\" value=\"&lt;x&gt;\" required autocapitalize=\"off\" spellcheck=\"false\">\n<button type=\"submit\">Resolver</button>\n</form>\n</main>\n</body>\n</html>\n")
        );
        let page = form_refused(PageLang::En, "", None);
        assert!(page.body.contains("<h1>Invalid IBI</h1>\n<p>No IBI was typed.</p>\n<form action=\"/\" method=\"get\">\n<label for=\"ibi\">IBI or persistent URL</label>\n<input id=\"ibi\" name=\"ibi\" type=\"text\" value=\"\" "), "{}", page.body);
        let page = see_other(PageLang::En, "http://r.example/8JMKD3MGP8W/35MME4E+(pt-BR)");
        assert_eq!(page.status, 303);
        assert_eq!(
            page.body,
            format!("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Persistent URL</title><style>{STYLE}</style></head>\n<body>\n<header><a href=\"/\">IBI resolver</a></header>\n<main>\n<h1>Persistent URL</h1>\n<p><a href=\"http://r.example/8JMKD3MGP8W/35MME4E+(pt-BR)\">http://r.example/8JMKD3MGP8W/35MME4E+(pt-BR)</a></p>\n</main>\n</body>\n</html>\n")
        );
    }

    /// The stylesheet reads as text in any parser (nothing that could end `<style>` or
    /// start a reference), fetches nothing, and has what a phone and a keyboard need.
    #[test]
    fn the_stylesheet_is_inert_text_and_fits_a_phone() {
        assert!(!STYLE.contains(['<', '>', '"', '\'', '&']), "{STYLE}");
        assert!(!STYLE.contains("url("), "{STYLE}");
        assert!(!STYLE.contains("@import"), "{STYLE}");
        for rule in [
            "max-width:46rem",
            "overflow-wrap:anywhere",
            ":focus-visible{outline:3px solid",
            "@media (prefers-color-scheme:dark)",
        ] {
            assert!(STYLE.contains(rule), "{rule}");
        }
    }

    /// Why a round was asked and why a chain of related items ends, in words in each
    /// language.
    #[test]
    fn reasons_of_rounds_and_chains_in_the_readers_language() {
        let t = inspected(99, "");
        let page = |lang| inspection(lang, &t, false, "8JMKD3MGP8W/35MME4E", "http://r/x").body;
        assert!(page(PageLang::En).contains("<p>Asked because a.b:80 (a.b/c/2020/01.01.01.01) named it as ibi.metadata of 8JMKD3MGP8W/35MME4E, without its URL</p>\n"));
        assert!(page(PageLang::Pt).contains("<p>Pedida porque a.b:80 (a.b/c/2020/01.01.01.01) o indicou como ibi.metadata de 8JMKD3MGP8W/35MME4E, sem a sua URL</p>\n"));
        let chain = |detail| Trace {
            outcome: Outcome::Chain { detail },
            ..inspected(99, "")
        };
        let long = chain(ChainEnd::TooLong { max: 16 });
        assert!(outcome(PageLang::Pt, &long, "X").body.contains(
            "<h1>Itens relacionados sem fim</h1>\n<p>A cadeia de itens relacionados a <code>X</code> passa de 16 rodadas.</p>\n"
        ));
        let again = chain(ChainEnd::Again {
            ibi: "Y".into(),
            why: Some(Why::OwnLanguage),
        });
        assert!(outcome(PageLang::Pt, &again, "X").body.contains(
            "<p>A cadeia de itens relacionados a <code>X</code> volta a <code>Y</code>, já pedido: nenhuma tradução nos idiomas do leitor: o item no seu próprio idioma.</p>\n"
        ));
        assert!(outcome(PageLang::En, &again, "X").body.contains(
            "<p>The chain of items related to <code>X</code> comes back to <code>Y</code>, asked for already: no translation in the reader's languages: the item in its own language.</p>\n"
        ));
        // The JSON view and the log keep the English words.
        assert_eq!(
            serde_json::to_value(&again.outcome).unwrap(),
            serde_json::json!({"outcome": "chain", "detail": "Y is named again (no translation in the reader's languages: the item in its own language)"})
        );
    }

    #[test]
    fn what_the_reader_asked_for_is_written_as_text() {
        let refusal = Refusal::OneSegment {
            segment: "\"it's <wrong>\"".into(),
        };
        let page = bad_request(PageLang::En, "/<b>&\"'x", Some(&refusal));
        assert_eq!(page.status, 400);
        assert_eq!(
            page.body,
            format!("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Invalid persistent URL</title><style>{STYLE}</style></head>\n<body>\n<header><a href=\"/\">IBI resolver</a></header>\n<main>\n<h1>Invalid persistent URL</h1>\n<p>The address asked for is not a persistent URL:</p>\n<p><code>/&lt;b&gt;&amp;&quot;&#39;x</code></p>\n<p>No IBI at the start of the path: &quot;it&#39;s &lt;wrong&gt;&quot; is one segment; an IBIp has two, a uniform repository name four.</p>\n</main>\n</body>\n</html>\n")
        );
        let page = bad_request(PageLang::Pt, "/x", Some(&refusal));
        assert_eq!(
            page.body,
            format!("<!DOCTYPE html>\n<html lang=\"pt-BR\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>URL persistente inválida</title><style>{STYLE}</style></head>\n<body>\n<header><a href=\"/\">Resolvedor de IBI</a></header>\n<main>\n<h1>URL persistente inválida</h1>\n<p>O endereço pedido não é uma URL persistente:</p>\n<p><code>/x</code></p>\n<p>Nenhum IBI no início do caminho: &quot;it&#39;s &lt;wrong&gt;&quot; é um só segmento; um IBIp tem dois, um nome uniforme de repositório, quatro.</p>\n</main>\n</body>\n</html>\n")
        );
        // Without a reason (the path named a key): no paragraph for it.
        assert!(bad_request(PageLang::Pt, "/x", None)
            .body
            .ends_with("<p><code>/x</code></p>\n</main>\n</body>\n</html>\n"));
    }

    /// Values an Archive or a reader may have put in a page: markup, attribute and
    /// comment breakers, entities and other escapes that must stay text, look-alikes,
    /// controls and line breaks, the five characters alone.
    const HOSTILE: [&str; 42] = [
        "<script>alert(1)</script>",
        "\"><script>alert(1)</script>",
        "'><script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "\" onmouseover=\"alert(1)",
        "' onmouseover='alert(1)",
        "javascript:alert(1)",
        "</code><script>alert(1)</script><code>",
        "</title><script>alert(1)</script>",
        "</pre></td></tr></table><script>alert(1)</script>",
        "</li></ul><script>alert(1)</script>",
        "<!--",
        "-->",
        "<![CDATA[<script>alert(1)</script>]]>",
        "<svg onload=alert(1)>",
        "<iframe src=\"javascript:alert(1)\"></iframe>",
        "<a href=\"javascript:alert(1)\">x</a>",
        "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
        "<base href=\"//evil.example/\">",
        "<style>*{background:url(//evil.example/)}</style>",
        "<form action=//evil.example/><button>x</button></form>",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "&#60;script&#62;",
        "&#x3C;script&#x3E;",
        "&quot;&#39;&amp;",
        "%3Cscript%3Ealert(1)%3C/script%3E",
        "\\u003cscript\\u003e",
        "`${alert(1)}`",
        "{{constructor.constructor('alert(1)')()}}",
        "\u{FF1C}script\u{FF1E}alert(1)\u{FF1C}/script\u{FF1E}",
        "\u{202E}>tpircs<",
        "\0<script>",
        "\r\n\r\n<script>alert(1)</script>",
        "\t<b>\n</b>",
        "<<script>>",
        "<scr<script>ipt>alert(1)</script>",
        "x\"y'z<w>&v",
        "<",
        ">",
        "\"",
        "'",
        "&",
    ];

    /// Stands for a value in the page it is rendered in: markup leaves it as it is.
    const MARK: &str = "MARKEDVALUE";

    /// A trace with the values of [`inspection_slots`] but `value` in slot `slot`.
    fn inspected(slot: usize, value: &str) -> Trace {
        let at = |n: usize, benign: &str| {
            if n == slot {
                value.to_string()
            } else {
                benign.to_string()
            }
        };
        let outcome = match slot {
            14 => Outcome::Deleted {
                date: at(14, ""),
                keeper: None,
            },
            15 => Outcome::NoTranslation {
                language: at(15, ""),
            },
            16 => Outcome::Suspicion {
                archives: vec!["a.b/c/2020/01.01.01.01".into(), at(16, "")],
            },
            17 => Outcome::Chain {
                detail: ChainEnd::Again {
                    ibi: at(17, ""),
                    why: None,
                },
            },
            _ => Outcome::Found(Found {
                url: at(8, "http://mtc-m16c.sid.inpe.br/col/x/doc/a.pdf"),
                archive: "a.b/c/2020/01.01.01.01".into(),
                address: at(9, "mtc-m16c.sid.inpe.br"),
                contenttype: "Data".into(),
                state: Some(SaidState::of("Original")),
                ibi: None,
                urlkey: None,
                language: None,
                timestamp: None,
                next_edition: None,
            }),
        };
        Trace {
            persistent_url: at(0, "http://urlib.net:80/8JMKD3MGP8W/35MME4E"),
            rounds: vec![Round {
                ibi: at(1, "8JMKD3MGP8W/35MME4E"),
                verblist: at(2, "GetMetadata"),
                remembered: false,
                home: false,
                why: Some(Why::Named {
                    address: at(13, "a.b:80"),
                    archive: "a.b/c/2020/01.01.01.01".into(),
                    pair: "ibi.metadata".into(),
                    of: "8JMKD3MGP8W/35MME4E".into(),
                }),
                asked: vec![Asked {
                    archive: at(3, "a.b/c/2020/01.01.01.01"),
                    address: at(4, "mtc-m16c.sid.inpe.br"),
                    result: AskResult::Answered,
                    detail: Some(at(5, "detail")),
                    may_hold: Some(MayHold::Home),
                    pairs: vec![(at(6, "state"), at(7, "Original"))],
                    ms: 1.5,
                }],
            }],
            outcome,
            location: None,
            conflicts: vec![Conflict {
                ibi: at(10, "8jmkd3mgp8w/35mme4e"),
                holder: Some(at(11, "a.b/c/2020/01.01.01.01")),
                claimant: at(12, "a.b/c/2020/01.01.01.02"),
            }],
            ms: 2.5,
        }
    }

    /// The slots of the inspection view, each shown as written: 0 to 13, and 14 to 17 in
    /// the outcome.
    const INSPECTION_SLOTS: usize = 18;

    /// Every page with a value in it, in each language: its name, status, and how it is
    /// rendered with a value.
    #[allow(clippy::type_complexity)]
    fn pages() -> Vec<(String, u16, Box<dyn Fn(PageLang, &str) -> Page>)> {
        let trace = |outcome: Outcome| Trace {
            persistent_url: "http://urlib.net:80/8JMKD3MGP8W/35MME4E".into(),
            rounds: Vec::new(),
            outcome,
            location: None,
            conflicts: Vec::new(),
            ms: 0.0,
        };
        let copy = |url: &str, address: &str| Found {
            url: url.to_string(),
            archive: "a.b/c/2020/01.01.01.01".into(),
            address: address.to_string(),
            contenttype: "Data".into(),
            state: None,
            ibi: None,
            urlkey: None,
            language: None,
            timestamp: None,
            next_edition: None,
        };
        let found = move |url: &str| Outcome::Found(copy(url, "mtc-m16c.sid.inpe.br"));
        let copies = move |url: &str, address: &str| {
            vec![
                copy("http://a.b/col/x/doc/a.pdf", "a.b"),
                copy(url, address),
            ]
        };
        let two = |v: &str| vec!["a.b/c/2020/01.01.01.01".to_string(), v.to_string()];
        let mut all: Vec<(String, u16, Box<dyn Fn(PageLang, &str) -> Page>)> = vec![
            (
                "400, path".into(),
                400,
                Box::new(|l, v| bad_request(l, v, Some(&Refusal::NoIbi))),
            ),
            (
                "400, why".into(),
                400,
                Box::new(|l, v| {
                    let refusal = Refusal::OneSegment { segment: v.into() };
                    bad_request(l, "/x", Some(&refusal))
                }),
            ),
            (
                "400 form, typed".into(),
                400,
                Box::new(|l, v| form_refused(l, v, Some(&Refusal::NoIbi))),
            ),
            (
                "400 form, why".into(),
                400,
                Box::new(|l, v| {
                    let refusal = Refusal::OneSegment { segment: v.into() };
                    form_refused(l, "x", Some(&refusal))
                }),
            ),
            ("303 form, location".into(), 303, Box::new(see_other)),
            (
                "302, url".into(),
                302,
                Box::new(move |l, v| outcome(l, &trace(found(v)), "8JMKD3MGP8W/35MME4E")),
            ),
            (
                "404 not found, IBI".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NotFound {
                        asked: 2,
                        missing: None,
                        unasked: Vec::new(),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "404 not found, Archive not asked".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NotFound {
                        asked: 3,
                        missing: None,
                        unasked: two(v),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 no such file, path".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NotFound {
                        asked: 2,
                        missing: Some(Missing::File(v.into())),
                        unasked: Vec::new(),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 no metadata, format".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NotFound {
                        asked: 2,
                        missing: Some(Missing::Metadata(Some(v.into()))),
                        unasked: Vec::new(),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 nothing for, verbs".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NotFound {
                        asked: 2,
                        missing: Some(Missing::Relation(v.into())),
                        unasked: Vec::new(),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "503 unavailable, IBI".into(),
                503,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Unavailable {
                        archives: two("x.y/z/2020/01.01.01.02"),
                        asked: 3,
                        unasked: Vec::new(),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "503 unavailable, Archive".into(),
                503,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Unavailable {
                        archives: two(v),
                        asked: 3,
                        unasked: two(v),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 no translation, IBI".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoTranslation {
                        language: "fr".into(),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "404 no translation, language".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoTranslation { language: v.into() });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "410, IBI".into(),
                410,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Deleted {
                        date: "2020-05-06T07:08:09Z".into(),
                        keeper: None,
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "410, date".into(),
                410,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Deleted {
                        date: v.into(),
                        keeper: None,
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "409, IBI".into(),
                409,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Suspicion {
                        archives: two("x.y/z/2020/01.01.01.02"),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "409, Archive".into(),
                409,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Suspicion { archives: two(v) });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 no original, IBI".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoOriginal {
                        copies: copies("http://c.d/col/x/doc/a.pdf", "c.d"),
                        unasked: Vec::new(),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "404 no original, copy's Archive".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoOriginal {
                        copies: copies("http://c.d/col/x/doc/a.pdf", v),
                        unasked: two(v),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 no original, copy's URL".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoOriginal {
                        copies: copies(v, "c.d"),
                        unasked: Vec::new(),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "503 unverifiable, IBI".into(),
                503,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Unverifiable {
                        archives: two("x.y/z/2020/01.01.01.02"),
                        copies: Vec::new(),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "503 unverifiable, Archive".into(),
                503,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Unverifiable {
                        archives: two(v),
                        copies: copies(v, v),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 endless related items, IBI".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Chain {
                        detail: ChainEnd::TooLong { max: 16 },
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "404 endless related items, detail".into(),
                404,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Chain {
                        detail: ChainEnd::Again {
                            ibi: v.into(),
                            why: Some(Why::OwnLanguage),
                        },
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
        ];
        for slot in 0..INSPECTION_SLOTS {
            all.push((
                format!("inspection, slot {slot}"),
                200,
                Box::new(move |l, v| {
                    let t = inspected(slot, v);
                    inspection(l, &t, false, "8JMKD3MGP8W/35MME4E", &t.persistent_url)
                }),
            ));
        }
        // The tombstone's page: each of its values in turn, the others plain.
        for slot in 0..TOMBSTONE_SLOTS {
            all.push((
                format!("410 tombstone, slot {slot}"),
                410,
                Box::new(move |l, v| {
                    let at = |i: usize, plain: &str| {
                        if i == slot {
                            v.to_string()
                        } else {
                            plain.to_string()
                        }
                    };
                    let t = Tombstone {
                        landing: at(0, "http://a.example/s/filelist/x"),
                        name: Some(at(1, "Title")),
                        creators: vec![at(2, "Souza, J."), "INPE".into()],
                        published: None,
                        removed: None,
                        reason: Some(at(3, "Withdrawn")),
                    };
                    tombstone(
                        l,
                        (
                            &at(4, "a.b/c/2020/01.02.03.04"),
                            &at(5, "2020-05-06T07:08:09Z"),
                        ),
                        &t,
                        (
                            &at(6, "Souza, J. (n.d.). Title."),
                            &at(7, "http://r.example/x"),
                        ),
                    )
                }),
            ));
        }
        // The list of editions: each of its values in turn, the others plain.
        for slot in 0..EDITIONS_SLOTS {
            all.push((
                format!("200 editions, slot {slot}"),
                200,
                Box::new(move |l, v| {
                    let at = |i: usize, plain: &str| {
                        if i == slot {
                            v.to_string()
                        } else {
                            plain.to_string()
                        }
                    };
                    let listed = [
                        crate::editions::Listed {
                            ibi: at(0, "a.b/c/2020/01.02.03.04"),
                            persistent: at(1, "http://r.example/a.b/c/2020/01.02.03.04"),
                            location: at(2, "http://a.example/col/a/doc/x.pdf"),
                            datetime: 1_577_836_800,
                        },
                        crate::editions::Listed {
                            ibi: "x.y/z/2021/01.02.03.04".into(),
                            persistent: "http://r.example/x.y/z/2021/01.02.03.04".into(),
                            location: at(3, "http://b.example/col/b/doc/x.pdf"),
                            datetime: 1_609_459_200,
                        },
                    ];
                    editions(
                        l,
                        &at(4, "a.b/c/2020/01.02.03.04"),
                        (
                            &at(5, "http://r.example/a.b/c/2020/01.02.03.04"),
                            &at(6, "http://r.example/timemap/link/a.b/c/2020/01.02.03.04"),
                        ),
                        &listed,
                        None,
                    )
                }),
            ));
        }
        all
    }

    /// The list of editions says when it stops at its bound, and names one edition in
    /// the singular.
    #[test]
    fn the_list_of_editions_says_its_bound() {
        let one = [crate::editions::Listed {
            ibi: "a.b/c/2020/01.02.03.04".into(),
            persistent: "http://r/a.b/c/2020/01.02.03.04".into(),
            location: "http://a/x".into(),
            datetime: 0,
        }];
        let ends = (
            "http://r/a.b/c/2020/01.02.03.04",
            "http://r/timemap/link/a.b/c/2020/01.02.03.04",
        );
        let page = editions(PageLang::Pt, "a.b/c/2020/01.02.03.04", ends, &one, Some(16));
        assert!(page.body.contains(
            "<p>O resolvedor encontrou uma edição do item <code>a.b/c/2020/01.02.03.04</code> nos seus Arquivos.</p>\n\
             <ol>\n<li><p><time datetime=\"1970-01-01T00:00:00Z\">1 de janeiro de 1970, 00:00:00 UTC</time>: <code>a.b/c/2020/01.02.03.04</code></p>\n"
        ), "{}", page.body);
        assert!(page.body.contains(
            "</ol>\n<p>Uma lista tem no máximo 16 edições: pode haver outras depois da última.</p>\n<p>O original, "
        ), "{}", page.body);
        let page = editions(PageLang::En, "a.b/c/2020/01.02.03.04", ends, &one, None);
        assert!(
            page.body.contains("</ol>\n<p>The original, "),
            "{}",
            page.body
        );
    }

    /// The values of the list of editions: the first edition's IBI, persistent URL and
    /// location, the second's location (each as an Archive said it, or built from what
    /// it said), the IBI asked, the original and the TimeMap.
    const EDITIONS_SLOTS: usize = 7;

    /// The values of a tombstone's page: its landing page, name, an author, its reason,
    /// its IBI, its removal date, its citation and its persistent URL.
    const TOMBSTONE_SLOTS: usize = 8;

    /// Each page rendered with each hostile value is, byte for byte, the page rendered
    /// with a plain value where the hostile one stands escaped by `escape_html`; no `<`,
    /// `>`, `"` or `'` of a value is ever raw.
    /// A tombstone's authors are shown as the Archive wrote them: a name ending with words
    /// in parentheses is a person's, not an Archive shown as `address (service IBI)`.
    #[test]
    fn a_tombstones_authors_are_shown_whole() {
        let t = Tombstone {
            landing: "http://a.example/s/filelist/x".into(),
            name: Some("Title".into()),
            creators: vec!["Souza, J. (ed.)".into(), "INPE (Brasil)".into()],
            published: None,
            removed: None,
            reason: None,
        };
        let page = tombstone(
            PageLang::En,
            ("a.b/c/2020/01.02.03.04", "2020-05-06T07:08:09Z"),
            &t,
            ("Souza, J. (n.d.). Title.", "http://r.example/x"),
        );
        assert!(
            page.body
                .contains("<ul>\n<li>Souza, J. (ed.)</li>\n<li>INPE (Brasil)</li>\n</ul>\n"),
            "{}",
            page.body
        );
    }

    #[test]
    fn hostile_values_are_escaped_byte_for_byte_on_every_page() {
        let mut checked = 0;
        for (name, status, render) in pages() {
            for lang in [PageLang::En, PageLang::Pt] {
                let plain = render(lang, MARK);
                assert_eq!(plain.status, status, "{name}");
                assert_eq!(plain.content_type, "text/html; charset=utf-8", "{name}");
                assert!(plain.body.contains(MARK), "{name}: the value is not shown");
                for value in HOSTILE {
                    let escaped = escape_html(value);
                    assert!(
                        !escaped.contains(['<', '>', '"', '\'']),
                        "{value:?} escaped as {escaped:?}"
                    );
                    let page = render(lang, value);
                    assert_eq!(page.status, status, "{name}: {value:?}");
                    assert_eq!(page.content_type, plain.content_type, "{name}: {value:?}");
                    assert_eq!(
                        page.body,
                        plain.body.replace(MARK, &escaped),
                        "{name}: {value:?}"
                    );
                    checked += 1;
                }
            }
        }
        // 23 outcome and 400 pages, 3 of the home page's form, 18 places of the
        // inspection view, 8 of the tombstone's page and 7 of the list of editions, in 2
        // languages.
        assert_eq!(
            checked,
            (23 + 3 + INSPECTION_SLOTS + TOMBSTONE_SLOTS + EDITIONS_SLOTS) * 2 * HOSTILE.len()
        );
        // The JSON inspection view gives back each value as it was.
        for slot in 0..INSPECTION_SLOTS {
            for value in HOSTILE {
                let page = inspection(
                    PageLang::En,
                    &inspected(slot, value),
                    true,
                    "8JMKD3MGP8W/35MME4E",
                    "http://urlib.net/8JMKD3MGP8W/35MME4E",
                );
                assert_eq!(page.content_type, "application/json");
                let json: serde_json::Value = serde_json::from_str(&page.body).unwrap();
                let strings = strings_of(&json);
                // As it was, or within the English words of a reason (why, chain).
                assert!(
                    strings.iter().any(|s| s.contains(value)),
                    "{slot}: {value:?}"
                );
            }
        }
        // Pages without a value: the same bytes in each language, whatever was asked.
        for lang in [PageLang::En, PageLang::Pt] {
            for (page, status) in [(overloaded(lang), 503), (too_many(lang), 429)] {
                assert_eq!(page.status, status);
                assert!(page
                    .body
                    .starts_with(&format!("<!DOCTYPE html>\n<html lang=\"{}\">", lang.code())));
            }
        }
    }

    /// Every string in `json`.
    fn strings_of(json: &serde_json::Value) -> Vec<String> {
        match json {
            serde_json::Value::String(s) => vec![s.clone()],
            serde_json::Value::Array(a) => a.iter().flat_map(strings_of).collect(),
            serde_json::Value::Object(o) => o
                .iter()
                .flat_map(|(k, v)| {
                    let mut all = vec![k.clone()];
                    all.extend(strings_of(v));
                    all
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}
