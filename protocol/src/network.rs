//! Address blocks (CIDR): the networks whose clients an Archive lets read restricted
//! items (archive.toml's `access.networks`), and those a resolver lets in or asks.

use std::net::IpAddr;

/// An address block `a.b.c.d/n` or `x:y::/n` (a bare address is a block of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    addr: IpAddr,
    bits: u8,
}

impl Network {
    pub fn parse(s: &str) -> Result<Network, String> {
        let bad = || format!("access network {s:?} is not an address block such as 150.163.0.0/16");
        let (addr, bits) = match s.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(b) => b.parse::<u8>().ok().filter(|&b| b <= max).ok_or_else(bad)?,
        };
        Ok(Network { addr, bits })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                masked(u32::from(n).into(), u32::from(a).into(), self.bits, 32)
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => masked(u128::from(n), u128::from(a), self.bits, 128),
            _ => false,
        }
    }
}

fn masked(net: u128, addr: u128, bits: u8, width: u32) -> bool {
    if bits == 0 {
        return true;
    }
    let shift = width - u32::from(bits);
    net >> shift == addr >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_match_by_prefix() {
        let n = Network::parse("150.163.0.0/16").unwrap();
        assert!(n.contains("150.163.2.175".parse().unwrap()));
        assert!(n.contains("::ffff:150.163.2.175".parse().unwrap()));
        assert!(!n.contains("150.164.0.1".parse().unwrap()));
        assert!(Network::parse("::1")
            .unwrap()
            .contains("::1".parse().unwrap()));
        assert!(Network::parse("0.0.0.0/0")
            .unwrap()
            .contains("8.8.8.8".parse().unwrap()));
        assert!(Network::parse("10.0.0.0/33").is_err());
    }
}
