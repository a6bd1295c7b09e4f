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
}

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
