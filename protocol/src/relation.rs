//! Relations between an identified item and related items (resolution standard, Table 9.5)
//! and the verb lists of persistent URLs that name them (Tables 8.4 and 8.5).
//!
//! ```text
//! relação = ([u [t]] | [t [u]]) [m [t]]
//! u       = ".lastedition"
//! t       = ".translation" ["(" idioma ["-" país] ")"]
//! m       = ".metadata" ["(" formato ")"]
//! formato = "oai_dc"
//!
//! lista-de-verbos = [verbo *("+" verbo)]
//! verbo = ("GetTranslation" ["(" idioma ["-" país] ")"]) | "GetLastEdition"
//!       | ("GetMetadata" ["(" formato ")"]) | "GetFileList"
//! ```
//!
//! In a verb list the first three verbs, in order, name one relation; `GetFileList` only
//! changes which URL is given (CRIARPARURL) and may stand anywhere.

use std::fmt;

/// `idioma ["-" país]` (Appendix B of the resolution standard): a two-letter language,
/// optionally with a two-letter country. Stored normalised (`pt`, `pt-BR`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lang {
    language: [u8; 2],
    country: Option<[u8; 2]>,
}

impl Lang {
    /// Parses `ll` or `ll-CC`, in any case.
    pub fn parse(s: &str) -> Result<Lang, RelationError> {
        let bad = || RelationError(format!("invalid language {s:?}: expected ll or ll-CC"));
        let b = s.as_bytes();
        let two = |x: &[u8]| -> Option<[u8; 2]> {
            match x {
                [a, c] if a.is_ascii_alphabetic() && c.is_ascii_alphabetic() => Some([*a, *c]),
                _ => None,
            }
        };
        let (language, country) = match b.len() {
            2 => (two(b).ok_or_else(bad)?, None),
            5 if b[2] == b'-' => (
                two(&b[..2]).ok_or_else(bad)?,
                Some(two(&b[3..]).ok_or_else(bad)?),
            ),
            _ => return Err(bad()),
        };
        Ok(Lang {
            language: language.map(|c| c.to_ascii_lowercase()),
            country: country.map(|cc| cc.map(|c| c.to_ascii_uppercase())),
        })
    }

    /// The country, when the tag names one (`BR` of `pt-BR`).
    pub fn country(&self) -> Option<&str> {
        self.country
            .as_ref()
            .map(|c| std::str::from_utf8(c).unwrap_or(""))
    }

    /// Whether both name the same language, whatever their countries.
    pub fn same_language(&self, other: &Lang) -> bool {
        self.language == other.language
    }

    /// Whether the language is one of ISO 639-1 ([`LANGUAGES`]) and the country, if any,
    /// one of ISO 3166-1 alpha-2 ([`COUNTRIES`]), as Appendix B, Table B.1 of the
    /// resolution standard lists them; the error says which is not. [`Lang::parse`] takes
    /// any two letters (item.toml, Accept-Language); the persistent-URL parser asks this
    /// too.
    pub fn check_codes(&self) -> Result<(), RelationError> {
        if LANGUAGES.binary_search(&self.language).is_err() {
            let [a, b] = self.language;
            return Err(RelationError(format!(
                "{}{} is not a language code of ISO 639-1",
                a as char, b as char
            )));
        }
        match self.country {
            Some(country) if COUNTRIES.binary_search(&country).is_err() => {
                let [c, d] = country;
                Err(RelationError(format!(
                    "{}{} is not a country code of ISO 3166-1 alpha-2",
                    c as char, d as char
                )))
            }
            _ => Ok(()),
        }
    }
}

/// `idioma` of Appendix B, Table B.1 of the resolution standard: the language codes of
/// ISO 639-1, sorted (for [`slice::binary_search`]).
pub const LANGUAGES: [[u8; 2]; 184] = [
    *b"aa", *b"ab", *b"ae", *b"af", *b"ak", *b"am", *b"an", *b"ar", *b"as", *b"av", *b"ay", *b"az",
    *b"ba", *b"be", *b"bg", *b"bh", *b"bi", *b"bm", *b"bn", *b"bo", *b"br", *b"bs", *b"ca", *b"ce",
    *b"ch", *b"co", *b"cr", *b"cs", *b"cu", *b"cv", *b"cy", *b"da", *b"de", *b"dv", *b"dz", *b"ee",
    *b"el", *b"en", *b"eo", *b"es", *b"et", *b"eu", *b"fa", *b"ff", *b"fi", *b"fj", *b"fo", *b"fr",
    *b"fy", *b"ga", *b"gd", *b"gl", *b"gn", *b"gu", *b"gv", *b"ha", *b"he", *b"hi", *b"ho", *b"hr",
    *b"ht", *b"hu", *b"hy", *b"hz", *b"ia", *b"id", *b"ie", *b"ig", *b"ii", *b"ik", *b"io", *b"is",
    *b"it", *b"iu", *b"ja", *b"jv", *b"ka", *b"kg", *b"ki", *b"kj", *b"kk", *b"kl", *b"km", *b"kn",
    *b"ko", *b"kr", *b"ks", *b"ku", *b"kv", *b"kw", *b"ky", *b"la", *b"lb", *b"lg", *b"li", *b"ln",
    *b"lo", *b"lt", *b"lu", *b"lv", *b"mg", *b"mh", *b"mi", *b"mk", *b"ml", *b"mn", *b"mr", *b"ms",
    *b"mt", *b"my", *b"na", *b"nb", *b"nd", *b"ne", *b"ng", *b"nl", *b"nn", *b"no", *b"nr", *b"nv",
    *b"ny", *b"oc", *b"oj", *b"om", *b"or", *b"os", *b"pa", *b"pi", *b"pl", *b"ps", *b"pt", *b"qu",
    *b"rm", *b"rn", *b"ro", *b"ru", *b"rw", *b"sa", *b"sc", *b"sd", *b"se", *b"sg", *b"si", *b"sk",
    *b"sl", *b"sm", *b"sn", *b"so", *b"sq", *b"sr", *b"ss", *b"st", *b"su", *b"sv", *b"sw", *b"ta",
    *b"te", *b"tg", *b"th", *b"ti", *b"tk", *b"tl", *b"tn", *b"to", *b"tr", *b"ts", *b"tt", *b"tw",
    *b"ty", *b"ug", *b"uk", *b"ur", *b"uz", *b"ve", *b"vi", *b"vo", *b"wa", *b"wo", *b"xh", *b"yi",
    *b"yo", *b"za", *b"zh", *b"zu",
];

/// `país` of Appendix B, Table B.1 of the resolution standard: the country codes of ISO
/// 3166-1 alpha-2, sorted (for [`slice::binary_search`]).
pub const COUNTRIES: [[u8; 2]; 249] = [
    *b"AD", *b"AE", *b"AF", *b"AG", *b"AI", *b"AL", *b"AM", *b"AO", *b"AQ", *b"AR", *b"AS", *b"AT",
    *b"AU", *b"AW", *b"AX", *b"AZ", *b"BA", *b"BB", *b"BD", *b"BE", *b"BF", *b"BG", *b"BH", *b"BI",
    *b"BJ", *b"BL", *b"BM", *b"BN", *b"BO", *b"BQ", *b"BR", *b"BS", *b"BT", *b"BV", *b"BW", *b"BY",
    *b"BZ", *b"CA", *b"CC", *b"CD", *b"CF", *b"CG", *b"CH", *b"CI", *b"CK", *b"CL", *b"CM", *b"CN",
    *b"CO", *b"CR", *b"CU", *b"CV", *b"CW", *b"CX", *b"CY", *b"CZ", *b"DE", *b"DJ", *b"DK", *b"DM",
    *b"DO", *b"DZ", *b"EC", *b"EE", *b"EG", *b"EH", *b"ER", *b"ES", *b"ET", *b"FI", *b"FJ", *b"FK",
    *b"FM", *b"FO", *b"FR", *b"GA", *b"GB", *b"GD", *b"GE", *b"GF", *b"GG", *b"GH", *b"GI", *b"GL",
    *b"GM", *b"GN", *b"GP", *b"GQ", *b"GR", *b"GS", *b"GT", *b"GU", *b"GW", *b"GY", *b"HK", *b"HM",
    *b"HN", *b"HR", *b"HT", *b"HU", *b"ID", *b"IE", *b"IL", *b"IM", *b"IN", *b"IO", *b"IQ", *b"IR",
    *b"IS", *b"IT", *b"JE", *b"JM", *b"JO", *b"JP", *b"KE", *b"KG", *b"KH", *b"KI", *b"KM", *b"KN",
    *b"KP", *b"KR", *b"KW", *b"KY", *b"KZ", *b"LA", *b"LB", *b"LC", *b"LI", *b"LK", *b"LR", *b"LS",
    *b"LT", *b"LU", *b"LV", *b"LY", *b"MA", *b"MC", *b"MD", *b"ME", *b"MF", *b"MG", *b"MH", *b"MK",
    *b"ML", *b"MM", *b"MN", *b"MO", *b"MP", *b"MQ", *b"MR", *b"MS", *b"MT", *b"MU", *b"MV", *b"MW",
    *b"MX", *b"MY", *b"MZ", *b"NA", *b"NC", *b"NE", *b"NF", *b"NG", *b"NI", *b"NL", *b"NO", *b"NP",
    *b"NR", *b"NU", *b"NZ", *b"OM", *b"PA", *b"PE", *b"PF", *b"PG", *b"PH", *b"PK", *b"PL", *b"PM",
    *b"PN", *b"PR", *b"PS", *b"PT", *b"PW", *b"PY", *b"QA", *b"RE", *b"RO", *b"RS", *b"RU", *b"RW",
    *b"SA", *b"SB", *b"SC", *b"SD", *b"SE", *b"SG", *b"SH", *b"SI", *b"SJ", *b"SK", *b"SL", *b"SM",
    *b"SN", *b"SO", *b"SR", *b"SS", *b"ST", *b"SV", *b"SX", *b"SY", *b"SZ", *b"TC", *b"TD", *b"TF",
    *b"TG", *b"TH", *b"TJ", *b"TK", *b"TL", *b"TM", *b"TN", *b"TO", *b"TR", *b"TT", *b"TV", *b"TW",
    *b"TZ", *b"UA", *b"UG", *b"UM", *b"US", *b"UY", *b"UZ", *b"VA", *b"VC", *b"VE", *b"VG", *b"VI",
    *b"VN", *b"VU", *b"WF", *b"WS", *b"YE", *b"YT", *b"ZA", *b"ZM", *b"ZW",
];

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b] = self.language;
        write!(f, "{}{}", a as char, b as char)?;
        if let Some([c, d]) = self.country {
            write!(f, "-{}{}", c as char, d as char)?;
        }
        Ok(())
    }
}

/// One elementary relation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// `.lastedition`
    LastEdition,
    /// `.translation` or `.translation(ll[-CC])`
    Translation(Option<Lang>),
    /// `.metadata` or `.metadata(oai_dc)` (`true` for the oai_dc format)
    Metadata { oai_dc: bool },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::LastEdition => f.write_str(".lastedition"),
            Step::Translation(None) => f.write_str(".translation"),
            Step::Translation(Some(l)) => write!(f, ".translation({l})"),
            Step::Metadata { oai_dc: false } => f.write_str(".metadata"),
            Step::Metadata { oai_dc: true } => f.write_str(".metadata(oai_dc)"),
        }
    }
}

/// A relation of Table 9.5: a sequence of steps that follows the grammar. The empty
/// relation is the item itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Relation {
    steps: Vec<Step>,
}

impl Relation {
    /// The empty relation `""`: the identified item itself.
    pub fn itself() -> Relation {
        Relation::default()
    }

    /// Builds a relation from steps, checking the grammar of Table 9.5.
    pub fn from_steps(steps: Vec<Step>) -> Result<Relation, RelationError> {
        if follows_grammar(&steps) {
            Ok(Relation { steps })
        } else {
            let text: String = steps.iter().map(|s| s.to_string()).collect();
            Err(RelationError(format!(
                "{text:?} does not follow the grammar of relations"
            )))
        }
    }

    /// Parses the written form, e.g. `.lastedition.metadata(oai_dc)` or `""`/empty.
    pub fn parse(s: &str) -> Result<Relation, RelationError> {
        let mut steps = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            let (step, r) = parse_step(rest).ok_or_else(|| {
                RelationError(format!("invalid relation {s:?}: cannot read {rest:?}"))
            })?;
            steps.push(step);
            rest = r;
        }
        Relation::from_steps(steps)
            .map_err(|_| RelationError(format!("invalid relation {s:?}: steps out of order")))
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Where this relation has a translation step without a language, the index of
    /// that step (a bare `GetTranslation` asks for every language at that place).
    pub fn bare_translation_at(&self) -> Option<usize> {
        self.steps
            .iter()
            .position(|s| *s == Step::Translation(None))
    }

    /// This relation with the step at `i` replaced.
    pub fn with_step(&self, i: usize, step: Step) -> Relation {
        let mut steps = self.steps.clone();
        steps[i] = step;
        Relation { steps }
    }

    /// Whether this relation starts with `.lastedition`, or has it right after a
    /// leading translation (the places where a next edition matters).
    pub fn involves_last_edition(&self) -> bool {
        self.steps.contains(&Step::LastEdition)
    }

    /// The name of a pair for this relation, e.g. `url.lastedition.metadata(oai_dc)`.
    pub fn pair_name(&self, prefix: &str) -> String {
        let mut name = String::from(prefix);
        for s in &self.steps {
            name.push_str(&s.to_string());
        }
        name
    }

    /// Every relation of Table 9.5 over the given languages: the default relation
    /// subset of an Archive whose archive.toml names none.
    pub fn all_over(languages: &[Lang]) -> Vec<Relation> {
        let mut ts = vec![Step::Translation(None)];
        ts.extend(
            languages
                .iter()
                .cloned()
                .map(|l| Step::Translation(Some(l))),
        );
        let mut heads: Vec<Vec<Step>> = vec![vec![], vec![Step::LastEdition]];
        for t in &ts {
            heads.push(vec![t.clone()]);
            heads.push(vec![Step::LastEdition, t.clone()]);
            heads.push(vec![t.clone(), Step::LastEdition]);
        }
        let ms = [
            Step::Metadata { oai_dc: false },
            Step::Metadata { oai_dc: true },
        ];
        let mut tails: Vec<Vec<Step>> = vec![vec![]];
        for m in &ms {
            tails.push(vec![m.clone()]);
            for t in &ts {
                tails.push(vec![m.clone(), t.clone()]);
            }
        }
        let mut out = Vec::with_capacity(heads.len() * tails.len());
        for h in &heads {
            for t in &tails {
                let steps: Vec<Step> = h.iter().chain(t).cloned().collect();
                out.push(Relation { steps });
            }
        }
        out
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.steps {
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

/// `([u [t]] | [t [u]]) [m [t]]` over a sequence of steps.
fn follows_grammar(steps: &[Step]) -> bool {
    let is_t = |s: Option<&Step>| matches!(s, Some(Step::Translation(_)));
    let is_u = |s: Option<&Step>| matches!(s, Some(Step::LastEdition));
    let is_m = |s: Option<&Step>| matches!(s, Some(Step::Metadata { .. }));
    let mut i = 0;
    if is_u(steps.get(i)) {
        i += 1;
        if is_t(steps.get(i)) {
            i += 1;
        }
    } else if is_t(steps.get(i)) {
        i += 1;
        if is_u(steps.get(i)) {
            i += 1;
        }
    }
    if is_m(steps.get(i)) {
        i += 1;
        if is_t(steps.get(i)) {
            i += 1;
        }
    }
    i == steps.len()
}

fn parse_step(s: &str) -> Option<(Step, &str)> {
    if let Some(r) = s.strip_prefix(".lastedition") {
        return Some((Step::LastEdition, r));
    }
    if let Some(r) = s.strip_prefix(".translation") {
        return match r.strip_prefix('(') {
            Some(inner) => {
                let close = inner.find(')')?;
                let lang = Lang::parse(&inner[..close]).ok()?;
                Some((Step::Translation(Some(lang)), &inner[close + 1..]))
            }
            None => Some((Step::Translation(None), r)),
        };
    }
    if let Some(r) = s.strip_prefix(".metadata") {
        return match r.strip_prefix("(oai_dc)") {
            Some(r) => Some((Step::Metadata { oai_dc: true }, r)),
            None => Some((Step::Metadata { oai_dc: false }, r)),
        };
    }
    None
}

/// A verb of Table 8.4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verb {
    GetLastEdition,
    GetTranslation(Option<Lang>),
    GetMetadata { oai_dc: bool },
    GetFileList,
}

impl Verb {
    /// Parses one verb as written in a verb list (`GetTranslation(pt-BR)`).
    pub fn parse(s: &str) -> Option<Verb> {
        match s {
            "GetLastEdition" => return Some(Verb::GetLastEdition),
            "GetFileList" => return Some(Verb::GetFileList),
            "GetTranslation" => return Some(Verb::GetTranslation(None)),
            "GetMetadata" => return Some(Verb::GetMetadata { oai_dc: false }),
            "GetMetadata(oai_dc)" => return Some(Verb::GetMetadata { oai_dc: true }),
            _ => {}
        }
        let inner = s.strip_prefix("GetTranslation(")?.strip_suffix(')')?;
        Lang::parse(inner)
            .ok()
            .map(|l| Verb::GetTranslation(Some(l)))
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verb::GetLastEdition => f.write_str("GetLastEdition"),
            Verb::GetFileList => f.write_str("GetFileList"),
            Verb::GetTranslation(None) => f.write_str("GetTranslation"),
            Verb::GetTranslation(Some(l)) => write!(f, "GetTranslation({l})"),
            Verb::GetMetadata { oai_dc: false } => f.write_str("GetMetadata"),
            Verb::GetMetadata { oai_dc: true } => f.write_str("GetMetadata(oai_dc)"),
        }
    }
}

/// A parsed `parsedibiurl.verblist`: the relation it names and whether it asks for the
/// file list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerbList {
    relation: Relation,
    file_list: bool,
}

impl VerbList {
    /// Parses a verb list; verbs are separated by spaces (what `+` becomes after query
    /// decoding) or by a literal `+`. An empty list names the item itself.
    pub fn parse(s: &str) -> Result<VerbList, RelationError> {
        let mut steps = Vec::new();
        let mut file_list = false;
        for word in s.split([' ', '+']).filter(|w| !w.is_empty()) {
            match Verb::parse(word) {
                Some(Verb::GetFileList) => file_list = true,
                Some(Verb::GetLastEdition) => steps.push(Step::LastEdition),
                Some(Verb::GetTranslation(l)) => steps.push(Step::Translation(l)),
                Some(Verb::GetMetadata { oai_dc }) => steps.push(Step::Metadata { oai_dc }),
                None => return Err(RelationError(format!("unknown verb {word:?}"))),
            }
        }
        let relation = Relation::from_steps(steps)
            .map_err(|_| RelationError(format!("verb list {s:?} names no relation")))?;
        Ok(VerbList {
            relation,
            file_list,
        })
    }

    pub fn relation(&self) -> &Relation {
        &self.relation
    }

    pub fn wants_file_list(&self) -> bool {
        self.file_list
    }

    pub fn is_empty(&self) -> bool {
        self.relation.steps.is_empty() && !self.file_list
    }
}

/// A relation, language or verb list that does not follow its grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationError(pub String);

impl fmt::Display for RelationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RelationError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_9_5_relations_parse_and_print_back() {
        for r in [
            "",
            ".lastedition",
            ".translation",
            ".translation(pt-BR)",
            ".metadata",
            ".metadata(oai_dc)",
            ".lastedition.translation",
            ".lastedition.translation(pt-BR)",
            ".lastedition.metadata",
            ".lastedition.metadata(oai_dc)",
            ".translation(pt-BR).lastedition",
            ".translation(en).metadata",
            ".metadata.translation(en)",
        ] {
            assert_eq!(Relation::parse(r).unwrap().to_string(), r);
        }
    }

    #[test]
    fn relations_out_of_grammar_are_refused() {
        for r in [
            ".metadata.metadata",
            ".metadata.lastedition",
            ".lastedition.lastedition",
            ".translation.translation.metadata",
            ".translation(xx-YYY)",
            ".meta",
            "lastedition",
        ] {
            assert!(Relation::parse(r).is_err(), "{r}");
        }
    }

    #[test]
    fn languages_are_normalised() {
        assert_eq!(Lang::parse("PT-br").unwrap().to_string(), "pt-BR");
        assert!(Lang::parse("pt_BR").is_err());
        assert!(Lang::parse("p1").is_err());
        assert!(Lang::parse("").is_err());
    }

    #[test]
    fn the_codes_of_table_b1_are_sorted_and_checked() {
        // Strictly increasing: binary search finds every one.
        assert!(LANGUAGES.windows(2).all(|w| w[0] < w[1]));
        assert!(COUNTRIES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!((LANGUAGES.len(), COUNTRIES.len()), (184, 249));
        assert!(LANGUAGES.iter().flatten().all(u8::is_ascii_lowercase));
        assert!(COUNTRIES.iter().flatten().all(u8::is_ascii_uppercase));
        let check = |s: &str| Lang::parse(s).unwrap().check_codes().map_err(|e| e.0);
        for ok in [
            "aa", "pt", "en", "zu", "pt-BR", "PT-br", "en-GB", "es-AD", "zh-ZW",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("xx", "xx is not a language code of ISO 639-1"),
            ("QQ", "qq is not a language code of ISO 639-1"),
            ("zz-BR", "zz is not a language code of ISO 639-1"),
            ("en-UK", "UK is not a country code of ISO 3166-1 alpha-2"),
            ("pt-xx", "XX is not a country code of ISO 3166-1 alpha-2"),
            ("pt-AA", "AA is not a country code of ISO 3166-1 alpha-2"),
            ("pt-ZZ", "ZZ is not a country code of ISO 3166-1 alpha-2"),
        ] {
            assert_eq!(check(bad), Err(why.to_string()), "{bad}");
        }
        // Lang::parse itself stays lenient (item.toml, Accept-Language).
        assert_eq!(Lang::parse("xx-UK").unwrap().to_string(), "xx-UK");
    }

    #[test]
    fn verb_lists_of_examples_8_5_and_10_2() {
        let v = VerbList::parse("GetLastEdition GetMetadata(oai_dc)").unwrap();
        assert_eq!(v.relation().to_string(), ".lastedition.metadata(oai_dc)");
        assert!(!v.wants_file_list());
        let v = VerbList::parse("GetLastEdition+GetMetadata(oai_dc)").unwrap();
        assert_eq!(v.relation().to_string(), ".lastedition.metadata(oai_dc)");
        let v = VerbList::parse("GetFileList GetTranslation(pt)").unwrap();
        assert_eq!(v.relation().to_string(), ".translation(pt)");
        assert!(v.wants_file_list());
        assert!(VerbList::parse("").unwrap().is_empty());
    }

    #[test]
    fn bad_verb_lists_are_refused_with_the_reason() {
        assert_eq!(
            VerbList::parse("GetSomething").unwrap_err().to_string(),
            "unknown verb \"GetSomething\""
        );
        assert_eq!(
            VerbList::parse("GetMetadata GetLastEdition")
                .unwrap_err()
                .to_string(),
            "verb list \"GetMetadata GetLastEdition\" names no relation"
        );
        assert!(VerbList::parse("GetMetadata(mods)").is_err());
        assert!(VerbList::parse("getlastedition").is_err());
    }

    #[test]
    fn the_default_subset_holds_the_relations_of_example_9_2() {
        let all = Relation::all_over(&[Lang::parse("en").unwrap(), Lang::parse("pt").unwrap()]);
        for r in [
            "",
            ".lastedition",
            ".lastedition.metadata",
            ".lastedition.metadata(oai_dc)",
            ".metadata",
            ".metadata(oai_dc)",
            ".metadata.translation",
            ".translation(en)",
            ".translation(pt)",
        ] {
            assert!(all.contains(&Relation::parse(r).unwrap()), "{r}");
        }
        let unique: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
        assert!(all.iter().all(|r| follows_grammar(r.steps())));
    }
}
