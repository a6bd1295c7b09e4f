//! The identifier layer against the vectors of the generation and resolution standards and
//! cases worked by hand, kept one case a line in `tests/data/ibi/`.
//!
//! Every table reports all its failing lines at once, with file and line number, and checks
//! that it ran the number of cases its file holds (an emptied file fails).

use ::ibi::base27;
use ::ibi::ip::{ip_text, text_to_decimal};
use ::ibi::mint::{ibip_prefix, mint_ports, rep_prefix};
use ::ibi::{Ibi, IbiDate, Ibip, Rep};
use ibi_archive::minting::distributor::{next_date, Granularity, PosixTime};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;

/// The cases of a data file: (line number, line), comments and blank lines left out.
fn cases(name: &str) -> Vec<(usize, String)> {
    let path = format!("{}/tests/data/ibi/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

/// Space-separated fields, exactly `n` of them.
fn fields(name: &str, line: usize, text: &str, n: usize) -> Vec<String> {
    let f: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    assert_eq!(f.len(), n, "{name}:{line}: expected {n} fields in {text:?}");
    f
}

/// Runs `check` on every case; fails listing every line that failed.
fn table(name: &str, min_cases: usize, mut check: impl FnMut(&str) -> Result<(), String>) {
    let all = cases(name);
    assert!(
        all.len() >= min_cases,
        "{name}: {} cases, expected at least {min_cases}",
        all.len()
    );
    let failures: Vec<String> = all
        .iter()
        .filter_map(|(line, text)| check(text).err().map(|e| format!("{name}:{line}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

fn hash_of<T: Hash>(v: &T) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

#[test]
fn base27_tables_7_3_both_ways() {
    table("base27.txt", 13, |line| {
        let f = fields("base27.txt", 0, line, 2);
        same("encode", base27::from_decimal(&f[0]), Some(f[1].clone()))?;
        same("decode", base27::to_decimal(&f[1]), Some(f[0].clone()))?;
        same(
            "decode lower case",
            base27::to_decimal(&f[1].to_lowercase()),
            Some(f[0].clone()),
        )
    });
}

#[test]
fn ip_table_7_2_and_prefixes_both_ways() {
    table("ip.txt", 12, |line| {
        let f = fields("ip.txt", 0, line, 4);
        let ip: IpAddr = f[0].parse().map_err(|e| format!("{}: {e}", f[0]))?;
        let port: u16 = f[2].parse().map_err(|e| format!("{}: {e}", f[2]))?;
        same("text read", ip_text(ip), f[0].clone())?;
        same(
            "decimal",
            text_to_decimal(&f[0]).map_err(|e| e.to_string()),
            Ok(f[1].clone()),
        )?;
        same("prefix", ibip_prefix(ip, port), f[3].clone())?;
        let back = Ibip::parse(&format!("{}/34PGRBS", f[3])).map_err(|e| e.to_string())?;
        same("decoded IP", back.ip(), ip)?;
        same("decoded IP text", back.ip_text(), f[0].as_str())?;
        same("decoded port", back.port(), port)
    });
}

#[test]
fn ibips_of_the_standards_decode() {
    table("ibip.txt", 16, |line| {
        let f = fields("ibip.txt", 0, line, 6);
        let ibip = Ibip::parse(&f[0]).map_err(|e| e.to_string())?;
        same("spelling", ibip.to_string(), f[0].clone())?;
        same("ip", ibip.ip_text().to_string(), f[1].clone())?;
        same(
            "ip addr",
            ibip.ip(),
            f[1].parse::<IpAddr>().map_err(|e| e.to_string())?,
        )?;
        same("port", ibip.port().to_string(), f[2].clone())?;
        same("date", ibip.date().to_iso(), f[3].clone())?;
        same("rep suffix", ibip.date().rep_suffix(), f[4].clone())?;
        // Encoding the decoded date gives back the suffix (up to case).
        same(
            "suffix re-encoded",
            ibip.date().ibip_suffix().map_err(|e| e.to_string())?,
            ibip.suffix().to_uppercase(),
        )?;
        same(
            "form",
            Ibi::parse(&f[0]).map(|i| matches!(i, Ibi::Ibip(_))),
            Ok(true),
        )?;
        if f[5] != "-" {
            let rep = Rep::parse(&f[5]).map_err(|e| e.to_string())?;
            same("paired rep date", rep.date(), ibip.date())?;
            same("paired rep suffix", rep.suffix(), f[4].as_str())?;
        }
        Ok(())
    });
}

#[test]
fn reps_parse_into_their_parts() {
    table("rep.txt", 14, |line| {
        let f = fields("rep.txt", 0, line, 8);
        let rep = Rep::parse(&f[0]).map_err(|e| e.to_string())?;
        same("spelling", rep.to_string(), f[0].clone())?;
        same("subdomain", rep.subdomain(), f[1].as_str())?;
        same("word", rep.word(), f[2].as_str())?;
        let port = if f[3] == "-" {
            None
        } else {
            Some(f[3].parse::<u16>().unwrap())
        };
        same("port", rep.port(), port)?;
        same("year", rep.year(), f[4].as_str())?;
        same("day_time", rep.day_time(), f[5].as_str())?;
        same("host", rep.host(), f[6].clone())?;
        same("date", rep.date().to_iso(), f[7].clone())?;
        same(
            "form",
            Ibi::parse(&f[0]).map(|i| matches!(i, Ibi::Rep(_))),
            Ok(true),
        )?;
        // word_port is the word and what follows it, as spelled.
        same(
            "word_port prefix",
            rep.word_port().starts_with(rep.word()),
            true,
        )
    });
}

#[test]
fn equality_groups() {
    let groups: Vec<(usize, Vec<Ibi>)> = cases("equal.txt")
        .into_iter()
        .map(|(line, text)| {
            let ibis = text
                .split_whitespace()
                .map(|s| Ibi::parse(s).unwrap_or_else(|e| panic!("equal.txt:{line}: {e}")))
                .collect();
            (line, ibis)
        })
        .collect();
    assert!(groups.len() >= 8, "equal.txt: {} groups", groups.len());
    for (i, (line_a, a)) in groups.iter().enumerate() {
        for (j, (line_b, b)) in groups.iter().enumerate() {
            for x in a {
                for y in b {
                    if i == j {
                        assert_eq!(x, y, "equal.txt:{line_a}");
                        assert_eq!(hash_of(x), hash_of(y), "equal.txt:{line_a}: hash");
                    } else {
                        assert_ne!(x, y, "equal.txt:{line_a} vs {line_b}");
                    }
                }
            }
        }
    }
}

#[test]
fn minting_examples() {
    table("mint.txt", 6, |line| {
        let f = fields("mint.txt", 0, line, 7);
        let port: u16 = f[1].parse().unwrap();
        let ip = if f[2] == "-" {
            None
        } else {
            Some(f[2].parse::<IpAddr>().unwrap())
        };
        let ibip_port: u16 = f[3].parse().unwrap();
        let date = IbiDate::parse_iso(&f[4]).map_err(|e| e.to_string())?;
        let m = mint_ports(&f[0], port, ip, ibip_port, &date).map_err(|e| e.to_string())?;
        same("rep", m.rep.as_str(), f[5].as_str())?;
        same(
            "rep prefix",
            rep_prefix(&f[0], port).map_err(|e| e.to_string()),
            Ok(m.rep.prefix().to_string()),
        )?;
        same(
            "ibip",
            m.ibip.as_ref().map(|i| i.as_str()).unwrap_or("-"),
            f[6].as_str(),
        )?;
        // What was minted reads back to the same date.
        same("rep date", m.rep.date(), date.clone())?;
        if let Some(i) = &m.ibip {
            same("ibip date", i.date(), date)?;
        }
        Ok(())
    });
}

#[test]
fn examples_1_and_2_of_chapter_5() {
    let ip: IpAddr = "150.163.34.243".parse().unwrap();
    assert_eq!(ibip_prefix(ip, 800), "8JMKD3MGP8W");
    let date = IbiDate::new(1_234_806_360, "").unwrap();
    assert_eq!(date, IbiDate::parse_iso("2009-02-16T17:46:00Z").unwrap());
    assert_eq!(date.ibip_suffix().unwrap(), "34PGRBS");
    assert_eq!(
        rep_prefix("mtc-m18.sid.inpe.br", 80).unwrap(),
        "sid.inpe.br/mtc-m18"
    );
    let m = mint_ports("mtc-m18.sid.inpe.br", 80, Some(ip), 800, &date).unwrap();
    assert_eq!(m.rep.as_str(), "sid.inpe.br/mtc-m18/2009/02.16.17.46");
    assert_eq!(m.ibip.as_ref().unwrap().as_str(), "8JMKD3MGP8W/34PGRBS");
    let with_port = Rep::parse("sid.inpe.br/mtc-m18@80/2009/02.16.17.46").unwrap();
    assert_eq!(m.rep, with_port);
    assert_eq!(
        with_port.as_str(),
        "sid.inpe.br/mtc-m18@80/2009/02.16.17.46"
    );
}

#[test]
fn rejected_inputs_with_their_messages() {
    table("rejected.txt", 100, |line| {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 3 {
            return Err(format!("expected 3 TAB-separated fields in {line:?}"));
        }
        let (kind, want) = (f[0], f[2]);
        let input = match f[1].strip_prefix('<').and_then(|s| s.strip_suffix(" x>")) {
            Some(n) => "x".repeat(n.parse().unwrap()),
            None => f[1].to_string(),
        };
        let got = match kind {
            "ibi" => Ibi::parse(&input).map(|_| ()),
            "rep" => Rep::parse(&input).map(|_| ()),
            "ibip" => Ibip::parse(&input).map(|_| ()),
            "date" => IbiDate::parse_iso(&input).map(|_| ()),
            "host" => rep_prefix(&input, 80).map(|_| ()),
            "granularity" => Granularity::parse(&input).map(|_| ()),
            other => return Err(format!("unknown kind {other:?}")),
        };
        same(kind, got.map_err(|e| e.to_string()), Err(want.to_string()))
    });
}

#[test]
fn temporal_distributor_table_6_2_and_hand_worked_runs() {
    let mut last: Option<PosixTime> = None;
    let mut seq = String::new();
    let mut runs = 0;
    table("distributor.txt", 24, |line| {
        let f = fields("distributor.txt", 0, line, 7);
        if f[0] != seq {
            seq = f[0].clone();
            last = None;
        }
        let r = Granularity::parse(&f[1]).map_err(|e| e.to_string())?;
        let current = PosixTime::parse(&f[3]).map_err(|e| e.to_string())?;
        let decision = next_date(current, last, r);
        last = Some(decision.for_suffix);
        runs += 1;
        let item = &f[2];
        same(
            &format!("{seq} {item} creation"),
            decision.creation.to_string(),
            f[4].clone(),
        )?;
        same(
            &format!("{seq} {item} date-for-suffix"),
            decision.for_suffix.to_string(),
            f[5].clone(),
        )?;
        let date = decision
            .for_suffix
            .to_ibi_date()
            .map_err(|e| e.to_string())?;
        same(
            &format!("{seq} {item} suffix"),
            date.rep_suffix(),
            f[6].clone(),
        )
    });
    assert_eq!(runs, 24);
}
