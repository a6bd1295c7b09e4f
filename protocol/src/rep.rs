//! The uniform repository name ("rep"), the IBI spelled with a domain name (generation
//! standard, §6, Table 6.1), e.g. `sid.inpe.br/mtc-m18/2009/02.16.17.46`.
//!
//! ```text
//! repository = prefix "/" suffix
//! prefix     = subdomain "/" word [("." | "@") port]
//! subdomain  = *(word ".") last-word ["."]
//! word       = ALPHANUM | (ALPHANUM *(ALPHANUM | "-") ALPHANUM)
//! last-word  = ALPHA | (ALPHA *(ALPHANUM | "-") ALPHANUM)
//! port       = 1*DIGIT
//! suffix     = year "/" month "." day "." hour "." minute ["." second]
//! year       = 4*DIGIT
//! month, day, hour, minute = 2DIGIT
//! second     = integer ["." fraction];  integer = 2DIGIT;  fraction = 1*DIGIT
//! ```
//!
//! Beyond the grammar: the date must exist (month 1–12, day of that month, hour < 24,
//! minute < 60, second < 60), ports are 1–65535, years stop at 9999 (so `year` has exactly
//! four digits here), and a rep is at most 255 bytes.

use super::{shown, IbiDate, IbiError, MAX_LEN};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

/// A uniform repository name (Table 6.1); it exists only if it parsed.
///
/// Equality and hashing follow the generation standard (§6) and the product contract: case
/// does not matter, `@` and `.` before the port are the same, an explicit port 80 equals no
/// port, and the suffix compares exactly. [`Rep::canonical`] is the spelling equal reps
/// share; [`Rep::as_str`] and `Display` give the spelling it was parsed from.
#[derive(Clone, Debug)]
pub struct Rep {
    text: String,
    /// End of the subdomain (the first `/`).
    sub_end: usize,
    /// End of the word inside the second component.
    word_end: usize,
    /// End of the second component (the second `/`).
    wp_end: usize,
    /// End of the year (the third `/`).
    year_end: usize,
    port: Option<u16>,
    date: IbiDate,
    canonical: String,
}

impl Rep {
    /// Parses a rep; the error names the part at fault.
    pub fn parse(s: &str) -> Result<Rep, IbiError> {
        parse(s).map_err(|why| IbiError::new(format!("invalid rep {}: {why}", shown(s))))
    }

    /// The spelling it was parsed from.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The first component as spelled, e.g. `sid.inpe.br`.
    pub fn subdomain(&self) -> &str {
        &self.text[..self.sub_end]
    }

    /// The second component as spelled, e.g. `mtc-m18@80`.
    pub fn word_port(&self) -> &str {
        &self.text[self.sub_end + 1..self.wp_end]
    }

    /// The word of the second component, e.g. `mtc-m18`.
    pub fn word(&self) -> &str {
        &self.text[self.sub_end + 1..self.word_end]
    }

    /// The port as written (`Some(80)` for `@80`), `None` when none is written.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The year as spelled, e.g. `2009`.
    pub fn year(&self) -> &str {
        &self.text[self.wp_end + 1..self.year_end]
    }

    /// The fourth component, e.g. `07.21.13.23` or `07.21.13.23.47.5`.
    pub fn day_time(&self) -> &str {
        &self.text[self.year_end + 1..]
    }

    /// The suffix, `year/day_time`, e.g. `2009/07.21.13.23`.
    pub fn suffix(&self) -> &str {
        &self.text[self.wp_end + 1..]
    }

    /// The prefix as spelled, e.g. `sid.inpe.br/mtc-m18@80`.
    pub fn prefix(&self) -> &str {
        &self.text[..self.wp_end]
    }

    /// The date the suffix codes.
    pub fn date(&self) -> IbiDate {
        self.date.clone()
    }

    /// The hostname the prefix was made from (Algorithm 1 backwards): `word.subdomain`, as
    /// spelled, e.g. `mtc-m18.sid.inpe.br`.
    pub fn host(&self) -> String {
        format!("{}.{}", self.word(), self.subdomain())
    }

    /// Whether `wp`, a second component as a directory of col/ spells it, names this
    /// rep's prefix word and port in the standard's sense (case, `@`/`.` and port 80 do
    /// not matter); without building a rep from it.
    pub fn has_word_port(&self, wp: &str) -> bool {
        let (word, port) = match wp.find(['.', '@']) {
            Some(i) => match parse_port(&wp[i + 1..]) {
                Ok(p) => (&wp[..i], Some(p)),
                Err(_) => return false,
            },
            None => (wp, None),
        };
        let not_80 = |p: Option<u16>| p.filter(|&p| p != 80);
        word.eq_ignore_ascii_case(self.word()) && not_80(port) == not_80(self.port)
    }

    /// The spelling shared by all reps equal to this one: lower case, no port 80, `.` before
    /// any other port (the recommended separator), the suffix as spelled.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }
}

fn parse(s: &str) -> Result<Rep, String> {
    if s.is_empty() {
        return Err("it is empty".into());
    }
    if s.len() > MAX_LEN {
        return Err(format!("it is longer than {MAX_LEN} bytes"));
    }
    // Split without collecting: every request parses a few reps.
    let mut parts = s.splitn(4, '/');
    let (Some(subdomain), Some(word_port), Some(year), Some(day_time)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!(
            "it has {} parts separated by '/', expected 4 (subdomain/word/year/month.day.hour.minute)",
            s.split('/').count()
        ));
    };
    if day_time.contains('/') {
        return Err(format!(
            "it has {} parts separated by '/', expected 4 (subdomain/word/year/month.day.hour.minute)",
            s.split('/').count()
        ));
    }
    check_subdomain(subdomain)?;
    let (word, port) = match word_port.find(['.', '@']) {
        Some(i) => (&word_port[..i], Some(parse_port(&word_port[i + 1..])?)),
        None => (word_port, None),
    };
    check_word(word, "word")?;
    let date = parse_suffix(year, day_time)?;

    let sub_end = subdomain.len();
    let word_end = sub_end + 1 + word.len();
    let wp_end = sub_end + 1 + word_port.len();
    let year_end = wp_end + 1 + year.len();
    // Built in one allocation (lower case, no port 80, `.` before another port).
    let mut canonical = String::with_capacity(s.len() + 1);
    canonical.push_str(&s[..word_end]);
    canonical.make_ascii_lowercase();
    if let Some(p) = port.filter(|&p| p != 80) {
        use std::fmt::Write;
        let _ = write!(canonical, ".{p}");
    }
    canonical.push_str(&s[wp_end..]);
    Ok(Rep {
        text: s.to_string(),
        sub_end,
        word_end,
        wp_end,
        year_end,
        port,
        date,
        canonical,
    })
}

/// Checks the two names of a prefix (for minting, which builds rather than parses one).
pub fn check_prefix(subdomain: &str, word: &str) -> Result<(), String> {
    check_word(word, "word")?;
    check_subdomain(subdomain)
}

/// `subdomain = *(word ".") last-word ["."]`
fn check_subdomain(sub: &str) -> Result<(), String> {
    let body = sub.strip_suffix('.').unwrap_or(sub);
    if body.is_empty() {
        return Err("subdomain is empty".into());
    }
    let mut words = body.split('.').peekable();
    while let Some(w) = words.next() {
        if w.is_empty() {
            return Err(format!("subdomain {sub:?} has an empty word"));
        }
        check_word(w, "subdomain word")?;
        if words.peek().is_none() && !w.as_bytes()[0].is_ascii_alphabetic() {
            return Err(format!(
                "last word {w:?} of the subdomain does not start with a letter"
            ));
        }
    }
    Ok(())
}

/// `word = ALPHANUM | (ALPHANUM *(ALPHANUM | "-") ALPHANUM)`
fn check_word(w: &str, what: &str) -> Result<(), String> {
    if w.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if let Some(c) = w
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || c == '-'))
    {
        return Err(format!(
            "{what} {w:?} holds {c:?}, which is not a letter, digit or '-'"
        ));
    }
    if w.starts_with('-') {
        return Err(format!("{what} {w:?} starts with '-'"));
    }
    if w.ends_with('-') {
        return Err(format!("{what} {w:?} ends with '-'"));
    }
    Ok(())
}

/// `port = 1*DIGIT`, 1 to 65535.
fn parse_port(p: &str) -> Result<u16, String> {
    if p.is_empty() {
        return Err("port is empty".into());
    }
    if !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("port {p:?} is not a number"));
    }
    match p.trim_start_matches('0') {
        t if t.is_empty() || t.len() > 5 => Err(format!("port {p} is out of range")),
        t => match t.parse::<u16>() {
            Ok(n) => Ok(n),
            Err(_) => Err(format!("port {p} is out of range")),
        },
    }
}

/// `suffix = year "/" month "." day "." hour "." minute ["." second ["." fraction]]`
fn parse_suffix(year: &str, day_time: &str) -> Result<IbiDate, String> {
    if !year.bytes().all(|b| b.is_ascii_digit()) || year.is_empty() {
        return Err(format!("year {year:?} is not a number"));
    }
    if year.len() < 4 {
        return Err(format!("year {year:?} does not have 4 digits"));
    }
    if year.len() > 4 {
        return Err(format!("year {year:?} is past 9999"));
    }
    let fields: Vec<&str> = day_time.split('.').collect();
    if !(4..=6).contains(&fields.len()) {
        return Err(format!(
            "{day_time:?} is not month.day.hour.minute[.second[.fraction]]"
        ));
    }
    let names = ["month", "day", "hour", "minute", "second"];
    let mut n = [0u32; 5];
    for (i, f) in fields.iter().take(5).enumerate() {
        if f.len() != 2 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{} {f:?} is not 2 digits", names[i]));
        }
        n[i] = f.parse().expect("two digits");
    }
    let fraction = fields.get(5).copied().unwrap_or("");
    if fields.len() == 6 {
        if fraction.is_empty() {
            return Err("fraction of a second is empty".into());
        }
        if !fraction.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("fraction {fraction:?} is not a number"));
        }
    }
    let y: i32 = year.parse().expect("four digits");
    IbiDate::from_civil(y, n[0], n[1], n[2], n[3], n[4], fraction)
}

impl PartialEq for Rep {
    fn eq(&self, other: &Rep) -> bool {
        self.canonical == other.canonical
    }
}

impl Eq for Rep {}

impl Hash for Rep {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.canonical.hash(state);
    }
}

impl fmt::Display for Rep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Rep {
    type Err = IbiError;
    fn from_str(s: &str) -> Result<Rep, IbiError> {
        Rep::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn rep(s: &str) -> Rep {
        Rep::parse(s).unwrap()
    }

    fn why(s: &str) -> String {
        let e = Rep::parse(s).unwrap_err().to_string();
        let head = format!("invalid rep {}: ", shown(s));
        e.strip_prefix(&head)
            .unwrap_or_else(|| panic!("{e}"))
            .to_string()
    }

    #[test]
    fn parts_as_spelled() {
        let r = rep("sid.INPE.br/MTC-m18@80/2009/07.21.13.23.47.5");
        assert_eq!(r.subdomain(), "sid.INPE.br");
        assert_eq!(r.word_port(), "MTC-m18@80");
        assert_eq!(r.word(), "MTC-m18");
        assert_eq!(r.port(), Some(80));
        assert_eq!(r.year(), "2009");
        assert_eq!(r.day_time(), "07.21.13.23.47.5");
        assert_eq!(r.prefix(), "sid.INPE.br/MTC-m18@80");
        assert_eq!(r.suffix(), "2009/07.21.13.23.47.5");
        assert_eq!(r.host(), "MTC-m18.sid.INPE.br");
        assert_eq!(r.date(), IbiDate::new(1_248_182_627, "5").unwrap());
        assert_eq!(r.canonical(), "sid.inpe.br/mtc-m18/2009/07.21.13.23.47.5");
        assert_eq!(
            r.to_string(),
            "sid.INPE.br/MTC-m18@80/2009/07.21.13.23.47.5"
        );
    }

    #[test]
    fn has_word_port_agrees_with_equality() {
        let spellings = [
            "mtc-m18",
            "MTC-M18",
            "mtc-m18@80",
            "mtc-m18.80",
            "mtc-m18.080",
            "Mtc-M18@0080",
            "mtc-m18.8080",
            "mtc-m18@8080",
            "mtc-m19",
            "mtc-m1",
            "mtc-m18x",
            "mtc-m18.",
            "mtc-m18@",
            "mtc-m18.99999",
            "mtc-m18.8o",
            "-mtc-m18",
            "mtc-m18.80.80",
        ];
        for asked in ["mtc-m18", "MTC-m18@80", "mtc-m18.8080"] {
            let asked = rep(&format!("sid.inpe.br/{asked}/2009/07.21.13.23"));
            for wp in spellings {
                let equal = Rep::parse(&format!("sid.inpe.br/{wp}/2009/07.21.13.23"))
                    .is_ok_and(|r| r == asked);
                assert_eq!(asked.has_word_port(wp), equal, "{asked} and {wp}");
            }
        }
        assert!(rep("sid.inpe.br/mtc-m18/2009/07.21.13.23").has_word_port("MTC-M18.080"));
        assert!(!rep("sid.inpe.br/mtc-m18/2009/07.21.13.23").has_word_port("mtc-m18.8080"));
    }

    #[test]
    fn equality_per_the_standard() {
        let same = [
            "sid.INPE.br/mtc-m18@80/2009/07.21.13.23",
            "sid.inpe.br/mtc-m18.80/2009/07.21.13.23",
            "sid.inpe.br/mtc-m18/2009/07.21.13.23",
            "SID.INPE.BR/MTC-M18.080/2009/07.21.13.23",
        ];
        let set: HashSet<Rep> = same.iter().map(|s| rep(s)).collect();
        assert_eq!(set.len(), 1);
        for a in same {
            for b in same {
                assert_eq!(rep(a), rep(b));
            }
        }
        assert_eq!(
            rep("a.org/b@8080/2009/07.21.13.23"),
            rep("a.org/b.8080/2009/07.21.13.23")
        );
        assert_ne!(
            rep("a.org/b@8080/2009/07.21.13.23"),
            rep("a.org/b/2009/07.21.13.23")
        );
        // The suffix compares exactly: same instant, other spelling.
        assert_ne!(
            rep("a.org/b/2009/07.21.13.23"),
            rep("a.org/b/2009/07.21.13.23.00")
        );
        assert_eq!(
            rep("a.org/b/2009/07.21.13.23").date(),
            rep("a.org/b/2009/07.21.13.23.00").date()
        );
    }

    #[test]
    fn grammar_corners_accepted() {
        for s in [
            "br/x/2009/07.21.13.23",
            "sid.inpe.br./x/2009/07.21.13.23",
            "1.2.b/3/2009/07.21.13.23",
            "a-b.c-d/e-f/2009/07.21.13.23",
            "x.y/z.65535/2009/07.21.13.23",
            "x.y/z/0000/01.01.00.00",
            "x.y/z/9999/12.31.23.59.59.999",
            "x.y/z/2008/02.29.00.00",
        ] {
            assert_eq!(rep(s).as_str(), s);
        }
    }

    #[test]
    fn refusals_name_the_part() {
        for (s, want) in [
            ("", "it is empty"),
            ("sid.inpe.br/mtc-m18/2009", "it has 3 parts separated by '/', expected 4 (subdomain/word/year/month.day.hour.minute)"),
            ("/mtc/2009/07.21.13.23", "subdomain is empty"),
            ("sid..br/mtc/2009/07.21.13.23", "subdomain \"sid..br\" has an empty word"),
            ("-sid.br/mtc/2009/07.21.13.23", "subdomain word \"-sid\" starts with '-'"),
            ("sid-.br/mtc/2009/07.21.13.23", "subdomain word \"sid-\" ends with '-'"),
            ("sid.inpe.b_r/mtc/2009/07.21.13.23", "subdomain word \"b_r\" holds '_', which is not a letter, digit or '-'"),
            ("sid.inpe.9br/mtc/2009/07.21.13.23", "last word \"9br\" of the subdomain does not start with a letter"),
            ("sid.inpe.br/@80/2009/07.21.13.23", "word is empty"),
            ("sid.inpe.br/-mtc/2009/07.21.13.23", "word \"-mtc\" starts with '-'"),
            ("sid.inpe.br/mtc-/2009/07.21.13.23", "word \"mtc-\" ends with '-'"),
            ("sid.inpe.br/mtç/2009/07.21.13.23", "word \"mtç\" holds 'ç', which is not a letter, digit or '-'"),
            ("sid.inpe.br/mtc@/2009/07.21.13.23", "port is empty"),
            ("sid.inpe.br/mtc@8a/2009/07.21.13.23", "port \"8a\" is not a number"),
            ("sid.inpe.br/mtc.m18.80/2009/07.21.13.23", "port \"m18.80\" is not a number"),
            ("sid.inpe.br/mtc@65536/2009/07.21.13.23", "port 65536 is out of range"),
            ("sid.inpe.br/mtc@0/2009/07.21.13.23", "port 0 is out of range"),
            ("sid.inpe.br/mtc/209/07.21.13.23", "year \"209\" does not have 4 digits"),
            ("sid.inpe.br/mtc/20090/07.21.13.23", "year \"20090\" is past 9999"),
            ("sid.inpe.br/mtc/2oo9/07.21.13.23", "year \"2oo9\" is not a number"),
            ("sid.inpe.br/mtc/2009/07.21.13", "\"07.21.13\" is not month.day.hour.minute[.second[.fraction]]"),
            ("sid.inpe.br/mtc/2009/7.21.13.23", "month \"7\" is not 2 digits"),
            ("sid.inpe.br/mtc/2009/13.16.17.46", "month 13 is out of range"),
            ("sid.inpe.br/mtc/2009/00.16.17.46", "month 00 is out of range"),
            ("sid.inpe.br/mtc/2009/04.31.17.46", "day 31 is out of range for 2009-04"),
            ("sid.inpe.br/mtc/2009/02.29.17.46", "day 29 is out of range for 2009-02"),
            ("sid.inpe.br/mtc/2009/02.00.17.46", "day 00 is out of range for 2009-02"),
            ("sid.inpe.br/mtc/2009/02.16.24.46", "hour 24 is out of range"),
            ("sid.inpe.br/mtc/2009/02.16.17.60", "minute 60 is out of range"),
            ("sid.inpe.br/mtc/2009/02.16.17.46.60", "second 60 is out of range"),
            ("sid.inpe.br/mtc/2009/02.16.17.46.5", "second \"5\" is not 2 digits"),
            ("sid.inpe.br/mtc/2009/02.16.17.46.05.", "fraction of a second is empty"),
            ("sid.inpe.br/mtc/2009/02.16.17.46.05.1x", "fraction \"1x\" is not a number"),
        ] {
            assert_eq!(why(s), want, "{s}");
        }
    }

    #[test]
    fn long_input_is_refused_and_shown_short() {
        let long = format!("a.b/c/2009/02.16.17.46.01.{}", "1".repeat(300));
        let e = Rep::parse(&long).unwrap_err().to_string();
        assert!(e.ends_with(": it is longer than 255 bytes"), "{e}");
        assert!(e.len() < 160, "{e}");
        // Exactly 255 bytes is fine.
        let head = "a.b/c/2009/02.16.17.46.01.";
        let ok = format!("{head}{}", "1".repeat(255 - head.len()));
        assert_eq!(rep(&ok).as_str(), ok);
    }
}
