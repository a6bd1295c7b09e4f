//! `Ibi`, `Rep`, `Ibip` and `IbiDate` parsers never panic; what parses prints as it was
//! written and parses again to an equal value; dates survive every spelling (ISO 8601,
//! rep suffix, IBIp suffix).

#![no_main]

use ::ibi::{Ibi, IbiDate, Ibip, Rep, MAX_LEN};
use libfuzzer_sys::fuzz_target;

fn check_date(d: &IbiDate) {
    let iso = d.to_iso();
    let back = IbiDate::parse_iso(&iso).unwrap_or_else(|e| panic!("{iso}: {e}"));
    assert_eq!(&back, d, "ISO 8601 {iso}");
    let posix = if d.fraction().is_empty() {
        d.seconds().to_string()
    } else {
        format!("{}.{}", d.seconds(), d.fraction())
    };
    if d.seconds() >= 0 && posix.len() <= 64 {
        assert_eq!(&IbiDate::parse_iso(&posix).unwrap(), d, "POSIX {posix}");
    }
    let suffix = d.rep_suffix();
    let rep_text = format!("a.b/c/{suffix}");
    if rep_text.len() <= MAX_LEN {
        let rep = Rep::parse(&rep_text).unwrap_or_else(|e| panic!("{rep_text}: {e}"));
        assert_eq!(&rep.date(), d, "rep suffix {suffix}");
        assert_eq!(rep.suffix(), suffix);
    }
    if let Ok(coded) = d.ibip_suffix() {
        let back = IbiDate::from_ibip_suffix(&coded).unwrap_or_else(|e| panic!("{coded}: {e}"));
        assert_eq!(&back, d, "IBIp suffix {coded}");
        let ibip_text = format!("8JMKD3MGP8W/{coded}");
        if ibip_text.len() <= MAX_LEN {
            let p = Ibip::parse(&ibip_text).unwrap_or_else(|e| panic!("{ibip_text}: {e}"));
            assert_eq!(&p.date(), d);
        }
    } else {
        assert!(d.seconds() < ::ibi::date::IBIP_EPOCH);
    }
}

fn check_rep(s: &str, rep: &Rep) {
    assert!(s.len() <= MAX_LEN);
    assert_eq!(rep.to_string(), s);
    assert_eq!(rep.as_str(), s);
    let again = Rep::parse(&rep.to_string()).expect("a printed rep parses");
    assert_eq!(&again, rep);
    assert_eq!(again.as_str(), rep.as_str());
    assert_eq!(
        format!("{}/{}", rep.prefix(), rep.suffix()),
        s,
        "prefix and suffix"
    );
    assert_eq!(
        format!(
            "{}/{}/{}/{}",
            rep.subdomain(),
            rep.word_port(),
            rep.year(),
            rep.day_time()
        ),
        s
    );
    // Equal reps share their canonical spelling, which is itself a rep equal to them.
    let canonical = Rep::parse(rep.canonical()).expect("the canonical spelling parses");
    assert_eq!(&canonical, rep);
    assert_eq!(canonical.canonical(), rep.canonical());
    // Case and the port separator do not matter.
    let upper = Rep::parse(&s.to_ascii_uppercase()).expect("upper case parses");
    assert_eq!(&upper, rep);
    check_date(&rep.date());
}

fn check_ibip(s: &str, p: &Ibip) {
    assert!(s.len() <= MAX_LEN);
    assert_eq!(p.to_string(), s);
    let again = Ibip::parse(s).expect("a printed IBIp parses");
    assert_eq!(&again, p);
    assert_eq!(again.ip(), p.ip());
    assert_eq!(again.port(), p.port());
    assert_eq!(format!("{}/{}", p.prefix(), p.suffix()), s);
    let lower = Ibip::parse(&s.to_ascii_lowercase()).expect("lower case parses");
    assert_eq!(&lower, p);
    assert_eq!(lower.date(), p.date());
    // One spelling up to case: the suffix re-coded from the date is the suffix read.
    let coded = p
        .date()
        .ibip_suffix()
        .expect("an IBIp date has an IBIp suffix");
    assert!(
        coded.eq_ignore_ascii_case(p.suffix()),
        "{s}: suffix re-coded as {coded}"
    );
    check_date(&p.date());
}

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let s = s.as_ref();
    let rep = Rep::parse(s);
    let ibip = Ibip::parse(s);
    match Ibi::parse(s) {
        Ok(Ibi::Rep(r)) => {
            check_rep(s, &r);
            assert_eq!(rep.as_ref().ok(), Some(&r));
            assert_eq!(Ibi::parse(&r.to_string()).unwrap(), Ibi::Rep(r.clone()));
        }
        Ok(Ibi::Ibip(p)) => {
            check_ibip(s, &p);
            assert_eq!(ibip.as_ref().ok(), Some(&p));
            assert_eq!(Ibi::parse(&p.to_string()).unwrap(), Ibi::Ibip(p.clone()));
        }
        Err(_) => {
            // Ibi::parse picks the form by its slashes; neither form may accept what it
            // refused.
            assert!(rep.is_err(), "Rep accepts what Ibi refuses: {s:?}");
            assert!(ibip.is_err(), "Ibip accepts what Ibi refuses: {s:?}");
        }
    }
    if let Ok(d) = IbiDate::parse_iso(s) {
        check_date(&d);
    }
    if let Ok(d) = IbiDate::from_ibip_suffix(s) {
        check_date(&d);
        let coded = d.ibip_suffix().unwrap();
        assert!(coded.eq_ignore_ascii_case(s), "{s:?} re-coded as {coded}");
    }
});
