//! Minting: the rep from a hostname, port and date (generation standard, Algorithms 1–3) and
//! the IBIp from an IP address, port and date (Algorithms 5–7). The date is given: an
//! Archive's comes from its temporal distributor, the resolver's service IBI is minted
//! for the moment of `ibi-resolver init`; nothing here waits or keeps state.

use crate::ip::{ip_text, text_to_number};
use crate::rep::check_prefix;
use crate::{base27, shown, IbiDate, IbiError, Ibip, Rep};
use std::net::IpAddr;

/// The longest hostname (RFC 1035 §2.3.4, written without its final dot).
const MAX_HOST_LEN: usize = 253;

/// The IBIs minted for one new item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Minted {
    pub rep: Rep,
    pub ibip: Option<Ibip>,
}

/// Algorithm 1: the rep prefix of a hostname and port. As the product contract reads it, the
/// hostname is split at its *first* dot (`mtc-m18.sid.inpe.br` → `sid.inpe.br/mtc-m18`);
/// the printed algorithm drops the subdomain's dots, which the standard's own examples
/// contradict. The hostname is lower-cased (Algorithm 1 takes it in lower case); one final
/// dot of an absolute name is dropped. Port 80 is left out; any other port follows the
/// word after `.`, the recommended separator (§6).
pub fn rep_prefix(host: &str, port: u16) -> Result<String, IbiError> {
    let bad = |why: String| IbiError::new(format!("invalid hostname {}: {why}", shown(host)));
    if port == 0 {
        return Err(IbiError::new("port 0 is out of range"));
    }
    if host.len() > MAX_HOST_LEN {
        return Err(bad(format!("it is longer than {MAX_HOST_LEN} bytes")));
    }
    let lower = host.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    let Some((word, subdomain)) = name.split_once('.') else {
        return Err(bad(
            "it has no dot, so it cannot be split into a word and a subdomain".into(),
        ));
    };
    check_prefix(subdomain, word).map_err(bad)?;
    Ok(if port == 80 {
        format!("{subdomain}/{word}")
    } else {
        format!("{subdomain}/{word}.{port}")
    })
}

/// Algorithm 5: the IBIp prefix of an IP address and port — the address text (see
/// [`crate::ip`]) read in base 11 (IPv4) or 17 (IPv6), written in base 27, then `W`
/// (IPv4) or `X` (IPv6), then the port in base 27 unless it is 800. Port 0 has no IBIp
/// (the prefix made would not parse); `mint` refuses it.
pub fn ibip_prefix(ip: IpAddr, port: u16) -> String {
    let n = text_to_number(&ip_text(ip)).expect("the text of an address is an address");
    let mut out = base27::encode(&n);
    out.push(if ip.is_ipv4() { 'W' } else { 'X' });
    if port != 800 {
        out.push_str(&base27::encode_u64(u64::from(port)));
    }
    out
}

/// The port of the rep form when none is given: 80, which the rep leaves out (§6).
pub const REP_DEFAULT_PORT: u16 = 80;

/// The port coded in the IBIp form when none is given: 800, which the IBIp leaves out. The
/// generation standard's Algorithm 5 takes the port of the label generator, not of the web
/// server, and adopts 800 for a host with a single generator (§7, after Table 7.6); its
/// examples pair port 80 in the rep with no coded port in the IBIp
/// (`sid.inpe.br/mtc-m18@80/2009/07.21.13.23` is `8JMKD3MGP8W/35MME4E`). So the two ports
/// are set apart, each with its own default: `ibi-archive ibi mint` (--port, --ibip-port)
/// and `ibi-archive new` (`[minting]` port, ibipport) follow this one rule.
pub const IBIP_DEFAULT_PORT: u16 = 800;

/// Algorithms 3 and 7: the rep of `host`:`rep_port` and, given the server's IP, the IBIp
/// of `ip`:`ibip_port`, for an item identified at `date` (for an Archive's item, the
/// output of its temporal distributor). See [`IBIP_DEFAULT_PORT`] for the two ports.
pub fn mint_ports(
    host: &str,
    rep_port: u16,
    ip: Option<IpAddr>,
    ibip_port: u16,
    date: &IbiDate,
) -> Result<Minted, IbiError> {
    let rep = Rep::parse(&format!(
        "{}/{}",
        rep_prefix(host, rep_port)?,
        date.rep_suffix()
    ))?;
    let ibip = match ip {
        Some(_) if ibip_port == 0 => return Err(IbiError::new("port 0 is out of range")),
        Some(ip) => Some(Ibip::parse(&format!(
            "{}/{}",
            ibip_prefix(ip, ibip_port),
            date.ibip_suffix()?
        ))?),
        None => None,
    };
    Ok(Minted { rep, ibip })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_1_and_2() {
        let date = IbiDate::new(1_234_806_360, "").unwrap();
        let ip: IpAddr = "150.163.34.243".parse().unwrap();
        assert_eq!(
            rep_prefix("mtc-m18.sid.inpe.br", 80).unwrap(),
            "sid.inpe.br/mtc-m18"
        );
        assert_eq!(ibip_prefix(ip, 800), "8JMKD3MGP8W");
        let m = mint_ports("mtc-m18.sid.inpe.br", 80, Some(ip), 800, &date).unwrap();
        assert_eq!(m.rep.as_str(), "sid.inpe.br/mtc-m18/2009/02.16.17.46");
        assert_eq!(
            m.rep,
            Rep::parse("sid.inpe.br/mtc-m18@80/2009/02.16.17.46").unwrap()
        );
        assert_eq!(m.ibip.unwrap().as_str(), "8JMKD3MGP8W/34PGRBS");
        // Port 80 coded in the IBIp: Algorithm 5 writes it (base 27: 4U) after the W.
        let m = mint_ports("mtc-m18.sid.inpe.br", 80, Some(ip), 80, &date).unwrap();
        assert_eq!(m.rep.as_str(), "sid.inpe.br/mtc-m18/2009/02.16.17.46");
        assert_eq!(m.ibip.unwrap().as_str(), "8JMKD3MGP8W4U/34PGRBS");
        let m = mint_ports("mtc-m18.sid.inpe.br", 800, Some(ip), 800, &date).unwrap();
        assert_eq!(m.rep.as_str(), "sid.inpe.br/mtc-m18.800/2009/02.16.17.46");
        assert_eq!(m.ibip.unwrap().as_str(), "8JMKD3MGP8W/34PGRBS");
    }

    #[test]
    fn prefixes_of_other_ports_and_cases() {
        assert_eq!(
            rep_prefix("MTC-M18.SID.INPE.BR", 8080).unwrap(),
            "sid.inpe.br/mtc-m18.8080"
        );
        assert_eq!(rep_prefix("iconet.com.br", 80).unwrap(), "com.br/iconet");
        assert_eq!(
            rep_prefix("archive.example.org.", 80).unwrap(),
            "example.org/archive"
        );
        let ip: IpAddr = "150.163.34.243".parse().unwrap();
        assert_eq!(
            ibip_prefix(ip, 802),
            format!("8JMKD3MGP8W{}", base27::encode_u64(802))
        );
        let v6: IpAddr = "2001:252:0:1::2008:6".parse().unwrap();
        assert_eq!(ibip_prefix(v6, 800), "7URMDHLL9SSN2D89MX");
    }

    #[test]
    fn refusals() {
        for (host, port, want) in [
            ("localhost", 80, "invalid hostname \"localhost\": it has no dot, so it cannot be split into a word and a subdomain"),
            ("localhost.", 80, "invalid hostname \"localhost.\": it has no dot, so it cannot be split into a word and a subdomain"),
            ("a.b", 0, "port 0 is out of range"),
            ("-a.b.org", 80, "invalid hostname \"-a.b.org\": word \"-a\" starts with '-'"),
            ("a.b.1org", 80, "invalid hostname \"a.b.1org\": last word \"1org\" of the subdomain does not start with a letter"),
            ("a..org", 80, "invalid hostname \"a..org\": subdomain \".org\" has an empty word"),
            ("a_b.org", 80, "invalid hostname \"a_b.org\": word \"a_b\" holds '_', which is not a letter, digit or '-'"),
            (".org", 80, "invalid hostname \".org\": word is empty"),
        ] {
            assert_eq!(rep_prefix(host, port).unwrap_err().to_string(), want, "{host}");
        }
        let long = format!("a.{}", "b".repeat(252));
        assert_eq!(
            rep_prefix(&long, 80).unwrap_err().to_string(),
            format!(
                "invalid hostname \"a.{}\"... (254 bytes): it is longer than 253 bytes",
                "b".repeat(62)
            )
        );
        let early = IbiDate::new(0, "").unwrap();
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(
            mint_ports("a.b.org", 80, Some(ip), 800, &early)
                .unwrap_err()
                .to_string(),
            "date 1970-01-01T00:00:00Z is before 1995-08-01T00:00:00Z and has no IBIp suffix"
        );
        assert_eq!(
            mint_ports("a.b.org", 80, None, 800, &early)
                .unwrap()
                .rep
                .as_str(),
            "b.org/a/1970/01.01.00.00"
        );
    }
}
