//! The included Archives as resolutions ask them ([`Archives`]), and the *home* of an
//! IBI among them: the Archive the identifier itself says it was minted at.
//!
//! An IBI codes where it was minted (the generation standard): a rep the host name and
//! port of its prefix (`sid.inpe.br/mtc-m18@80/…` was minted at `mtc-m18.sid.inpe.br`,
//! port 80), an IBIp an IP address and port (`8JMKD3MGP8W/…` at 150.163.34.243, port 800).
//! Its home is every included Archive that was minted at the same place:
//! - a rep: the Archives whose service IBI is a rep of the same prefix (host and port,
//!   case, `@`/`.` and port 80 as the standard compares them);
//! - an IBIp: the Archives whose service IBI is an IBIp of the same IP address and port,
//!   and those whose `archiveip` is that address — once the resolver reached their
//!   service at that address ([`Included::ip`]).
//!
//! An Archive cannot make itself another's home. Its service IBI is the one the
//! resolver's operator registered (§7.1), never a value of the inclusion request, and the
//! Archive is asked at `/<service IBI>` of its address, so it is the home only of what was
//! minted at the host or address its registered service IBI names. The `archiveip` an
//! inclusion request declares counts only once the resolver has asked
//! `inclusionConfirmationRequest` at that very address and the Archive answered
//! `confirmation yes` there as that service IBI: another Archive's address answers for
//! its own service IBI, not for a newcomer's. And a home is only asked first: what it
//! answers is taken as a remembered Archive's answer is, never against the rules of who
//! may hold an item (`crate::resolve`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::ops::Deref;

use ibi::{Ibi, Rep};

use crate::registry::Included;

/// Where an IBI was minted, as homes are found by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Place {
    /// A rep's prefix, canonical (`sid.inpe.br/mtc-m18`).
    Prefix(String),
    /// An IBIp's address and port.
    Address(IpAddr, u16),
}

/// The prefix of `rep` in its canonical spelling: lower case, port 80 left out.
fn prefix_of(rep: &Rep) -> String {
    let canonical = rep.canonical();
    // The canonical spelling keeps the prefix's two components before the second `/`.
    let end = canonical
        .match_indices('/')
        .nth(1)
        .map_or(canonical.len(), |(i, _)| i);
    canonical[..end].to_string()
}

fn place_of(ibi: &Ibi) -> Place {
    match ibi {
        Ibi::Rep(rep) => Place::Prefix(prefix_of(rep)),
        Ibi::Ibip(ibip) => Place::Address(ibip.ip(), ibip.port()),
    }
}

/// The included Archives, in the registry's order, and where each was minted.
#[derive(Debug, Default)]
pub struct Archives {
    list: Vec<Included>,
    /// The Archives (indices) of each place their service IBI codes.
    by_place: HashMap<Place, Vec<usize>>,
    /// The Archives (indices) reached at each `archiveip`.
    by_ip: HashMap<IpAddr, Vec<usize>>,
}

impl Archives {
    pub fn new(list: Vec<Included>) -> Archives {
        let mut by_place: HashMap<Place, Vec<usize>> = HashMap::new();
        let mut by_ip: HashMap<IpAddr, Vec<usize>> = HashMap::new();
        for (i, a) in list.iter().enumerate() {
            by_place.entry(place_of(&a.serviceibi)).or_default().push(i);
            if let Some(ip) = a.ip {
                by_ip.entry(ip).or_default().push(i);
            }
        }
        Archives {
            list,
            by_place,
            by_ip,
        }
    }

    /// The home of `ibi`: the indices of the Archives it was minted at, in the registry's
    /// order, none twice.
    pub fn homes(&self, ibi: &Ibi) -> Vec<usize> {
        let place = place_of(ibi);
        let mut homes: Vec<usize> = self.by_place.get(&place).cloned().unwrap_or_default();
        if let Place::Address(ip, _) = place {
            homes.extend(self.by_ip.get(&ip).into_iter().flatten());
            homes.sort_unstable();
            homes.dedup();
        }
        homes
    }

    /// The Archives as a list.
    pub fn list(&self) -> &[Included] {
        &self.list
    }
}

impl Deref for Archives {
    type Target = [Included];

    fn deref(&self) -> &[Included] {
        &self.list
    }
}

impl From<Vec<Included>> for Archives {
    fn from(list: Vec<Included>) -> Archives {
        Archives::new(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn included(service: &str, ip: Option<&str>) -> Included {
        let serviceibi = Ibi::parse(service).unwrap();
        Included {
            key: serviceibi.key(),
            serviceibi,
            address: "archive.example.org".into(),
            ip: ip.map(|ip| ip.parse().unwrap()),
            recorded: Default::default(),
        }
    }

    fn homes(archives: &Archives, ibi: &str) -> Vec<usize> {
        archives.homes(&Ibi::parse(ibi).unwrap())
    }

    #[test]
    fn a_rep_is_at_home_where_a_service_ibi_of_its_prefix_is() {
        let archives = Archives::new(vec![
            // Example 10.1's Archive: its service IBI and items of mtc-m18.sid.inpe.br.
            included("sid.inpe.br/mtc-m18@80/2008/03.17.15.17", None),
            included("sid.inpe.br/mtc-m19/2009/08.21.17.02", None),
            included("sid.inpe.br/mtc-m18.8080/2010/01.01.00.00", None),
        ]);
        // Port 80 spelt or not, any case: the same prefix.
        for item in [
            "sid.inpe.br/mtc-m18@80/2009/07.21.14.43",
            "sid.inpe.br/mtc-m18/2009/07.21.14.43",
            "SID.inpe.br/MTC-M18.80/2009/07.21.14.43",
        ] {
            assert_eq!(homes(&archives, item), [0], "{item}");
        }
        // Another port is another place; so is another word or subdomain.
        assert_eq!(
            homes(&archives, "sid.inpe.br/mtc-m18@8080/2011/01.01.00.00"),
            [2]
        );
        assert_eq!(
            homes(&archives, "sid.inpe.br/mtc-m17/2009/07.21.14.43"),
            [] as [usize; 0]
        );
        assert_eq!(
            homes(&archives, "dpi.inpe.br/mtc-m18/2009/07.21.14.43"),
            [] as [usize; 0]
        );
    }

    #[test]
    fn an_ibip_is_at_home_at_its_address_by_service_ibi_or_by_an_archiveip_reached() {
        // 8JMKD3MGP8W codes 150.163.34.243 port 800 (Example 1 of the generation
        // standard); LK47B6W another address.
        let archives = Archives::new(vec![
            included("8JMKD3MGP8W/34PGRBS", None),
            included(
                "sid.inpe.br/mtc-m18@80/2008/03.17.15.17",
                Some("150.163.34.243"),
            ),
            included("urlib.net/www/2012/01.01.01.01", Some("150.163.34.244")),
            included("urlib.net/www/2012/01.01.01.02", None),
        ]);
        assert_eq!(homes(&archives, "8JMKD3MGP8W/35MME4E"), [0, 1]);
        assert_eq!(homes(&archives, "8jmkd3mgp8w/35mme4e"), [0, 1]);
        assert_eq!(homes(&archives, "LK47B6W/362SFKH"), [] as [usize; 0]);
    }
}
