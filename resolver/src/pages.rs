//! The pages a reader sees when a persistent URL is not followed: small HTML in Portuguese
//! or English, without script, and the inspection view (HTML, or JSON for
//! `Accept: application/json`).

use ibi_archive::markup::escape_html;

use crate::lang::PageLang;
use crate::resolve::{Outcome, Trace};

/// A page: status, content type and body.
pub struct Page {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

fn html(status: u16, lang: PageLang, title: &str, body: &str) -> Page {
    Page {
        status,
        content_type: "text/html; charset=utf-8",
        body: format!(
            "<!DOCTYPE html>\n<html lang=\"{}\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title></head>\n<body>\n<h1>{}</h1>\n{body}</body>\n</html>\n",
            lang.code(),
            escape_html(title),
            escape_html(title)
        ),
    }
}

fn pick<'a>(lang: PageLang, pt: &'a str, en: &'a str) -> &'a str {
    match lang {
        PageLang::Pt => pt,
        PageLang::En => en,
    }
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
    match &trace.outcome {
        Outcome::Found(f) => html(
            302,
            lang,
            pick(lang, "Encontrado", "Found"),
            &format!(
                "<p><a href=\"{}\">{}</a></p>\n",
                escape_html(&f.url),
                escape_html(&f.url)
            ),
        ),
        Outcome::NotFound { unanswered, asked } => {
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
            } else if *unanswered > 0 {
                body.push_str(&format!(
                    "<p>{unanswered} {} {asked} {}</p>\n",
                    pick(lang, "de", "of"),
                    pick(
                        lang,
                        "Arquivos não responderam; tente de novo mais tarde.",
                        "Archives did not answer; try again later."
                    )
                ));
            }
            html(
                404,
                lang,
                pick(lang, "Item não encontrado", "Item not found"),
                &body,
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
                .map(|a| format!("<li>{}</li>\n", escape_html(a)))
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
                    pick(lang, "; cópias em:", "; copies at:")
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
        Outcome::EditionChain { detail } => html(
            404,
            lang,
            pick(lang, "Edições sem fim", "Endless editions"),
            &format!(
                "<p>{} {ibi_html}: {}.</p>\n",
                pick(lang, "A cadeia de edições de", "The chain of editions of"),
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
        Outcome::Unverifiable { .. } => 503,
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
            "<h2>{} {}: <code>{}</code>{}{}</h2>\n<table>\n<tr><th>{}</th><th>{}</th><th>ms</th><th>{}</th></tr>\n",
            pick(lang, "Rodada", "Round"),
            n + 1,
            escape_html(&round.ibi),
            if round.verblist.is_empty() { String::new() } else { format!(" <code>{}</code>", escape_html(&round.verblist)) },
            if round.remembered { pick(lang, " (Arquivo lembrado)", " (remembered Archive)") } else { "" },
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

    #[test]
    fn what_the_reader_asked_for_is_written_as_text() {
        let page = bad_request(PageLang::En, "/<b>&\"'x", "it's <wrong>");
        assert_eq!(page.status, 400);
        assert_eq!(
            page.body,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Invalid persistent URL</title></head>\n<body>\n<h1>Invalid persistent URL</h1>\n<p>The address asked for is not a persistent URL:</p>\n<p><code>/&lt;b&gt;&amp;&quot;&#39;x</code></p>\n<p>it&#39;s &lt;wrong&gt;</p>\n</body>\n</html>\n"
        );
    }
}
