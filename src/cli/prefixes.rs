//! `ibi-archive prefixes`: lists col/'s prefixes and remembers them in var/col-prefixes
//! for the service's IBIp lookups (see `ibi_archive::col_prefixes`).

use std::time::Duration;

use ::ibi::time::SystemClock;
use ibi_archive::col_prefixes::FileState;
use ibi_archive::store::Store;

use super::{CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    let Some(root) = super::root_only(parser, "prefixes")? else {
        return Ok(());
    };
    if !root.join("col").is_dir() {
        return Err(CliError::failed(format!(
            "prefixes: {}: no col/ directory",
            root.display()
        )));
    }
    let (prefixes, state) = Store::remember_prefixes(&root, Duration::from_secs(10), &SystemClock);
    match state {
        FileState::Held => {
            for (sub, wps) in &prefixes {
                for wp in wps {
                    println!("{}", ::ibi::logline::clean(&format!("{sub}/{wp}")));
                }
            }
            Ok(())
        }
        FileState::Unsettled => Err(CliError::failed(
            "prefixes: col/ kept changing for 10 s; var/col-prefixes not written",
        )),
        FileState::Unwritable => Err(CliError::failed(format!(
            "prefixes: cannot write {}: var/ is missing or not writable, or belongs to \
             another user than you (run this as var/'s owner or as root), or a name under \
             col/ holds a space or a control character",
            root.join("var")
                .join(ibi_archive::col_prefixes::FILE_NAME)
                .display()
        ))),
    }
}
