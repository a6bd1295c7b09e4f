//! What only an Archive does in minting its identifiers (the protocol's minting, the rep
//! from a hostname, port and date and the IBIp from an IP address, port and date, is
//! `ibi::mint`): the check that its `[minting]` settings mint at every date of its
//! temporal distributor's granularity, and the temporal distributor itself
//! ([`distributor`]), which gives the date; nothing here but the distributor's state file
//! keeps state.

pub mod distributor;

use ::ibi::mint::rep_prefix;
use ::ibi::{IbiError, MAX_LEN};

use distributor::Granularity;

/// Whether reps can be minted from `host` and `port` whatever the date the temporal
/// distributor gives at granularity `r`: the prefix is valid ([`rep_prefix`]) and the
/// longest rep made with it, a date in `YYYY/MM.DD.hh.mm` plus the seconds and the
/// fraction's digits `r` calls for, is no longer than an IBI may be. The checks of
/// [`mint_ports`] that do not depend on the date, for a configuration to be refused when
/// it is read rather than at the first item minted.
pub fn check_rep_settings(host: &str, port: u16, r: Granularity) -> Result<(), IbiError> {
    let prefix = rep_prefix(host, port)?;
    let nanos = r.as_nanos();
    // `/YYYY/MM.DD.hh.mm`, then `.ss` below a minute, then `.` and a digit per tenth.
    let mut longest = prefix.len() + "/2000/01.01.00.00".len();
    if nanos < 60_000_000_000 {
        longest += ".00".len();
    }
    if nanos < 1_000_000_000 {
        let digits = 9 - (nanos.to_string().len() - 1);
        longest += 1 + digits;
    }
    if longest > MAX_LEN {
        return Err(IbiError::new(format!(
            "the reps minted under it would be up to {longest} bytes long (at granularity {r}), more than the {MAX_LEN} an IBI may have"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::ibi::mint::mint_ports;
    use ::ibi::IbiDate;

    #[test]
    fn settings_are_judged_for_every_date_of_their_granularity() {
        let r = |s: &str| Granularity::parse(s).unwrap();
        assert!(check_rep_settings("mtc-m18.sid.inpe.br", 80, r("0.000000001")).is_ok());
        assert_eq!(
            check_rep_settings("localhost", 80, r("1"))
                .unwrap_err()
                .to_string(),
            "invalid hostname \"localhost\": it has no dot, so it cannot be split into a word and a subdomain"
        );
        // A prefix of 235 bytes: reps of 252 bytes with a date to the minute, 255 to the
        // second, 257 with one decimal.
        let host = format!(
            "a.{}.{}.{}.{}.org",
            "b".repeat(59),
            "c".repeat(59),
            "d".repeat(59),
            "e".repeat(49)
        );
        assert_eq!(rep_prefix(&host, 80).unwrap().len(), 235);
        assert!(check_rep_settings(&host, 80, r("60")).is_ok());
        assert!(check_rep_settings(&host, 80, r("1")).is_ok());
        assert_eq!(
            check_rep_settings(&host, 80, r("0.1")).unwrap_err().to_string(),
            "the reps minted under it would be up to 257 bytes long (at granularity 0.1), more than the 255 an IBI may have"
        );
        // What the check allows mints, at the finest date of the granularity.
        let date = IbiDate::new(1_234_806_359, "99").unwrap();
        let m = mint_ports(
            &host,
            80,
            None,
            800,
            &IbiDate::new(1_234_806_359, "").unwrap(),
        )
        .unwrap();
        assert_eq!(m.rep.as_str().len(), 255);
        assert!(check_rep_settings(&host, 80, r("0.01")).is_err());
        assert!(mint_ports(&host, 80, None, 800, &date).is_err());
    }
}
