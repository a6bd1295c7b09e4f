//! Round trips of the identifier layer over large ranges, and parsers fed garbage: every
//! encoding decodes to what was encoded, every parse gives back its spelling, nothing panics.

use ::ibi::base27::{self, Natural};
use ::ibi::date::{IBIP_EPOCH, MAX_SECONDS, MIN_SECONDS};
use ::ibi::ip::{ip_text, ipv4_from_number, ipv6_from_number, text_to_number};
use ::ibi::mint::{ibip_prefix, mint_ports};
use ::ibi::{Ibi, IbiDate, Ibip, Rep};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

fn rng() -> StdRng {
    StdRng::seed_from_u64(0x1b1_2011)
}

#[test]
fn base27_round_trips_small_and_huge() {
    for n in (0..200_000u64)
        .chain((0..64).map(|k| 1u64 << k))
        .chain([u64::MAX])
    {
        let coded = base27::encode_u64(n);
        assert_eq!(
            base27::decode(&coded).and_then(|v| v.to_u64()),
            Some(n),
            "{n}"
        );
    }
    let mut rng = rng();
    for _ in 0..2_000 {
        let len = rng.random_range(1..=120);
        let mut dec: String = (0..len)
            .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
            .collect();
        dec = dec.trim_start_matches('0').to_string();
        if dec.is_empty() {
            dec.push('0');
        }
        let coded = base27::from_decimal(&dec).unwrap();
        assert_eq!(base27::to_decimal(&coded).as_deref(), Some(dec.as_str()));
        assert!(dec == "0" || !coded.starts_with('2'), "{coded}");
        // And the other way: any numeral without a leading zero digit comes back as spelled.
        let len = rng.random_range(1..=80);
        let mut s: String = (0..len)
            .map(|_| char::from(base27::DIGITS[rng.random_range(0..27)]))
            .collect();
        if s.len() > 1 && s.starts_with('2') {
            s.replace_range(..1, "3");
        }
        assert_eq!(base27::encode(&base27::decode(&s).unwrap()), s);
    }
}

#[test]
fn natural_conversions_agree_with_u128() {
    let mut rng = rng();
    for _ in 0..5_000 {
        let n: u128 = rng.random::<u128>() >> rng.random_range(0..128);
        let mut nat = Natural::zero();
        for d in n.to_string().bytes() {
            nat.mul_add_small(10, u32::from(d - b'0'));
        }
        assert_eq!(nat.to_decimal(), n.to_string());
        for radix in [11u32, 17, 27] {
            let mut want = Vec::new();
            let mut m = n;
            loop {
                want.push((m % u128::from(radix)) as u32);
                m /= u128::from(radix);
                if m == 0 {
                    break;
                }
            }
            want.reverse();
            assert_eq!(nat.to_digits(radix), want, "{n} in base {radix}");
        }
    }
}

#[test]
fn ipv4_sweep_through_prefixes() {
    let mut x: u64 = 0;
    while x <= u64::from(u32::MAX) {
        let ip = Ipv4Addr::from(x as u32);
        let n = text_to_number(&ip.to_string()).unwrap();
        assert_eq!(ipv4_from_number(&n), Some((ip, ip.to_string())));
        let p = Ibip::parse(&format!("{}/34PGRBS", ibip_prefix(IpAddr::V4(ip), 800))).unwrap();
        assert_eq!(p.ip(), IpAddr::V4(ip));
        x += 99_991;
    }
}

#[test]
fn ipv6_samples_through_prefixes() {
    let mut rng = rng();
    for i in 0..20_000 {
        let mut groups: [u16; 8] = rng.random();
        // Zero runs of every length and place, so that "::" lands everywhere.
        let (start, len) = (rng.random_range(0..8), rng.random_range(0..=8));
        for g in groups.iter_mut().skip(start).take(len) {
            *g = 0;
        }
        if i % 7 == 0 {
            groups[0] = 0;
        }
        for g in groups.iter_mut() {
            if rng.random_bool(0.3) {
                *g &= 0x00ff;
            }
        }
        let ip = Ipv6Addr::from(groups);
        let text = ip_text(IpAddr::V6(ip));
        assert_eq!(text.parse::<Ipv6Addr>().unwrap(), ip, "{text}");
        let n = text_to_number(&text).unwrap();
        assert_eq!(ipv6_from_number(&n), Some((ip, text.clone())), "{text}");
        let port = rng.random_range(1..=u16::MAX);
        let s = format!("{}/34PGRBS", ibip_prefix(IpAddr::V6(ip), port));
        let p = Ibip::parse(&s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (p.ip(), p.ip_text(), p.port()),
            (IpAddr::V6(ip), text.as_str(), port)
        );
    }
}

fn random_date(rng: &mut StdRng, from: i64) -> IbiDate {
    let secs = rng.random_range(from..=MAX_SECONDS);
    let digits = rng.random_range(0..=9);
    let frac: String = (0..digits)
        .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
        .collect();
    // Whole minutes and whole seconds often, as minting makes them.
    match rng.random_range(0..4) {
        0 => IbiDate::new(secs - secs.rem_euclid(60), "").unwrap(),
        1 => IbiDate::new(secs, "").unwrap(),
        _ => IbiDate::new(secs, &frac).unwrap(),
    }
}

#[test]
fn dates_through_both_suffixes_and_iso() {
    let mut rng = rng();
    for i in 0..50_000 {
        let date = random_date(&mut rng, if i % 2 == 0 { MIN_SECONDS } else { IBIP_EPOCH });
        let rep_suffix = date.rep_suffix();
        let rep = Rep::parse(&format!("example.org/archive/{rep_suffix}")).unwrap();
        assert_eq!(rep.date(), date, "{rep_suffix}");
        assert_eq!(rep.suffix(), rep_suffix);
        assert_eq!(IbiDate::parse_iso(&date.to_iso()).unwrap(), date);
        if date.seconds() >= IBIP_EPOCH {
            let coded = date.ibip_suffix().unwrap();
            let ibip = Ibip::parse(&format!("LK47B6W/{coded}")).unwrap();
            assert_eq!(ibip.date(), date, "{coded}");
            assert_eq!(ibip.date().rep_suffix(), rep_suffix);
        } else {
            assert!(date.ibip_suffix().is_err());
        }
    }
}

#[test]
fn dates_keep_their_order_in_ibip_suffix_numbers() {
    // Later whole seconds have larger IBIp numbers: the coded integer part is monotonic.
    let mut rng = rng();
    let mut dates: Vec<IbiDate> = (0..5_000)
        .map(|_| random_date(&mut rng, IBIP_EPOCH))
        .collect();
    dates.sort();
    let nums: Vec<u64> = dates
        .iter()
        .map(|d| {
            let s = d.ibip_suffix().unwrap();
            let int = s.split('W').next().unwrap().to_string();
            base27::decode(&int).unwrap().to_u64().unwrap()
        })
        .collect();
    assert!(nums.windows(2).all(|w| w[0] <= w[1]));
}

fn mixed_case(rng: &mut StdRng, s: &str) -> String {
    s.chars()
        .map(|c| {
            if rng.random_bool(0.5) {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

#[test]
fn spelling_survives_parse_and_display() {
    let mut rng = rng();
    let hosts = [
        "mtc-m18.sid.inpe.br",
        "banon.iconet.com.br",
        "a.b",
        "x-1.y-2.example.org",
    ];
    for _ in 0..5_000 {
        let date = random_date(&mut rng, IBIP_EPOCH);
        let host = hosts[rng.random_range(0..hosts.len())];
        let port = [80, 800, 8080, 1][rng.random_range(0..4)];
        let ip = if rng.random_bool(0.5) {
            IpAddr::V4(Ipv4Addr::from(rng.random::<u32>()))
        } else {
            IpAddr::V6(Ipv6Addr::from(rng.random::<u128>()))
        };
        let m = mint_ports(host, port, Some(ip), port, &date).unwrap();
        let ibip = m.ibip.unwrap();
        for canonical in [m.rep.as_str(), ibip.as_str()] {
            let spelled = mixed_case(&mut rng, canonical);
            let parsed = Ibi::parse(&spelled).unwrap();
            assert_eq!(parsed.to_string(), spelled);
            assert_eq!(parsed.as_str(), spelled);
            assert_eq!(parsed, Ibi::parse(canonical).unwrap());
            assert_eq!(parsed.date(), date);
            let again: Ibi = spelled.parse().unwrap();
            assert_eq!(again.as_str(), spelled);
        }
        // The separator and explicit port 80 survive as spelled but compare equal.
        if port == 80 {
            let spelled = format!("{}@80/{}", m.rep.prefix(), m.rep.suffix());
            let r = Rep::parse(&spelled).unwrap();
            assert_eq!(r.to_string(), spelled);
            assert_eq!(r, m.rep);
        }
    }
}

#[test]
fn garbage_never_panics() {
    let mut rng = rng();
    let alphabet: Vec<char> =
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ./@-:_ é\u{0}\u{7f}%"
            .chars()
            .collect();
    for _ in 0..30_000 {
        let len = rng.random_range(0..40);
        let s: String = (0..len)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())])
            .collect();
        let _ = Ibi::parse(&s);
        let _ = Rep::parse(&s);
        let _ = Ibip::parse(&s);
        let _ = IbiDate::parse_iso(&s);
        let _ = IbiDate::from_ibip_suffix(&s);
    }
    // Near misses of valid IBIs: one character replaced.
    let valid = [
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47.5",
        "8JMKD3MGP8W4U/34PGRBSW27",
        "7URMDHLL9SSN2D89MX/3EPGUE5",
    ];
    for good in valid {
        for i in 0..good.len() {
            for c in &alphabet {
                let mut s = good.to_string();
                s.replace_range(i..i + 1, &c.to_string());
                if let Ok(ibi) = Ibi::parse(&s) {
                    assert_eq!(ibi.as_str(), s);
                }
            }
        }
    }
}

/// Input longer than the longest IBI is refused for its length, before any of it is
/// decoded (a decoding would fail first and say so), and the message quotes its start only.
#[test]
fn huge_input_is_refused_at_once() {
    let huge = "8".repeat(10_000_000) + "W/" + &"3".repeat(10_000_000);
    for message in [
        Ibi::parse(&huge).unwrap_err().to_string(),
        Ibip::parse(&huge).unwrap_err().to_string(),
        Rep::parse(&huge).unwrap_err().to_string(),
    ] {
        assert!(
            message.ends_with("... (20000002 bytes): it is longer than 255 bytes"),
            "{}",
            &message[..message.len().min(300)]
        );
        assert!(message.len() < 200, "{} bytes of message", message.len());
    }
    // The longest IBIp allowed, all digits: decoded to its end, and refused for what its
    // coded IP decodes to.
    let long = format!("{}W/{}", "U".repeat(126), "U".repeat(126));
    let message = Ibip::parse(&long).unwrap_err().to_string();
    assert!(
        message.ends_with("does not decode to an IPv4 address"),
        "{message}"
    );
}
