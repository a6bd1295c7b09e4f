//! `ibi-archive ibi`: reads an IBI of either form and prints what it codes, or mints the
//! IBIs of a host, port, IP and date (generation standard, Algorithms 1–3 and 5–7).

use super::{CliError, CliResult};
use ::ibi::mint::{mint_ports, IBIP_DEFAULT_PORT, REP_DEFAULT_PORT};
use ::ibi::pairs::PairList;
use ::ibi::{Ibi, IbiDate};
use std::net::IpAddr;

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::prelude::*;
    match parser.next()? {
        Some(Short('h') | Long("help")) => super::print_help("ibi"),
        Some(Value(v)) => {
            let v = v.string()?;
            if v == "mint" {
                return run_mint(parser);
            }
            if let Some(arg) = parser.next()? {
                return Err(CliError::unexpected(&super::PROGRAM, "ibi", arg));
            }
            show(&v)
        }
        Some(arg) => Err(CliError::unexpected(&super::PROGRAM, "ibi", arg)),
        None => Err(CliError::missing(&super::PROGRAM, "ibi", "IBI")),
    }
}

/// `ibi-archive ibi IBI`
fn show(text: &str) -> CliResult {
    let ibi = Ibi::parse(text).map_err(|e| CliError::usage(format!("ibi: {e}")))?;
    let mut pairs = PairList::new();
    pairs.push_word("date", ibi.date().to_iso());
    match &ibi {
        Ibi::Rep(rep) => {
            pairs.push_word("form", "rep");
            pairs.push_word("prefix", rep.prefix());
            pairs.push_word("suffix", rep.suffix());
            pairs.push_word("host", rep.host());
            pairs.push_word("port", rep.port().unwrap_or(REP_DEFAULT_PORT).to_string());
        }
        Ibi::Ibip(ibip) => {
            pairs.push_word("form", "ibip");
            pairs.push_word("prefix", ibip.prefix());
            pairs.push_word("suffix", ibip.suffix());
            pairs.push_word("ip", ibip.ip_text());
            pairs.push_word("port", ibip.port().to_string());
        }
    }
    super::print_text(&format!("{}\n", pairs.to_lines()))
}

/// `ibi-archive ibi mint --host H [--port P] [--ip IP [--ibip-port P]] --date T|now`
fn run_mint(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::prelude::*;
    let (mut host, mut port, mut ip, mut date) = (None, None, None, None);
    let mut ibip_port = None;
    let port_value = |v: String| {
        v.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(|| {
            CliError::usage(format!("ibi mint: invalid port {v:?}: expected 1 to 65535"))
        })
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("ibi mint"),
            Long("host") => host = Some(parser.value()?.string()?),
            Long("port") => port = Some(port_value(parser.value()?.string()?)?),
            Long("ibip-port") => ibip_port = Some(port_value(parser.value()?.string()?)?),
            Long("ip") => {
                let v = parser.value()?.string()?;
                let a = v.parse::<IpAddr>().map_err(|_| {
                    CliError::usage(format!(
                        "ibi mint: invalid IP {v:?}: expected an IPv4 or IPv6 address"
                    ))
                })?;
                ip = Some(a);
            }
            Long("date") => {
                let v = parser.value()?.string()?;
                date = Some(if v == "now" {
                    let now = ::ibi::time::SystemClock::now();
                    IbiDate::new(now, "").map_err(|e| CliError::failed(e.to_string()))?
                } else {
                    IbiDate::parse_iso(&v).map_err(|e| {
                        CliError::usage(format!(
                            "ibi mint: --date: {e} (expected ISO 8601 UTC, POSIX seconds or now)"
                        ))
                    })?
                });
            }
            _ => return Err(CliError::unexpected(&super::PROGRAM, "ibi mint", arg)),
        }
    }
    let missing = |flag: &str| CliError::missing(&super::PROGRAM, "ibi mint", flag);
    let host = host.ok_or_else(|| missing("--host"))?;
    let port = port.unwrap_or(REP_DEFAULT_PORT);
    let date = date.ok_or_else(|| missing("--date"))?;
    if ibip_port.is_some() && ip.is_none() {
        return Err(CliError::usage("ibi mint: --ibip-port needs --ip"));
    }
    let minted = mint_ports(
        &host,
        port,
        ip,
        ibip_port.unwrap_or(IBIP_DEFAULT_PORT),
        &date,
    )
    .map_err(|e| CliError::usage(format!("ibi mint: {e}")))?;
    let mut pairs = PairList::new();
    pairs.push_word("rep", minted.rep.as_str());
    if let Some(ibip) = &minted.ibip {
        pairs.push_word("ibip", ibip.as_str());
    }
    super::print_text(&format!("{}\n", pairs.to_lines()))
}
