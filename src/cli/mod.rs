//! The administrator's commands: each module parses its own flags with `lexopt` and calls
//! the library; `main.rs` dispatches to them.

use std::fmt;
use std::path::PathBuf;

pub mod check;
pub mod delete;
pub mod ibi;
pub mod new;
pub mod prefixes;
pub mod register;
pub mod serve;
pub mod service;
pub mod stats;

/// `ibi-archive --help`.
pub const USAGE: &str = "\
ibi-archive: the Archive service of the IBI resolution system, and its tools

As a CGI program (GATEWAY_INTERFACE set) it answers the resolver for the Archive
at $IBI_ARCHIVE_ROOT. From a shell:

  ibi-archive query [--root R] QUERYSTRING   the body the service would send
  ibi-archive describe [--root R] IBI        every property of an item
  ibi-archive ibi IBI                        parse an IBI (either form)
  ibi-archive ibi mint --host H --port P [--ip IP] --date T
  ibi-archive serve [--root R] [--listen 127.0.0.1:8080]   an embedded web server
  ibi-archive new [--root R] [OPTIONS] FILE...   mint an IBI and create an item
  ibi-archive check [--root R]                 validate the whole tree
  ibi-archive prefixes [--root R]              list col/'s prefixes for IBIp lookups
  ibi-archive delete [--root R] [--keep-content] IBI   make an item a tombstone
  ibi-archive include|exclude [--root R] [--resolver URL]   join or leave the resolver
  ibi-archive stats [--root R] [--csv] [--item IBI]   access counts

Each command has --help. The Archive root defaults to the current directory.
";

/// Writes `ibi-archive: <line>` on stderr, as one line with its control characters
/// escaped (see `logline`): warnings echo item.toml text and file names.
pub fn say(line: &str) {
    eprintln!(
        "{}",
        ibi_archive::logline::clean(&format!("ibi-archive: {line}"))
    );
}

/// The Archive root given with --root, else the current directory.
pub fn root_flag(root: Option<PathBuf>) -> PathBuf {
    root.unwrap_or_else(|| PathBuf::from("."))
}

/// An argument, as an error message shows it.
pub fn shown(arg: lexopt::Arg<'_>) -> String {
    match arg {
        lexopt::Arg::Short(c) => format!("-{c}"),
        lexopt::Arg::Long(l) => format!("--{l}"),
        lexopt::Arg::Value(v) => format!("{v:?}"),
    }
}

/// A command that failed: the exit code and the one line for stderr.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl CliError {
    /// Bad input on the command line or in its arguments (exit code 2).
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            code: 2,
            message: message.into(),
        }
    }

    /// An argument `cmd` does not take (exit code 2), pointing at its --help.
    pub fn unexpected(cmd: &str, arg: lexopt::Arg<'_>) -> CliError {
        CliError::usage(format!(
            "{cmd}: unexpected argument {}; see ibi-archive {cmd} --help",
            shown(arg)
        ))
    }

    /// The command ran but failed (exit code 1).
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<lexopt::Error> for CliError {
    fn from(e: lexopt::Error) -> CliError {
        CliError::usage(e.to_string())
    }
}

pub type CliResult = Result<(), CliError>;
