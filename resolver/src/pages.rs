//! The pages a reader sees when a persistent URL is not followed: small HTML in Portuguese
//! or English, without script, and the inspection view (HTML, or JSON for
//! `Accept: application/json`).

use ibi::markup::escape_html;
use ibi::Ibi;

use crate::lang::PageLang;
use crate::resolve::{Outcome, Trace};

/// A page: status, content type and body.
pub struct Page {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

/// The `<meta>` of a page that fits a phone's width.
const VIEWPORT: &str = "<meta name=\"viewport\" content=\"width=device-width\">";

/// The page shell: `title` (escaped) as title and heading, then `body` (HTML), after
/// the `<meta>` elements of `meta` in the head.
fn shell(status: u16, lang: PageLang, meta: &str, title: &str, body: &str) -> Page {
    Page {
        status,
        content_type: "text/html; charset=utf-8",
        body: format!(
            "<!DOCTYPE html>\n<html lang=\"{}\">\n<head><meta charset=\"utf-8\">{meta}<title>{}</title></head>\n<body>\n<h1>{}</h1>\n{body}</body>\n</html>\n",
            lang.code(),
            escape_html(title),
            escape_html(title)
        ),
    }
}

fn html(status: u16, lang: PageLang, title: &str, body: &str) -> Page {
    shell(status, lang, VIEWPORT, title, body)
}

fn pick<'a>(lang: PageLang, pt: &'a str, en: &'a str) -> &'a str {
    match lang {
        PageLang::Pt => pt,
        PageLang::En => en,
    }
}

/// The resolver's home page: what it is and how to use it (`publicurl`, the service's
/// IBI, and how many Archives are included).
pub fn home(lang: PageLang, publicurl: &str, serviceibi: &Ibi, archives: usize) -> Page {
    let example = format!("{publicurl}/{serviceibi}");
    let body = match lang {
        PageLang::Pt => format!(
            "<p>Este é um resolvedor de IBI: acrescente um IBI a este endereço para chegar ao item, por exemplo <code>{0}/8JMKD3MGP8W/35MME4E</code>; acrescente <code>?noredirect</code> para ver a resolução sem segui-la.</p>\n<p>{1}. Serviço do resolvedor: <code>{2}</code>.</p>\n",
            escape_html(publicurl),
            if archives == 1 {
                "1 Arquivo incluído".to_string()
            } else {
                format!("{archives} Arquivos incluídos")
            },
            escape_html(&example)
        ),
        PageLang::En => format!(
            "<p>This is an IBI resolver: add an IBI to this address to reach the item, for example <code>{0}/8JMKD3MGP8W/35MME4E</code>; add <code>?noredirect</code> to see the resolution without following it.</p>\n<p>{1}. Resolver service: <code>{2}</code>.</p>\n",
            escape_html(publicurl),
            if archives == 1 {
                "1 Archive included".to_string()
            } else {
                format!("{archives} Archives included")
            },
            escape_html(&example)
        ),
    };
    shell(
        200,
        lang,
        "",
        pick(lang, "Resolvedor de IBI", "IBI resolver"),
        &body,
    )
}

/// 503: as many resolutions as allowed are under way.
pub fn overloaded(lang: PageLang) -> Page {
    html(
        503,
        lang,
        pick(lang, "Resolvedor sobrecarregado", "Resolver overloaded"),
        pick(
            lang,
            "<p>O resolvedor está atendendo ao maior número de pedidos que aceita. Tente de novo em instantes.</p>\n",
            "<p>The resolver is answering as many requests as it takes. Try again in a moment.</p>\n",
        ),
    )
}

/// 429: the reader's network is beyond one of its bounds.
pub fn too_many(lang: PageLang) -> Page {
    html(
        429,
        lang,
        pick(lang, "Pedidos demais", "Too many requests"),
        pick(
            lang,
            "<p>A sua rede fez mais pedidos a este resolvedor do que ele aceita de uma rede ao mesmo tempo. Tente de novo daqui a pouco.</p>\n",
            "<p>Your network has asked this resolver more than it takes from one network at a time. Try again in a moment.</p>\n",
        ),
    )
}

/// 400: the path and query are not a persistent URL.
pub fn bad_request(lang: PageLang, path: &str, why: &str) -> Page {
    let title = pick(lang, "URL persistente inválida", "Invalid persistent URL");
    let intro = pick(
        lang,
        "O endereço pedido não é uma URL persistente:",
        "The address asked for is not a persistent URL:",
    );
    html(
        400,
        lang,
        title,
        &format!(
            "<p>{intro}</p>\n<p><code>{}</code></p>\n<p>{}</p>\n",
            escape_html(path),
            escape_html(why)
        ),
    )
}

/// The page of an outcome other than a redirect.
pub fn outcome(lang: PageLang, trace: &Trace, ibi: &str) -> Page {
    let ibi_html = format!("<code>{}</code>", escape_html(ibi));
    // When the last round asked for another item than the reader's (a related one an
    // Archive named), the page says which.
    let related = match trace.rounds.last() {
        Some(last) if trace.rounds.len() > 1 && last.ibi != ibi => format!(
            "<p>{} <code>{}</code>{} {ibi_html}.</p>\n",
            pick(
                lang,
                "O último IBI pedido foi",
                "The last IBI asked for was"
            ),
            escape_html(&last.ibi),
            pick(
                lang,
                ", indicado por um Arquivo para",
                ", named by an Archive for"
            ),
        ),
        _ => String::new(),
    };
    match &trace.outcome {
        Outcome::Found(f) => {
            let location = trace.location.as_deref().unwrap_or(&f.url);
            html(
                302,
                lang,
                pick(lang, "Encontrado", "Found"),
                &format!(
                    "<p><a href=\"{}\">{}</a></p>\n",
                    escape_html(location),
                    escape_html(location)
                ),
            )
        }
        Outcome::NotFound { asked } => {
            let mut body = format!(
                "<p>{} {ibi_html}.</p>\n",
                pick(
                    lang,
                    "Nenhum Arquivo conhece o IBI",
                    "No Archive knows the IBI"
                )
            );
            if *asked == 0 {
                body.push_str(pick(
                    lang,
                    "<p>Nenhum Arquivo está incluído neste resolvedor.</p>\n",
                    "<p>No Archive is included in this resolver.</p>\n",
                ));
            }
            body.push_str(&related);
            html(
                404,
                lang,
                pick(lang, "Item não encontrado", "Item not found"),
                &body,
            )
        }
        Outcome::Unavailable { archives, asked } => {
            let list: String = archives
                .iter()
                .map(|a| format!("<li>{}</li>\n", escape_html(a)))
                .collect();
            html(
                503,
                lang,
                pick(lang, "Arquivos indisponíveis", "Archives unavailable"),
                &format!(
                    "<p>{} {ibi_html}{} {} {asked} {}</p>\n<ul>\n{list}</ul>\n{related}<p>{}</p>\n",
                    pick(
                        lang,
                        "Nenhum Arquivo que respondeu conhece o IBI",
                        "No Archive that answered knows the IBI"
                    ),
                    pick(
                        lang,
                        ", mas estes Arquivos não responderam",
                        ", but these Archives did not answer"
                    ),
                    pick(lang, "(Arquivos perguntados:", "(of"),
                    pick(lang, "):", "asked):"),
                    pick(
                        lang,
                        "Um deles pode ter o item. Tente de novo mais tarde.",
                        "One of them may hold the item. Try again later."
                    )
                ),
            )
        }
        Outcome::NoTranslation { language } => html(
            404,
            lang,
            pick(lang, "Tradução inexistente", "No such translation"),
            &format!(
                "<p>{} {ibi_html} {} <code>{}</code>.</p>\n",
                pick(lang, "O item", "The item"),
                pick(lang, "não tem tradução no idioma", "has no translation in"),
                escape_html(language)
            ),
        ),
        Outcome::Deleted { date } => html(
            410,
            lang,
            pick(lang, "Item removido", "Item removed"),
            &format!(
                "<p>{} {ibi_html} {} {}.</p>\n",
                pick(lang, "O item", "The item"),
                pick(lang, "foi removido em", "was removed on"),
                escape_html(date)
            ),
        ),
        Outcome::Suspicion { archives } => {
            let list: String = archives
                .iter()
                .map(|a| format!("<li>{}</li>\n", escape_html(a)))
                .collect();
            html(
                409,
                lang,
                pick(
                    lang,
                    "Alerta: mais de um original",
                    "Alert: more than one original",
                ),
                &format!(
                    "<p>{} {ibi_html}{}</p>\n<ul>\n{list}</ul>\n<p>{}</p>\n",
                    pick(
                        lang,
                        "Mais de um Arquivo afirma ter o original de",
                        "More than one Archive claims to hold the original of"
                    ),
                    pick(
                        lang,
                        ". Arquivos sob suspeita:",
                        ". Archives under suspicion:"
                    ),
                    pick(
                        lang,
                        "Uma investigação é necessária.",
                        "An investigation is needed."
                    )
                ),
            )
        }
        Outcome::NoOriginal { copies } => {
            let list: String = copies
                .iter()
                .map(|f| {
                    format!(
                        "<li>{} ({}): <a href=\"{}\">{}</a></li>\n",
                        escape_html(&f.address),
                        escape_html(&f.archive),
                        escape_html(&f.url),
                        escape_html(&f.url)
                    )
                })
                .collect();
            html(
                404,
                lang,
                pick(lang, "Original não encontrado", "Original not found"),
                &format!(
                    "<p>{} {ibi_html}{}</p>\n<ul>\n{list}</ul>\n",
                    pick(
                        lang,
                        "Nenhum Arquivo afirma ter o original de",
                        "No Archive claims to hold the original of"
                    ),
                    pick(
                        lang,
                        "; todos responderam, e estas cópias foram encontradas:",
                        "; every Archive answered, and these copies were found:"
                    )
                ),
            )
        }
        Outcome::Unverifiable { archives } => {
            let list: String = archives
                .iter()
                .map(|a| format!("<li>{}</li>\n", escape_html(a)))
                .collect();
            html(
                503,
                lang,
                pick(
                    lang,
                    "Verificação do original impossível agora",
                    "The original cannot be checked now",
                ),
                &format!(
                    "<p>{} {ibi_html}{}</p>\n<ul>\n{list}</ul>\n<p>{}</p>\n",
                    pick(
                        lang,
                        "Só um Arquivo pode afirmar ter o original de",
                        "Only one Archive may claim to hold the original of"
                    ),
                    pick(
                        lang,
                        ", mas estes Arquivos não responderam:",
                        ", but these Archives did not answer:"
                    ),
                    pick(lang, "Tente de novo mais tarde.", "Try again later.")
                ),
            )
        }
        Outcome::Throttled { .. } => too_many(lang),
        Outcome::Chain { detail } => html(
            404,
            lang,
            pick(lang, "Itens relacionados sem fim", "Endless related items"),
            &format!(
                "<p>{} {ibi_html}: {}.</p>\n",
                pick(
                    lang,
                    "A cadeia de itens relacionados a",
                    "The chain of items related to"
                ),
                escape_html(detail)
            ),
        ),
    }
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

/// The inspection view: the resolution shown, not followed.
pub fn inspection(lang: PageLang, trace: &Trace, json: bool) -> Page {
    if json {
        return Page {
            status: 200,
            content_type: "application/json",
            body: serde_json::to_string_pretty(trace).unwrap_or_else(|_| "{}".into()) + "\n",
        };
    }
    let mut body = format!(
        "<p><code>{}</code> — {} {:.1} ms</p>\n",
        escape_html(&trace.persistent_url),
        pick(lang, "resolvida em", "resolved in"),
        trace.ms
    );
    for (n, round) in trace.rounds.iter().enumerate() {
        body.push_str(&format!(
            "<h2>{} {}: <code>{}</code>{}{}</h2>\n{}<table>\n<tr><th>{}</th><th>{}</th><th>ms</th><th>{}</th></tr>\n",
            pick(lang, "Rodada", "Round"),
            n + 1,
            escape_html(&round.ibi),
            if round.verblist.is_empty() { String::new() } else { format!(" <code>{}</code>", escape_html(&round.verblist)) },
            if round.remembered { pick(lang, " (Arquivo lembrado)", " (remembered Archive)") } else { "" },
            round.why.as_deref().map(|why| format!("<p>{} {}</p>\n", pick(lang, "Pedida porque", "Asked because"), escape_html(why))).unwrap_or_default(),
            pick(lang, "Arquivo", "Archive"),
            pick(lang, "resultado", "result"),
            pick(lang, "resposta", "answer"),
        ));
        for a in &round.asked {
            let pairs: String = a
                .pairs
                .iter()
                .map(|(n, v)| format!("{} {}\n", escape_html(n), escape_html(v)))
                .collect();
            body.push_str(&format!(
                "<tr><td>{}<br><code>{}</code></td><td>{}{}</td><td>{:.1}</td><td><pre>{pairs}</pre></td></tr>\n",
                escape_html(&a.address),
                escape_html(&a.archive),
                escape_html(a.result.as_str()),
                a.detail.as_deref().map(|d| format!(": {}", escape_html(d))).unwrap_or_default(),
                a.ms
            ));
        }
        body.push_str("</table>\n");
    }
    let choice = match &trace.outcome {
        Outcome::Found(f) => format!(
            "{} <a href=\"{}\">{}</a> ({})",
            pick(lang, "Escolhida:", "Chosen:"),
            escape_html(&f.url),
            escape_html(&f.url),
            escape_html(&f.address)
        ),
        other => format!(
            "{} {}",
            pick(lang, "Resultado:", "Outcome:"),
            escape_html(&serde_json::to_string(other).unwrap_or_default())
        ),
    };
    body.push_str(&format!("<p>{choice}</p>\n"));
    if !trace.conflicts.is_empty() {
        body.push_str(&format!(
            "<h2>{}</h2>\n<ul>\n",
            pick(lang, "Conflitos", "Conflicts")
        ));
        for c in &trace.conflicts {
            let holder = match &c.holder {
                Some(h) => format!(
                    "{} <code>{}</code>, {}",
                    pick(lang, "lembrado em", "remembered at"),
                    escape_html(h),
                    pick(lang, "que o mantém", "which keeps it")
                ),
                None => pick(
                    lang,
                    "como outro Arquivo: nenhum é lembrado",
                    "as another Archive does: none is remembered",
                )
                .to_string(),
            };
            body.push_str(&format!(
                "<li><code>{}</code> {} <code>{}</code>; {holder}</li>\n",
                escape_html(&c.claimant),
                pick(lang, "afirma ter o original de", "claims the original of"),
                escape_html(&c.ibi),
            ));
        }
        body.push_str("</ul>\n");
    }
    html(
        200,
        lang,
        pick(lang, "Inspeção da resolução", "Resolution inspected"),
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Conflict;
    use crate::resolve::{AskResult, Asked, Found, Round, SaidState};

    /// The home page counts its Archives in the reader's language, one in the singular,
    /// and is titled in it.
    #[test]
    fn the_home_page_counts_its_archives_in_the_readers_language() {
        let ibi = Ibi::parse("J8LNKB5R7W/3FUQHC5").unwrap();
        let count = |lang, n| home(lang, "http://r.example", &ibi, n).body;
        assert!(count(PageLang::En, 0).contains("<p>0 Archives included. "));
        assert!(count(PageLang::En, 1).contains("<p>1 Archive included. "));
        assert!(count(PageLang::En, 2).contains("<p>2 Archives included. "));
        assert!(count(PageLang::Pt, 0).contains("<p>0 Arquivos incluídos. "));
        assert!(count(PageLang::Pt, 1).contains("<p>1 Arquivo incluído. "));
        assert!(count(PageLang::Pt, 2).contains("<p>2 Arquivos incluídos. "));
        assert!(count(PageLang::Pt, 1).contains(
            "<title>Resolvedor de IBI</title></head>\n<body>\n<h1>Resolvedor de IBI</h1>"
        ));
        assert!(count(PageLang::En, 1)
            .contains("<title>IBI resolver</title></head>\n<body>\n<h1>IBI resolver</h1>"));
    }

    #[test]
    fn what_the_reader_asked_for_is_written_as_text() {
        let page = bad_request(PageLang::En, "/<b>&\"'x", "it's <wrong>");
        assert_eq!(page.status, 400);
        assert_eq!(
            page.body,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Invalid persistent URL</title></head>\n<body>\n<h1>Invalid persistent URL</h1>\n<p>The address asked for is not a persistent URL:</p>\n<p><code>/&lt;b&gt;&amp;&quot;&#39;x</code></p>\n<p>it&#39;s &lt;wrong&gt;</p>\n</body>\n</html>\n"
        );
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
            14 => Outcome::Deleted { date: at(14, "") },
            15 => Outcome::NoTranslation {
                language: at(15, ""),
            },
            16 => Outcome::Suspicion {
                archives: vec!["a.b/c/2020/01.01.01.01".into(), at(16, "")],
            },
            17 => Outcome::Chain { detail: at(17, "") },
            _ => Outcome::Found(Found {
                url: at(8, "http://mtc-m16c.sid.inpe.br/col/x/doc/a.pdf"),
                archive: "a.b/c/2020/01.01.01.01".into(),
                address: at(9, "mtc-m16c.sid.inpe.br"),
                contenttype: "Data".into(),
                state: Some(SaidState::of("Original")),
                ibi: None,
                urlkey: None,
                language: None,
            }),
        };
        Trace {
            persistent_url: at(0, "http://urlib.net:80/8JMKD3MGP8W/35MME4E"),
            rounds: vec![Round {
                ibi: at(1, "8JMKD3MGP8W/35MME4E"),
                verblist: at(2, "GetMetadata"),
                remembered: false,
                why: Some(at(13, "a.b:80 (a.b/c/2020/01.01.01.01) named it")),
                asked: vec![Asked {
                    archive: at(3, "a.b/c/2020/01.01.01.01"),
                    address: at(4, "mtc-m16c.sid.inpe.br"),
                    result: AskResult::Answered,
                    detail: Some(at(5, "detail")),
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

    /// The slots of the inspection view: 0 to 13 shown as written, 14 to 17 inside the
    /// outcome shown as JSON.
    const INSPECTION_SLOTS: usize = 18;

    /// Every page with a value in it, in each language: its name, status, and how it is
    /// rendered with a value; `true` when the value is shown inside JSON.
    #[allow(clippy::type_complexity)]
    fn pages() -> Vec<(String, u16, bool, Box<dyn Fn(PageLang, &str) -> Page>)> {
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
        };
        let found = move |url: &str| Outcome::Found(copy(url, "mtc-m16c.sid.inpe.br"));
        let copies = move |url: &str, address: &str| {
            vec![
                copy("http://a.b/col/x/doc/a.pdf", "a.b"),
                copy(url, address),
            ]
        };
        let two = |v: &str| vec!["a.b/c/2020/01.01.01.01".to_string(), v.to_string()];
        let mut all: Vec<(String, u16, bool, Box<dyn Fn(PageLang, &str) -> Page>)> = vec![
            (
                "400, path".into(),
                400,
                false,
                Box::new(|l, v| bad_request(l, v, "why")),
            ),
            (
                "400, why".into(),
                400,
                false,
                Box::new(|l, v| bad_request(l, "/x", v)),
            ),
            (
                "302, url".into(),
                302,
                false,
                Box::new(move |l, v| outcome(l, &trace(found(v)), "8JMKD3MGP8W/35MME4E")),
            ),
            (
                "404 not found, IBI".into(),
                404,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NotFound { asked: 2 });
                    outcome(l, &t, v)
                }),
            ),
            (
                "503 unavailable, IBI".into(),
                503,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Unavailable {
                        archives: two("x.y/z/2020/01.01.01.02"),
                        asked: 3,
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "503 unavailable, Archive".into(),
                503,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Unavailable {
                        archives: two(v),
                        asked: 3,
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 no translation, IBI".into(),
                404,
                false,
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
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoTranslation { language: v.into() });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "410, IBI".into(),
                410,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Deleted {
                        date: "2020-05-06T07:08:09Z".into(),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "410, date".into(),
                410,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Deleted { date: v.into() });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "409, IBI".into(),
                409,
                false,
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
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Suspicion { archives: two(v) });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 no original, IBI".into(),
                404,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoOriginal {
                        copies: copies("http://c.d/col/x/doc/a.pdf", "c.d"),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "404 no original, copy's Archive".into(),
                404,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoOriginal {
                        copies: copies("http://c.d/col/x/doc/a.pdf", v),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 no original, copy's URL".into(),
                404,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::NoOriginal {
                        copies: copies(v, "c.d"),
                    });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "503 unverifiable, IBI".into(),
                503,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Unverifiable {
                        archives: two("x.y/z/2020/01.01.01.02"),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "503 unverifiable, Archive".into(),
                503,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Unverifiable { archives: two(v) });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
            (
                "404 endless related items, IBI".into(),
                404,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Chain {
                        detail: "a loop".into(),
                    });
                    outcome(l, &t, v)
                }),
            ),
            (
                "404 endless related items, detail".into(),
                404,
                false,
                Box::new(move |l, v| {
                    let t = trace(Outcome::Chain { detail: v.into() });
                    outcome(l, &t, "8JMKD3MGP8W/35MME4E")
                }),
            ),
        ];
        for slot in 0..INSPECTION_SLOTS {
            all.push((
                format!("inspection, slot {slot}"),
                200,
                slot >= 14,
                Box::new(move |l, v| inspection(l, &inspected(slot, v), false)),
            ));
        }
        all
    }

    /// Each page rendered with each hostile value is, byte for byte, the page rendered
    /// with a plain value where the hostile one stands escaped by `escape_html` (inside
    /// JSON: its JSON string escaped); no `<`, `>`, `"` or `'` of a value is ever raw.
    #[test]
    fn hostile_values_are_escaped_byte_for_byte_on_every_page() {
        let mut checked = 0;
        for (name, status, in_json, render) in pages() {
            for lang in [PageLang::En, PageLang::Pt] {
                let plain = render(lang, MARK);
                assert_eq!(plain.status, status, "{name}");
                assert_eq!(plain.content_type, "text/html; charset=utf-8", "{name}");
                assert!(plain.body.contains(MARK), "{name}: the value is not shown");
                for value in HOSTILE {
                    let shown = if in_json {
                        let json = serde_json::to_string(value).unwrap();
                        json[1..json.len() - 1].to_string()
                    } else {
                        value.to_string()
                    };
                    let escaped = escape_html(&shown);
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
        // 19 outcome and 400 pages and 18 places of the inspection view, in 2 languages.
        assert_eq!(checked, (19 + INSPECTION_SLOTS) * 2 * HOSTILE.len());
        // The JSON inspection view gives back each value as it was.
        for slot in 0..INSPECTION_SLOTS {
            for value in HOSTILE {
                let page = inspection(PageLang::En, &inspected(slot, value), true);
                assert_eq!(page.content_type, "application/json");
                let json: serde_json::Value = serde_json::from_str(&page.body).unwrap();
                let strings = strings_of(&json);
                assert!(strings.contains(&value.to_string()), "{slot}: {value:?}");
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
