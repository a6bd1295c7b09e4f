//! `ibi-resolver memory` and `forget`: the location memory, shown, or one IBI forgotten.

use std::path::PathBuf;

use ibi_resolver::config::Config;
use ibi_resolver::registry::Location;

use super::{CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser, config: PathBuf) -> CliResult {
    let Some((config, operands)) = super::config_and_operands(parser, "memory", config, 1)? else {
        return Ok(());
    };
    let ibi = match operands.first() {
        Some(one) => Some(super::parse_ibi(one)?.key()),
        None => None,
    };
    let config = super::load(&config)?;
    let rows = super::open(&config)?
        .locations(ibi.as_deref())
        .map_err(|e| CliError::failed(e.to_string()))?;
    if let (Some(ibi), true) = (&ibi, rows.is_empty()) {
        return Err(CliError::failed(format!("{ibi} is not remembered")));
    }
    super::print_text(&locations(&rows, &config))
}

/// One line per remembered IBI, the most recently used first.
fn locations(rows: &[Location], config: &Config) -> String {
    let now = ibi_resolver::memory::now_ms();
    let expiry = i64::try_from(config.memory_expiry.as_millis()).unwrap_or(i64::MAX);
    let time = |ms: i64| ibi::time::iso8601(ms.div_euclid(1000));
    let mut out = String::new();
    for row in rows {
        let verified = if row.verified_ms == 0 {
            "never".to_string()
        } else {
            time(row.verified_ms)
        };
        let expired = if now - row.verified_ms >= expiry {
            " (expired)"
        } else {
            ""
        };
        out.push_str(&format!(
            "{}  {}  used {}  verified {verified}{expired}\n",
            row.ibi,
            row.archive,
            time(row.used_ms)
        ));
    }
    out
}

/// `ibi-resolver forget IBI`.
pub fn forget(parser: &mut lexopt::Parser, config: PathBuf) -> CliResult {
    let Some((config, operands)) = super::config_and_operands(parser, "forget", config, 1)? else {
        return Ok(());
    };
    let ibi = super::parse_ibi(&super::one("forget", operands, "IBI")?)?.key();
    let config = super::load(&config)?;
    if super::open(&config)?
        .forget_location(&ibi)
        .map_err(|e| CliError::failed(e.to_string()))?
    {
        super::print_text(&format!("forgot {ibi}\n"))
    } else {
        Err(CliError::failed(format!("{ibi} is not remembered")))
    }
}
