//! The face of the Archive's pages (landing pages, see `crate::filelist`, and the
//! metadata page `new` writes): the stylesheet they share, the header (the repository's
//! name, its institution and logo, archive.toml's `[oai] repositoryname` and `[site]`) and
//! the footer (its contact), and the names a reader reads in place of codes and URLs —
//! licences and languages, in Portuguese and English.

use crate::config::{Config, Contact, Logo};
use ::ibi::escape::{is_http_url, link_target, uri_reference};
use ::ibi::markup::escape_html;
use ::ibi::negotiate::PageLang;

/// The pages' one style: readable on a phone, contrast above 7:1 for text and links.
pub const STYLE: &str =
    "body{margin:0;font:1rem/1.5 system-ui,sans-serif;color:#1b1b1b;background:#fff}\
header,footer{background:#0b3d91;color:#fff}\
header div,footer div{max-width:50rem;margin:0 auto;padding:.6rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem}\
header img{max-height:3rem;max-width:10rem}\
header .repo{font-size:1.15rem;font-weight:600}\
footer a,header a{color:#fff}\
main{max-width:50rem;margin:0 auto;padding:1rem}\
h1{font-size:1.6rem;line-height:1.25;margin:.5rem 0 1rem}\
h2{font-size:1.2rem;margin:1.5rem 0 .5rem}\
a{color:#0b3d91}\
.cite{background:#f2f2f2;border-left:4px solid #555;padding:.75rem;overflow-wrap:anywhere}\
.gone{background:#fbe9e7;color:#5c1a10;border-left:4px solid #8c2a1c;padding:.75rem}\
.abstract{white-space:pre-line}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}\
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}\
table{border-collapse:collapse;width:100%}\
th,td{text-align:left;vertical-align:top;padding:.3rem .5rem;border-bottom:1px solid #999}\
tbody th{font-weight:normal;overflow-wrap:anywhere}\
td{overflow-wrap:anywhere}\
.record th{font-weight:600;overflow-wrap:normal;width:9rem}\
ul.export{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.5rem 1rem}\
@media (max-width:32rem){dl{grid-template-columns:1fr}dd{margin-bottom:.5rem}}";

/// The name of the repository: `[oai] repositoryname`, else `IBI Archive <archiveaddress>`
/// (OAI-PMH's Identify says the same).
pub fn repository_name(config: &Config) -> String {
    config
        .oai
        .repositoryname
        .clone()
        .unwrap_or_else(|| format!("IBI Archive {}", config.archiveaddress))
}

/// The URL of the logo: `[site] logo` as written when it is a URL; when it names a file,
/// that file of the service item's doc/, whose rep is `service_rep` (`None`: the service
/// item is not found, and no logo is shown).
/// A file's logo is shown only when its URL can be a source of the page's
/// Content-Security-Policy ([`csp_source`]): `baseurl` may hold what a policy cannot
/// (`check` warns of it).
pub fn logo_url(config: &Config, service_rep: Option<&str>) -> Option<String> {
    match config.site.logo.as_ref()? {
        Logo::Url(u) => Some(u.clone()),
        Logo::File(f) => {
            let url = logo_file_url(config, service_rep?, f);
            csp_source(&url).map(|_| url)
        }
    }
}

/// The URL of the logo file `name` of the doc/ of the service item `service_rep`.
pub fn logo_file_url(config: &Config, service_rep: &str, name: &str) -> String {
    let mut url = config.baseurl.clone();
    crate::layout::push_doc_url_path(&mut url, service_rep, name.as_bytes());
    url
}

/// `url` as a source expression of a Content-Security-Policy (CSP 3, `host-source`):
/// `http(s)://`, a host of letters, digits, `-` and `.` (a `*.` label, an IPv6 literal
/// in brackets) with a port, then the path as a link target (`link_target`) with `'`
/// %-escaped too (a policy's separators and its quote; a path is matched once decoded,
/// so the escaped form names the same file). `None` when the scheme or the host holds
/// anything else (a `;` there would end the directive, and no escape is allowed there):
/// that URL cannot be named.
pub fn csp_source(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host_char = |c: char| c.is_ascii_alphanumeric() || "-.:[]".contains(c);
    if authority.is_empty() || !authority.chars().all(host_char) {
        return None;
    }
    let path = link_target(path).replace('\'', "%27");
    Some(format!("{scheme}://{authority}{path}"))
}

/// The Content-Security-Policy of a page showing the logo at `logo`: no script, no
/// external resource but that image, the one inline style. A logo whose URL cannot be a
/// source ([`csp_source`]) gets none (and `logo_url` gives no such file's URL).
pub fn csp(logo: Option<&str>) -> String {
    match logo.and_then(csp_source) {
        Some(source) => {
            format!("default-src 'none'; style-src 'unsafe-inline'; img-src {source}")
        }
        None => "default-src 'none'; style-src 'unsafe-inline'".into(),
    }
}

/// The page's header: the logo (decorative: the names are beside it), the repository's
/// name and its institution.
pub fn header(config: &Config, logo: Option<&str>) -> String {
    let mut b = String::from("<header><div>");
    if let Some(l) = logo {
        b.push_str(&format!(
            "<img src=\"{}\" alt=\"\">",
            escape_html(&uri_reference(l))
        ));
    }
    b.push_str(&format!(
        "<span class=\"repo\">{}</span>",
        escape_html(&repository_name(config))
    ));
    if let Some(i) = &config.site.institution {
        b.push_str(&format!("<span>{}</span>", escape_html(i)));
    }
    b.push_str("</div></header>\n");
    b
}

/// The page's footer: the repository and its contact.
pub fn footer(config: &Config, lang: PageLang) -> String {
    let mut b = String::from("<footer><div>");
    let name = config
        .site
        .institution
        .clone()
        .unwrap_or_else(|| repository_name(config));
    b.push_str(&format!("<span>{}</span>", escape_html(&name)));
    if let Some(c) = &config.site.contact {
        let (href, shown) = match c {
            Contact::Email(e) => (format!("mailto:{e}"), e.as_str()),
            Contact::Url(u) => (u.clone(), u.as_str()),
        };
        b.push_str(&format!(
            "<span>{}: <a href=\"{}\">{}</a></span>",
            match lang {
                PageLang::En => "Contact",
                PageLang::Pt => "Contato",
            },
            escape_html(&uri_reference(&href)),
            escape_html(shown)
        ));
    }
    b.push_str("</div></footer>\n");
    b
}

/// The names of the Dublin Core elements (`::ibi::dc::DC_ELEMENTS`, in its order) in
/// English and in Portuguese: the labels of the landing page's "About this item" and of
/// the metadata page's table, one table for both.
const DC_LABELS: [(&str, &str, &str); 15] = [
    ("title", "Title", "Título"),
    ("creator", "Creators", "Autoria"),
    ("subject", "Subject", "Assunto"),
    ("description", "Abstract", "Resumo"),
    ("publisher", "Publisher", "Editora"),
    ("contributor", "Contributors", "Colaboração"),
    ("date", "Date", "Data"),
    ("type", "Type", "Tipo"),
    ("format", "Format", "Formato"),
    ("identifier", "Identifier", "Identificador"),
    ("source", "Source", "Fonte"),
    ("language", "Language", "Idioma"),
    ("relation", "Relation", "Relação"),
    ("coverage", "Coverage", "Cobertura"),
    ("rights", "Rights", "Direitos"),
];

/// The name of the Dublin Core element `element` in `lang`; `None` for no element.
pub fn dc_label(element: &str, lang: PageLang) -> Option<&'static str> {
    DC_LABELS
        .iter()
        .find(|(e, _, _)| *e == element)
        .map(|&(_, en, pt)| match lang {
            PageLang::En => en,
            PageLang::Pt => pt,
        })
}

/// The name of the licence at `url`: the Creative Commons licences and public-domain
/// tools (any version, any jurisdiction port, with or without `deed…` or `legalcode`)
/// and the common software licences at their usual URLs; `None` for another URL, which
/// the page shows as a link.
pub fn license_name(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let rest = rest.trim_end_matches('/');
    let parts: Vec<&str> = rest.split('/').collect();
    let version = |v: &str| v.chars().all(|c| c.is_ascii_digit() || c == '.') && !v.is_empty();
    match parts.as_slice() {
        ["creativecommons.org", "licenses", code, v, ..] if version(v) => {
            let code = code.to_ascii_lowercase();
            let known = ["by", "by-sa", "by-nd", "by-nc", "by-nc-sa", "by-nc-nd"];
            known
                .contains(&code.as_str())
                .then(|| format!("CC {} {v}", code.to_ascii_uppercase()))
        }
        ["creativecommons.org", "publicdomain", "zero", v, ..] if version(v) => {
            Some(format!("CC0 {v}"))
        }
        ["creativecommons.org", "publicdomain", "mark", v, ..] if version(v) => {
            Some(format!("Public Domain Mark {v}"))
        }
        ["opensource.org", "licenses", name, ..] | ["spdx.org", "licenses", name, ..] => {
            let name = name.trim_end_matches(".html").trim_end_matches(".php");
            spdx_name(name).map(str::to_string)
        }
        ["www.apache.org" | "apache.org", "licenses", "LICENSE-2.0" | "LICENSE-2.0.html" | "LICENSE-2.0.txt"] => {
            Some("Apache License 2.0".into())
        }
        ["gnu.org", "licenses", page] => {
            let page = page.trim_end_matches(".html").trim_end_matches(".en");
            let (family, v) = page.rsplit_once('-')?;
            let family = match family {
                "gpl" => "GNU General Public License",
                "lgpl" => "GNU Lesser General Public License",
                "agpl" => "GNU Affero General Public License",
                "fdl" => "GNU Free Documentation License",
                _ => return None,
            };
            version(v).then(|| format!("{family} {v}"))
        }
        ["opendatacommons.org", "licenses", code, ..] => match *code {
            "odbl" => Some("Open Database License (ODbL)".into()),
            "by" => Some("Open Data Commons Attribution License".into()),
            "pddl" => Some("Open Data Commons Public Domain Dedication and License".into()),
            _ => None,
        },
        _ => None,
    }
}

/// A `dc:rights` value on the page: a licence's URL linked by the licence's name
/// ([`license_name`]), another URL linked as itself, text as it is.
pub fn rights_html(value: &str) -> String {
    let v = value.trim();
    if !is_http_url(v) {
        return escape_html(v);
    }
    let href = escape_html(&uri_reference(v));
    match license_name(v) {
        Some(name) => format!(
            "<a rel=\"license\" href=\"{href}\">{}</a>",
            escape_html(&name)
        ),
        None => format!("<a rel=\"license\" href=\"{href}\">{}</a>", escape_html(v)),
    }
}

/// The licences of opensource.org and spdx.org a reader meets most, by their SPDX id.
fn spdx_name(id: &str) -> Option<&'static str> {
    Some(match id.to_ascii_lowercase().as_str() {
        "mit" => "MIT License",
        "apache-2.0" => "Apache License 2.0",
        "bsd-2-clause" => "BSD 2-Clause License",
        "bsd-3-clause" => "BSD 3-Clause License",
        "gpl-2.0" => "GNU General Public License 2.0",
        "gpl-3.0" => "GNU General Public License 3.0",
        "lgpl-3.0" => "GNU Lesser General Public License 3.0",
        "agpl-3.0" => "GNU Affero General Public License 3.0",
        "mpl-2.0" => "Mozilla Public License 2.0",
        "cc-by-4.0" => "CC BY 4.0",
        "cc0-1.0" => "CC0 1.0",
        _ => return None,
    })
}

/// The name of the language `code` (a BCP 47 tag, `ll` or `ll-CC`, any case) in the
/// page's language: `português (Brasil)`, `English (United States)`; the code as written
/// for a language or a region this table does not hold.
pub fn language_name(code: &str, lang: PageLang) -> String {
    let code = code.trim();
    let mut parts = code.splitn(2, ['-', '_']);
    let language = parts.next().unwrap_or("").to_ascii_lowercase();
    let region = parts.next().map(str::to_ascii_uppercase);
    let named = |(en, pt): (&'static str, &'static str)| match lang {
        PageLang::Pt => pt,
        PageLang::En => en,
    };
    let Some(name) = LANGUAGES
        .iter()
        .find(|(codes, _)| codes.contains(&language.as_str()))
        .map(|(_, names)| named(*names))
    else {
        return code.to_string();
    };
    let Some(region) = region else {
        return name.to_string();
    };
    match REGIONS.iter().find(|(c, _)| *c == region) {
        Some((_, names)) => format!("{name} ({})", named(*names)),
        None => code.to_string(),
    }
}

/// The languages named by their codes (ISO 639-1, and 639-2's B and T codes), in English
/// and in Portuguese.
const LANGUAGES: [(&[&str], (&str, &str)); 15] = [
    (&["pt", "por"], ("Portuguese", "português")),
    (&["en", "eng"], ("English", "inglês")),
    (&["es", "spa"], ("Spanish", "espanhol")),
    (&["fr", "fra", "fre"], ("French", "francês")),
    (&["de", "deu", "ger"], ("German", "alemão")),
    (&["it", "ita"], ("Italian", "italiano")),
    (&["nl", "nld", "dut"], ("Dutch", "neerlandês")),
    (&["ru", "rus"], ("Russian", "russo")),
    (&["zh", "zho", "chi"], ("Chinese", "chinês")),
    (&["ja", "jpn"], ("Japanese", "japonês")),
    (&["ko", "kor"], ("Korean", "coreano")),
    (&["ar", "ara"], ("Arabic", "árabe")),
    (&["hi", "hin"], ("Hindi", "hindi")),
    (&["la", "lat"], ("Latin", "latim")),
    (&["gn", "grn"], ("Guarani", "guarani")),
];

/// The regions of a language tag (ISO 3166-1), in English and in Portuguese.
const REGIONS: [(&str, (&str, &str)); 10] = [
    ("BR", ("Brazil", "Brasil")),
    ("PT", ("Portugal", "Portugal")),
    ("US", ("United States", "Estados Unidos")),
    ("GB", ("United Kingdom", "Reino Unido")),
    ("ES", ("Spain", "Espanha")),
    ("MX", ("Mexico", "México")),
    ("AR", ("Argentina", "Argentina")),
    ("FR", ("France", "França")),
    ("CA", ("Canada", "Canadá")),
    ("DE", ("Germany", "Alemanha")),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element named, in DC_ELEMENTS's order, in two languages, differently.
    #[test]
    fn every_dublin_core_element_has_a_label_in_both_languages() {
        let elements: Vec<&str> = DC_LABELS.iter().map(|(e, _, _)| *e).collect();
        assert_eq!(elements, ::ibi::dc::DC_ELEMENTS);
        for (e, en, pt) in DC_LABELS {
            assert!(!en.is_empty() && !pt.is_empty() && en != pt, "{e}");
            assert_eq!(dc_label(e, PageLang::En), Some(en));
            assert_eq!(dc_label(e, PageLang::Pt), Some(pt));
        }
        assert_eq!(dc_label("titel", PageLang::En), None);
    }

    #[test]
    fn licences_by_name() {
        let cases = [
            (
                "https://creativecommons.org/licenses/by/4.0/",
                Some("CC BY 4.0"),
            ),
            (
                "http://creativecommons.org/licenses/by-nc-sa/3.0/br/",
                Some("CC BY-NC-SA 3.0"),
            ),
            (
                "https://creativecommons.org/licenses/by-nd/4.0/legalcode.pt",
                Some("CC BY-ND 4.0"),
            ),
            (
                "https://creativecommons.org/licenses/by/4.0/deed.pt_BR",
                Some("CC BY 4.0"),
            ),
            (
                "https://creativecommons.org/publicdomain/zero/1.0/",
                Some("CC0 1.0"),
            ),
            (
                "https://creativecommons.org/publicdomain/mark/1.0/",
                Some("Public Domain Mark 1.0"),
            ),
            ("https://opensource.org/licenses/MIT", Some("MIT License")),
            (
                "https://spdx.org/licenses/Apache-2.0.html",
                Some("Apache License 2.0"),
            ),
            (
                "https://www.apache.org/licenses/LICENSE-2.0",
                Some("Apache License 2.0"),
            ),
            (
                "https://www.gnu.org/licenses/gpl-3.0.html",
                Some("GNU General Public License 3.0"),
            ),
            (
                "https://www.gnu.org/licenses/fdl-1.3.en.html",
                Some("GNU Free Documentation License 1.3"),
            ),
            (
                "https://opendatacommons.org/licenses/odbl/1-0/",
                Some("Open Database License (ODbL)"),
            ),
            ("https://creativecommons.org/licenses/xyz/4.0/", None),
            ("https://creativecommons.org/licenses/by/", None),
            ("https://example.org/licence", None),
            ("ftp://creativecommons.org/licenses/by/4.0/", None),
        ];
        for (url, name) in cases {
            assert_eq!(license_name(url).as_deref(), name, "{url}");
        }
    }

    #[test]
    fn rights_by_name_linked() {
        assert_eq!(
            rights_html("https://creativecommons.org/licenses/by-sa/4.0/"),
            "<a rel=\"license\" href=\"https://creativecommons.org/licenses/by-sa/4.0/\">CC BY-SA 4.0</a>"
        );
        assert_eq!(
            rights_html(" https://example.org/terms?a=1&b=\"2\" "),
            "<a rel=\"license\" href=\"https://example.org/terms?a=1&amp;b=%222%22\">https://example.org/terms?a=1&amp;b=&quot;2&quot;</a>"
        );
        assert_eq!(
            rights_html("© INPE & <outros>"),
            "© INPE &amp; &lt;outros&gt;"
        );
    }

    #[test]
    fn languages_by_name_in_the_pages_language() {
        assert_eq!(language_name("pt-BR", PageLang::Pt), "português (Brasil)");
        assert_eq!(language_name("pt-br", PageLang::En), "Portuguese (Brazil)");
        assert_eq!(language_name("en", PageLang::Pt), "inglês");
        assert_eq!(
            language_name("EN-us", PageLang::En),
            "English (United States)"
        );
        assert_eq!(language_name("por", PageLang::En), "Portuguese");
        assert_eq!(language_name("tlh", PageLang::En), "tlh");
        assert_eq!(language_name("pt-AO", PageLang::En), "pt-AO");
    }

    fn config(site: &str) -> Config {
        Config::parse(&format!(
            "archiveaddress = \"a.example.org\"\narchiveserviceibi = \"sid.inpe.br/mtc-m18@80/2008/03.17.15.17\"\n{site}"
        ))
        .unwrap()
    }

    #[test]
    fn header_and_footer_without_site() {
        let c = config("");
        assert_eq!(
            header(&c, None),
            "<header><div><span class=\"repo\">IBI Archive a.example.org</span></div></header>\n"
        );
        assert_eq!(
            footer(&c, PageLang::En),
            "<footer><div><span>IBI Archive a.example.org</span></div></footer>\n"
        );
        assert_eq!(csp(None), "default-src 'none'; style-src 'unsafe-inline'");
    }

    #[test]
    fn header_and_footer_with_site() {
        let c = config(
            "[oai]\nrepositoryname = \"Biblioteca <Digital> & Co\"\n[site]\ninstitution = \"Instituto \\\"Nacional\\\"\"\ncontact = \"bib@example.org\"\nlogo = \"logo.png\"\n",
        );
        let logo = logo_url(&c, Some("sid.inpe.br/mtc-m18@80/2008/03.17.15.17"));
        assert_eq!(
            logo.as_deref(),
            Some("http://a.example.org/col/sid.inpe.br/mtc-m18@80/2008/03.17.15.17/doc/logo.png")
        );
        assert_eq!(logo_url(&c, None), None);
        assert_eq!(
            header(&c, logo.as_deref()),
            "<header><div><img src=\"http://a.example.org/col/sid.inpe.br/mtc-m18@80/2008/03.17.15.17/doc/logo.png\" alt=\"\"><span class=\"repo\">Biblioteca &lt;Digital&gt; &amp; Co</span><span>Instituto &quot;Nacional&quot;</span></div></header>\n"
        );
        assert_eq!(
            footer(&c, PageLang::Pt),
            "<footer><div><span>Instituto &quot;Nacional&quot;</span><span>Contato: <a href=\"mailto:bib@example.org\">bib@example.org</a></span></div></footer>\n"
        );
        assert_eq!(
            csp(logo.as_deref()),
            "default-src 'none'; style-src 'unsafe-inline'; img-src http://a.example.org/col/sid.inpe.br/mtc-m18@80/2008/03.17.15.17/doc/logo.png"
        );
        let u = config("[site]\ncontact = \"https://example.org/contact?x=1&y=2\"\nlogo = \"https://cdn.example.org/l.svg\"\n");
        assert_eq!(
            logo_url(&u, None).as_deref(),
            Some("https://cdn.example.org/l.svg")
        );
        assert_eq!(
            footer(&u, PageLang::En),
            "<footer><div><span>IBI Archive a.example.org</span><span>Contact: <a href=\"https://example.org/contact?x=1&amp;y=2\">https://example.org/contact?x=1&amp;y=2</a></span></div></footer>\n"
        );
    }

    /// A `baseurl` holding what a policy cannot (`;`, `,`, `'` are word bytes): the path's
    /// escaped, a host's leaves the logo out; never a policy the grammar cannot hold.
    #[test]
    fn a_logo_is_named_in_the_policy_only_as_a_source() {
        let rep = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
        let with = |baseurl: &str| {
            let c = config(&format!(
                "baseurl = \"{baseurl}\"\n[site]\nlogo = \"logo.png\"\n"
            ));
            let logo = logo_url(&c, Some(rep));
            (logo.clone(), csp(logo.as_deref()))
        };
        assert_eq!(
            with("http://a.example.org/x;y,z'w"),
            (
                Some(format!("http://a.example.org/x;y,z'w/col/{rep}/doc/logo.png")),
                format!("default-src 'none'; style-src 'unsafe-inline'; img-src http://a.example.org/x%3By%2Cz%27w/col/{rep}/doc/logo.png")
            )
        );
        for host in [
            "http://a.example.org;img-src",
            "http://u@a.example.org",
            "http://a,b.org",
        ] {
            assert_eq!(
                with(host),
                (
                    None,
                    "default-src 'none'; style-src 'unsafe-inline'".to_string()
                ),
                "{host}"
            );
        }
        assert_eq!(
            csp_source("https://[::1]:8080/l.png").as_deref(),
            Some("https://[::1]:8080/l.png")
        );
        assert_eq!(csp_source("ftp://a.org/l.png"), None);
        assert_eq!(csp_source("https:///l.png"), None);
    }

    #[test]
    fn site_settings_refused() {
        let refused = |site: &str| {
            Config::parse(&format!(
                "archiveaddress = \"a.example.org\"\narchiveserviceibi = \"sid.inpe.br/mtc-m18@80/2008/03.17.15.17\"\n[site]\n{site}"
            ))
            .unwrap_err()
        };
        assert_eq!(
            refused("institution = \"\""),
            "[site] institution must be one line of 1 to 200 characters"
        );
        assert_eq!(
            refused("contact = \"call us\""),
            "[site] contact is neither an e-mail address nor an http(s) URL: \"call us\""
        );
        assert_eq!(
            refused("logo = \"../secret.png\""),
            "[site] logo is neither an http(s) URL nor the name of a file of the service item's doc/ (letters, digits, '.', '_', '-'): \"../secret.png\""
        );
        assert_eq!(
            refused("logo = \"https://x.org/a;b.png\""),
            "[site] logo is neither an http(s) URL nor the name of a file of the service item's doc/ (letters, digits, '.', '_', '-'): \"https://x.org/a;b.png\""
        );
        assert!(refused("colour = \"red\"").contains("unknown field `colour`"));
    }
}
