//! The reader's language preference (Accept-Language, RFC 9110 §12.5.4), kept to the
//! resolver (Table 8.6: never sent to Archives): which translation to choose for a bare
//! `+`, and whether pages are in Portuguese or English.

use ibi::relation::Lang;

/// At most this many bytes of the header, and this many languages, are read.
const MAX_HEADER: usize = 1024;
const MAX_LANGUAGES: usize = 32;

/// The languages of an Accept-Language header, most preferred first (by q-value, then in
/// the order written); `q=0` and tags that are not `ll[-CC…]` are left out.
pub fn preferences(header: Option<&str>) -> Vec<Lang> {
    let Some(header) = header else {
        return Vec::new();
    };
    let header = ibi::text::prefix(header, MAX_HEADER);
    let mut out: Vec<Lang> = Vec::new();
    for (tag, q) in accept_language::parse_with_quality(header) {
        if !(q > 0.0 && q <= 1.0) {
            continue;
        }
        if let Some(lang) = primary(&tag) {
            if !out.contains(&lang) {
                out.push(lang);
            }
        }
        if out.len() == MAX_LANGUAGES {
            break;
        }
    }
    out
}

/// `pt-BR` → pt-BR, `zh-Hant-TW` → zh, `*` → none.
fn primary(tag: &str) -> Option<Lang> {
    let mut parts = tag.split('-');
    let language = parts.next()?;
    if language.len() != 2 {
        return None;
    }
    match parts.next() {
        Some(c) if c.len() == 2 => Lang::parse(&format!("{language}-{c}")).ok(),
        _ => Lang::parse(language).ok(),
    }
}

/// How well a language suits the reader: the place of the first preference it answers,
/// and how closely: the tag itself, then the language alone (`pt` for `pt-BR`), then the
/// language with another country (`pt-PT` for `pt-BR` or `pt`). Lower is better; `None`:
/// none of the reader's languages. The best a language can be is [`Rank::BEST`], the
/// reader's first preference exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    preference: usize,
    closeness: u8,
}

impl Rank {
    pub const BEST: Rank = Rank {
        preference: 0,
        closeness: 0,
    };
}

/// `lang`'s [`Rank`] among the reader's preferences.
pub fn rank(prefs: &[Lang], lang: &Lang) -> Option<Rank> {
    prefs.iter().enumerate().find_map(|(preference, p)| {
        let closeness = if p == lang {
            0
        } else if !p.same_language(lang) {
            return None;
        } else if lang.country().is_none() {
            1
        } else {
            2
        };
        Some(Rank {
            preference,
            closeness,
        })
    })
}

/// The language of the resolver's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageLang {
    En,
    Pt,
}

impl PageLang {
    /// Portuguese when the reader prefers it to English, else English.
    pub fn of(prefs: &[Lang]) -> PageLang {
        for p in prefs {
            match p.to_string().get(..2) {
                Some("pt") => return PageLang::Pt,
                Some("en") => return PageLang::En,
                _ => {}
            }
        }
        PageLang::En
    }

    pub fn code(self) -> &'static str {
        match self {
            PageLang::En => "en",
            PageLang::Pt => "pt-BR",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langs(v: &[Lang]) -> Vec<String> {
        v.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn example_8_8_preference_in_order() {
        let p = preferences(Some("pt-br,fr;q=0.8,en;q=0.5,pt;q=0.3"));
        assert_eq!(langs(&p), ["pt-BR", "fr", "en", "pt"]);
        // q-values, not the order written, decide; q=0 and * are dropped.
        let p = preferences(Some("en;q=0.2, *;q=0.5, de;q=0, pt-BR"));
        assert_eq!(langs(&p), ["pt-BR", "en"]);
        assert!(preferences(Some(";;;,,,q=")).is_empty());
        assert!(preferences(None).is_empty());
    }

    /// The one of `available` the reader prefers: the best rank, the first of equals.
    fn choose<T: Copy>(prefs: &[Lang], available: &[(Lang, T)]) -> Option<T> {
        available
            .iter()
            .filter_map(|(l, t)| rank(prefs, l).map(|r| (r, *t)))
            .min_by_key(|(r, _)| *r)
            .map(|(_, t)| t)
    }

    #[test]
    fn choice_exact_then_same_language() {
        let available = [
            (Lang::parse("en").unwrap(), 'e'),
            (Lang::parse("pt").unwrap(), 'p'),
        ];
        let pick = |h: &str| choose(&preferences(Some(h)), &available);
        assert_eq!(pick("pt-BR,fr;q=0.8,en;q=0.5,pt;q=0.3"), Some('p'));
        assert_eq!(pick("en-GB"), Some('e'));
        assert_eq!(pick("fr,en;q=0.1"), Some('e'));
        assert_eq!(pick("fr"), None);
        let with_country = [
            (Lang::parse("pt-PT").unwrap(), 1),
            (Lang::parse("pt-BR").unwrap(), 2),
        ];
        assert_eq!(choose(&preferences(Some("pt-BR")), &with_country), Some(2));
        // Only the reader's first language, exactly, is the best there can be.
        let prefs = preferences(Some("pt-BR,pt;q=0.9"));
        assert_eq!(
            rank(&prefs, &Lang::parse("pt-BR").unwrap()),
            Some(Rank::BEST)
        );
        assert!(rank(&prefs, &Lang::parse("pt").unwrap()) > Some(Rank::BEST));
        assert!(
            rank(&prefs, &Lang::parse("pt").unwrap())
                < rank(&prefs, &Lang::parse("pt-PT").unwrap())
        );
        assert_eq!(rank(&prefs, &Lang::parse("en").unwrap()), None);
    }

    #[test]
    fn page_language() {
        assert_eq!(
            PageLang::of(&preferences(Some("pt-BR,en;q=0.5"))),
            PageLang::Pt
        );
        assert_eq!(
            PageLang::of(&preferences(Some("fr,en;q=0.5,pt;q=0.4"))),
            PageLang::En
        );
        assert_eq!(PageLang::of(&[]), PageLang::En);
    }
}
