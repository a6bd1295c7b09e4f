//! The reader's pages of a running `ibi-resolver serve`, in Portuguese and in English:
//! the home page's example (an item this resolver has resolved, at an Archive still
//! included, or none), the inspection view's outcome said in words, and the persistent
//! URL spelt as `publicurl` is, without the default port.

use std::path::Path;

use common::peer::{answer_200, archive, Peer};
use common::resolver::{
    get, include_peer, inclusion_request, Resolver, KEY, RESOLVER_IBI, SAMPLE_SERVICE,
};
use common::{free_port, http_get, http_raw};
use ibi_resolver::pages::STYLE;

/// The public URL of the resolvers here: http on the default port, written without it.
const PUBLIC: &str = "http://resolver.example";

/// An item the Archive of [`holding`] holds, and one it says was deleted.
const HELD: &str = "8JMKD3MGP8W/35MMLL8";
const DELETED: &str = "urlib.net/www/2021/01.01.06.01";

/// A resolver at [`PUBLIC`] (listening on a free loopback port) whose Archives are on
/// loopback.
fn resolver(dir: &Path) -> Resolver {
    let port = free_port();
    let config = dir.join("resolver.toml");
    std::fs::write(
        &config,
        format!(
            "serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"{PUBLIC}\"\nlisten = \"127.0.0.1:{port}\"\ndatabase = \"registry.sqlite\"\n[archives]\ntimeout = \"5s\"\nnetworks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    Resolver::run(config, port)
}

/// An Archive that holds [`HELD`], says [`DELETED`] was deleted on 2021-01-02, and knows
/// nothing else.
fn holding() -> Peer {
    archive(|ibi, s| match ibi {
        HELD => answer_200(s, b"url http://127.0.0.1/held.pdf\r\nstate Original\r\n"),
        DELETED => answer_200(s, b"state Deleted\r\ntimestamp 2021-01-02T03:04:05Z\r\n"),
        _ => answer_200(s, b""),
    })
}

fn page(r: &Resolver, target: &str, accept_language: &str) -> String {
    let a = get(&format!("{}{target}", r.base()), accept_language);
    a.text()
}

#[test]
fn the_home_page_shows_an_item_resolved_here_or_no_example() {
    let dir = tempfile::tempdir().unwrap();
    let r = resolver(dir.path());
    let home = |lang| page(&r, "/", lang);
    let intro_en = "<p>This is an IBI resolver: add an IBI to this address, <code>http://resolver.example/</code>, to reach the item; add <code>?noredirect</code> to see the resolution without following it.</p>\n";
    let intro_pt = "<p>Este é um resolvedor de IBI: acrescente um IBI a este endereço, <code>http://resolver.example/</code>, para chegar ao item; acrescente <code>?noredirect</code> para ver a resolução sem segui-la.</p>\n";
    let form_en = "<form action=\"/\" method=\"get\">\n<label for=\"ibi\">IBI or persistent URL</label>\n<input id=\"ibi\" name=\"ibi\" type=\"text\" value=\"\" required autocapitalize=\"off\" spellcheck=\"false\">\n<button type=\"submit\">Resolve</button>\n</form>\n";
    let form_pt = "<form action=\"/\" method=\"get\">\n<label for=\"ibi\">IBI ou URL persistente</label>\n<input id=\"ibi\" name=\"ibi\" type=\"text\" value=\"\" required autocapitalize=\"off\" spellcheck=\"false\">\n<button type=\"submit\">Resolver</button>\n</form>\n";
    let head = |lang: &str, title: &str| {
        format!("<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{title}</title><style>{STYLE}</style></head>\n<body>\n<main>\n<h1>{title}</h1>\n")
    };
    // Nothing resolved yet, no Archive: no example.
    assert_eq!(
        home("en"),
        format!("{}{intro_en}{form_en}<p>No Archive included. Resolver service: <code>http://resolver.example/J8LNKB5R7W/3FUQHC5</code>.</p>\n</main>\n</body>\n</html>\n", head("en", "IBI resolver"))
    );
    assert_eq!(
        home("pt-BR"),
        format!("{}{intro_pt}{form_pt}<p>Nenhum Arquivo incluído. Serviço do resolvedor: <code>http://resolver.example/J8LNKB5R7W/3FUQHC5</code>.</p>\n</main>\n</body>\n</html>\n", head("pt-BR", "Resolvedor de IBI"))
    );
    // An Archive included, nothing resolved: still none (no IBI it does not hold).
    let peer = holding();
    include_peer(&r, &peer, SAMPLE_SERVICE);
    assert!(!home("en").contains("example:"), "{}", home("en"));
    assert!(home("en").contains("<p>1 Archive included. "));
    // An item missed is no example; an item resolved is.
    assert_eq!(
        get(&format!("{}/8JMKD3MGP8W/35MME4E", r.base()), "").status,
        404
    );
    assert!(!home("en").contains("example:"), "{}", home("en"));
    let found = get(&format!("{}/{HELD}", r.base()), "");
    assert_eq!(found.status, 302, "{}", r.log());
    assert_eq!(
        home("en"),
        format!("{}{intro_en}{form_en}<p>For example: <a href=\"http://resolver.example/8JMKD3MGP8W/35MMLL8\">http://resolver.example/8JMKD3MGP8W/35MMLL8</a></p>\n<p>1 Archive included. Resolver service: <code>http://resolver.example/J8LNKB5R7W/3FUQHC5</code>.</p>\n</main>\n</body>\n</html>\n", head("en", "IBI resolver"))
    );
    assert!(home("pt-BR").contains("<p>Por exemplo: <a href=\"http://resolver.example/8JMKD3MGP8W/35MMLL8\">http://resolver.example/8JMKD3MGP8W/35MMLL8</a></p>\n<p>1 Arquivo incluído. "));
    // Its Archive excluded: no example again.
    let exclusion = inclusion_request(&r, &peer.addr.to_string(), SAMPLE_SERVICE, KEY)
        .replace("inclusionRequest", "exclusionRequest");
    assert_eq!(
        http_get(&exclusion).text(),
        "status.archive excluded\r\n",
        "{}",
        r.log()
    );
    assert!(!home("en").contains("example:"), "{}", home("en"));
    assert!(home("en").contains("<p>No Archive included. "));
}

/// The inspection view of a deleted item: the outcome in words in the reader's language
/// (the 410 page's title and text), each Archive's result in words, the persistent URL
/// spelt as `publicurl`; the JSON view as it was.
#[test]
fn the_inspection_view_says_the_outcome_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let r = resolver(dir.path());
    let peer = holding();
    include_peer(&r, &peer, SAMPLE_SERVICE);
    let target = format!("/{DELETED}?noredirect");
    let en = page(&r, &target, "en");
    let pt = page(&r, &target, "pt-BR");
    for (page, expected) in [
        (
            &en,
            [
                "<p><code>http://resolver.example/urlib.net/www/2021/01.01.06.01</code> — resolved in ",
                "<tr><th>Archive</th><th>result</th><th>ms</th><th>answer</th></tr>\n",
                "</code></td><td>answered</td><td>",
                "<h2>Outcome: Item removed</h2>\n<p>The item <code>urlib.net/www/2021/01.01.06.01</code> was removed on 2021-01-02T03:04:05Z.</p>\n</main>\n</body>",
            ],
        ),
        (
            &pt,
            [
                "<p><code>http://resolver.example/urlib.net/www/2021/01.01.06.01</code> — resolvida em ",
                "<tr><th>Arquivo</th><th>resultado</th><th>ms</th><th>resposta</th></tr>\n",
                "</code></td><td>respondeu</td><td>",
                "<h2>Resultado: Item removido</h2>\n<p>O item <code>urlib.net/www/2021/01.01.06.01</code> foi removido em 2021-01-02T03:04:05Z.</p>\n</main>\n</body>",
            ],
        ),
    ] {
        for e in expected {
            assert!(page.contains(e), "{e:?} not in\n{page}");
        }
        assert!(!page.contains(":80/"), "{page}");
        assert!(!page.contains("{\""), "{page}");
    }
    // An Archive that knows nothing: "empty", in words.
    let missed = "/8JMKD3MGP8W/35MME4E?noredirect";
    assert!(page(&r, missed, "en").contains("</code></td><td>empty</td><td>"));
    let pt = page(&r, missed, "pt-BR");
    assert!(
        pt.contains("</code></td><td>resposta vazia</td><td>"),
        "{pt}"
    );
    assert!(pt.contains("<h2>Resultado: Item não encontrado</h2>\n<p>Nenhum Arquivo conhece o IBI <code>8JMKD3MGP8W/35MME4E</code>.</p>\n</main>\n</body>"), "{pt}");
    // JSON: as it was, url.persistent with its port as sent to Archives.
    let authority = format!("127.0.0.1:{}", r.port);
    let json = http_raw(
        &authority,
        format!("GET {target} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json\r\nConnection: close\r\n\r\n").as_bytes(),
        false,
    );
    let json: serde_json::Value = serde_json::from_str(&json.text()).unwrap();
    assert_eq!(
        json["persistent_url"],
        "http://resolver.example:80/urlib.net/www/2021/01.01.06.01"
    );
    assert_eq!(
        json["outcome"],
        serde_json::json!({"outcome": "deleted", "date": "2021-01-02T03:04:05Z"})
    );
    assert_eq!(json["rounds"][0]["asked"][0]["result"], "answered");
}

/// The 400 page says why the path is no persistent URL in the reader's language, and the
/// 414 page how long the path is.
#[test]
fn the_400_page_says_why_in_the_readers_language() {
    let dir = tempfile::tempdir().unwrap();
    let r = resolver(dir.path());
    let refused = |target: &str, lang: &str| {
        let a = get(&format!("{}{target}", r.base()), lang);
        (a.status, a.text())
    };
    let (status, en) = refused("/x", "en");
    assert_eq!(status, 400);
    assert!(en.ends_with("<p>The address asked for is not a persistent URL:</p>\n<p><code>/x</code></p>\n<p>No IBI at the start of the path: &quot;x&quot; is one segment; an IBIp has two, a uniform repository name four.</p>\n</main>\n</body>\n</html>\n"), "{en}");
    let (status, pt) = refused("/x", "pt-BR");
    assert_eq!(status, 400);
    assert!(pt.ends_with("<p>O endereço pedido não é uma URL persistente:</p>\n<p><code>/x</code></p>\n<p>Nenhum IBI no início do caminho: &quot;x&quot; é um só segmento; um IBIp tem dois, um nome uniforme de repositório, quatro.</p>\n</main>\n</body>\n</html>\n"), "{pt}");
    let (status, pt) = refused("/8JMKD3MGP8W/35MME4E!(x)", "pt-BR");
    assert_eq!(status, 400);
    assert!(
        pt.contains("<p>Modificador &quot;!(x)&quot;: ! (última edição) não tem parâmetro.</p>\n"),
        "{pt}"
    );
    let (status, pt) = refused(
        "/8JMKD3MGP8W/35MME4E?ibiurl.requireditemstatus=Copy",
        "pt-BR",
    );
    assert_eq!(status, 400);
    assert!(
        pt.contains(
            "<p>ibiurl.requireditemstatus é &quot;Copy&quot;; o seu único valor é Original.</p>\n"
        ),
        "{pt}"
    );
    let (_, pt) = refused("/8JMKD3MGP8W/35MME4E+(xx)", "pt-BR");
    assert!(
        pt.contains(
            "<p>Modificador &quot;+(xx)&quot;: xx não é um código de idioma da ISO 639-1.</p>\n"
        ),
        "{pt}"
    );
    let (_, pt) = refused("/8JMKD3MGP8W/35MME4E+(pt-XX)", "pt-BR");
    assert!(pt.contains("<p>Modificador &quot;+(pt-XX)&quot;: XX não é um código de país da ISO 3166-1 alfa-2.</p>\n"), "{pt}");
    let (_, en) = refused(
        "/8JMKD3MGP8W/35MME4E?ibiurl.verblist=GetTranslation(xx)",
        "en",
    );
    assert!(en.contains("<p>ibiurl.verblist: in &quot;GetTranslation(xx)&quot;, xx is not a language code of ISO 639-1.</p>\n"), "{en}");
    let long = format!("/{}", "a".repeat(9000));
    let (status, pt) = refused(&long, "pt-BR");
    assert_eq!(status, 414);
    assert!(
        pt.contains("<p>O caminho e a consulta têm 9001 bytes; no máximo 8192 são lidos.</p>\n"),
        "{pt}"
    );
    let (_, en) = refused(&long, "en");
    assert!(
        en.contains("<p>The path and query are 9001 bytes long; at most 8192 are read.</p>\n"),
        "{en}"
    );
}

/// The home page's form: `GET /?ibi=X` sends the reader to the persistent URL of X on
/// this resolver (303, always under `publicurl`), X trimmed, as a path or as a persistent
/// URL of this resolver; anything else is a 400 page with the form again, X escaped.
#[test]
fn the_home_page_form_sends_to_the_persistent_url() {
    let dir = tempfile::tempdir().unwrap();
    let r = resolver(dir.path());
    let form = |value: &str, lang: &str| get(&format!("{}/?ibi={value}", r.base()), lang);
    for (value, location) in [
        ("8JMKD3MGP8W%2F35MME4E", "http://resolver.example/8JMKD3MGP8W/35MME4E"),
        ("8JMKD3MGP8W/35MME4E", "http://resolver.example/8JMKD3MGP8W/35MME4E"),
        ("++8JMKD3MGP8W%2F35MME4E%09+", "http://resolver.example/8JMKD3MGP8W/35MME4E"),
        ("8JMKD3MGP8W%2F35MME4E%2B%28pt-BR%29", "http://resolver.example/8JMKD3MGP8W/35MME4E+(pt-BR)"),
        ("8JMKD3MGP8W%2F35MME4E%21%3A", "http://resolver.example/8JMKD3MGP8W/35MME4E!:"),
        // A persistent URL of this resolver, pasted.
        ("http%3A%2F%2Fresolver.example%2F8JMKD3MGP8W%2F35MME4E", "http://resolver.example/8JMKD3MGP8W/35MME4E"),
        ("http%3A%2F%2Fresolver.example%3A80%2F8JMKD3MGP8W%2F35MME4E%21", "http://resolver.example/8JMKD3MGP8W/35MME4E!"),
        // A file path, its space encoded; the query as typed: the resolver's pairs, the
        // inspection view the home page tells of, the item's own pairs.
        ("sid.inpe.br%2Fmtc-m18%4080%2F2009%2F07.21.13.23%2Fdoc%2FCCSDS+643.0-B-1.pdf", "http://resolver.example/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf"),
        ("8JMKD3MGP8W%2F35MME4E%3Fibiurl.verblist%3DGetMetadata%26x%3D1", "http://resolver.example/8JMKD3MGP8W/35MME4E?ibiurl.verblist=GetMetadata&x=1"),
        ("8JMKD3MGP8W%2F35MME4E%3Fnoredirect", "http://resolver.example/8JMKD3MGP8W/35MME4E?noredirect"),
        ("http%3A%2F%2Fresolver.example%2F8JMKD3MGP8W%2F35MME4E%3Fnoredirect", "http://resolver.example/8JMKD3MGP8W/35MME4E?noredirect"),
    ] {
        let a = form(value, "");
        assert_eq!(
            (a.status, a.header("location")),
            (303, Some(location)),
            "{value}: {}",
            a.text()
        );
        assert_eq!(
            a.header("content-security-policy"),
            Some("default-src 'none'; style-src 'unsafe-inline'")
        );
        let shown = location.replace('&', "&amp;");
        assert!(
            a.text().contains(&format!("<p><a href=\"{shown}\">{shown}</a></p>\n")),
            "{}",
            a.text()
        );
    }
    // Nothing typed, or what is no IBI: 400, the form again holding it, in the reader's
    // language; never a redirect elsewhere.
    for (value, lang, said) in [
        ("", "en", "<p>No IBI was typed.</p>\n"),
        ("+++", "pt-BR", "<p>Nenhum IBI foi digitado.</p>\n"),
        ("x", "en", "<p>What was typed is not an IBI:</p>\n<p><code>x</code></p>\n<p>No IBI at the start of the path: &quot;x&quot; is one segment; an IBIp has two, a uniform repository name four.</p>\n"),
        ("%2F%2Fevil.example%2F8JMKD3MGP8W%2F35MME4E", "en", "<p><code>//evil.example/8JMKD3MGP8W/35MME4E</code></p>\n"),
        ("https%3A%2F%2Fevil.example%2F8JMKD3MGP8W%2F35MME4E", "pt-BR", "<p>O que foi digitado não é um IBI:</p>\n<p><code>https://evil.example/8JMKD3MGP8W/35MME4E</code></p>\n"),
        ("%5C%5Cevil.example%2F8JMKD3MGP8W%2F35MME4E", "en", "<p><code>\\\\evil.example/8JMKD3MGP8W/35MME4E</code></p>\n"),
        ("%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E", "en", "<p><code>&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code></p>\n"),
    ] {
        let a = form(value, lang);
        let page = a.text();
        assert_eq!((a.status, a.header("location")), (400, None), "{value}: {page}");
        assert!(page.contains(said), "{value}: {page}");
        assert!(page.contains("<form action=\"/\" method=\"get\">\n"), "{page}");
        assert!(!page.contains("<script>"), "{page}");
        assert!(page.starts_with(&format!("<!DOCTYPE html>\n<html lang=\"{lang}\">", lang = if lang.is_empty() { "en" } else { lang })), "{page}");
    }
    let a = form("%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E", "en");
    assert!(
        a.text()
            .contains(" value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\" "),
        "{}",
        a.text()
    );
    // Without an `ibi` pair, the home page.
    let a = form("", "").status;
    assert_eq!(a, 400);
    let home = get(&format!("{}/?x=1", r.base()), "");
    assert_eq!(home.status, 200);
    assert!(home.text().contains("<h1>IBI resolver</h1>"));
}
