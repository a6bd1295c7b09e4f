//! The administrator's commands: each module parses its own flags with `lexopt` and calls
//! the library; `main.rs` dispatches to them (a CGI request goes to `cgi_entry`).

use std::fmt;
use std::path::PathBuf;

pub mod check;
pub mod delete;
pub mod ibi;
pub mod init;
pub mod new;
pub mod prefixes;
pub mod query;
pub mod register;
pub mod serve;
pub mod stats;

/// The head of `ibi-archive --help`; the commands follow (see [`usage`]).
const USAGE_HEAD: &str = "\
ibi-archive: the Archive service of the IBI resolution system, and its tools

As a CGI program (GATEWAY_INTERFACE set) it answers the resolver for the Archive
at $IBI_ARCHIVE_ROOT. From a shell:

";

const USAGE_TAIL: &str = "
Every command has --help (or -h). The Archive root is --root, else $IBI_ARCHIVE_ROOT,
else the current directory. Exit status: 0 done, 1 failed, 2 bad arguments.
";

/// `ibi-archive --help` and `ibi-archive help`: what the program is, then each command's
/// synopsis and what it does.
pub fn usage() -> String {
    let mut out = String::from(USAGE_HEAD);
    for c in COMMANDS {
        for (i, line) in c.synopsis.lines().enumerate() {
            let line = format!("  ibi-archive {line}");
            if i > 0 {
                out.push_str(&format!("{line}\n"));
            } else if line.len() < 50 {
                out.push_str(&format!("{line:<50} {}\n", c.about));
            } else {
                out.push_str(&format!("{line}\n{:<50} {}\n", "", c.about));
            }
        }
    }
    out.push_str(USAGE_TAIL);
    out
}

const HELP_HELP: &str = "\
usage: ibi-archive help [COMMAND]

Prints what the program does and its commands, or, given a COMMAND, that command's
usage (the same as ibi-archive COMMAND --help).
";

/// One command of the administrator's tool.
pub struct Command {
    pub name: &'static str,
    /// How it is called, after `ibi-archive ` (one line per form).
    pub synopsis: &'static str,
    /// What it does, in a few words.
    pub about: &'static str,
    /// Its --help text; the first line is its usage.
    pub help: &'static str,
    pub run: fn(&mut lexopt::Parser) -> CliResult,
}

/// Every command, in the order `help` lists them.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "init",
        synopsis: "init [--root R] --address HOST[:PORT] [OPTIONS]",
        about: "create an Archive",
        help: init::HELP,
        run: init::run,
    },
    Command {
        name: "new",
        synopsis: "new [--root R] [OPTIONS] FILE...",
        about: "mint an IBI and create an item",
        help: new::HELP,
        run: new::run,
    },
    Command {
        name: "check",
        synopsis: "check [--root R]",
        about: "validate the whole Archive",
        help: check::HELP,
        run: check::run,
    },
    Command {
        name: "delete",
        synopsis: "delete [--root R] [--keep-content] IBI",
        about: "make an item a tombstone",
        help: delete::HELP,
        run: delete::run,
    },
    Command {
        name: "prefixes",
        synopsis: "prefixes [--root R]",
        about: "remember col/'s prefixes for IBIp lookups",
        help: prefixes::HELP,
        run: prefixes::run,
    },
    Command {
        name: "include",
        synopsis: "include [--root R] [--resolver URL]...",
        about: "join the resolvers",
        help: register::HELP,
        run: register::include,
    },
    Command {
        name: "exclude",
        synopsis: "exclude [--root R] [--resolver URL]...",
        about: "leave the resolvers",
        help: register::HELP,
        run: register::exclude,
    },
    Command {
        name: "stats",
        synopsis: "stats [--root R] [--csv] [--item IBI]",
        about: "access counts",
        help: stats::HELP,
        run: stats::run,
    },
    Command {
        name: "query",
        synopsis: "query [--root R] QUERYSTRING",
        about: "the body the service would send",
        help: query::QUERY_HELP,
        run: query::query,
    },
    Command {
        name: "describe",
        synopsis: "describe [--root R] IBI",
        about: "every property of an item",
        help: query::DESCRIBE_HELP,
        run: query::describe,
    },
    Command {
        name: "serve",
        synopsis: "serve [--root R] [--listen [ADDRESS:]PORT] [--no-inclusion] [LIMITS]",
        about: "an embedded web server",
        help: serve::HELP,
        run: serve::run,
    },
    Command {
        name: "ibi",
        synopsis: "ibi IBI\nibi mint --host H [--port P] [--ip IP [--ibip-port P]] --date T|now",
        about: "read an IBI of either form, or mint one",
        help: ibi::HELP,
        run: ibi::run,
    },
    Command {
        name: "help",
        synopsis: "help [COMMAND]",
        about: "this text, or a command's",
        help: HELP_HELP,
        run: help,
    },
];

/// The command named `name`.
pub fn command(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// Runs the command line of the administrator's tool (the program's name already read).
pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    match parser.next()? {
        Some(Value(name)) => {
            let name = name.to_string_lossy().into_owned();
            match command(&name) {
                Some(cmd) => (cmd.run)(parser).map_err(|e| e.in_command(cmd.name)),
                None => Err(CliError::usage(format!(
                    "unknown command {name:?}{}; see ibi-archive --help",
                    did_you_mean(&name, COMMANDS.iter().map(|c| c.name), "")
                ))),
            }
        }
        Some(Short('h') | Long("help")) => print_text(&usage()),
        Some(Short('V') | Long("version")) => {
            print_text(&format!("ibi-archive {}\n", env!("CARGO_PKG_VERSION")))
        }
        Some(arg) => Err(CliError::usage(format!(
            "unexpected argument {}; see ibi-archive --help",
            shown(arg)
        ))),
        None => Err(CliError::usage("no command given; see ibi-archive --help")),
    }
}

/// `ibi-archive help [COMMAND]`.
fn help(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    let mut name = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return print_text(HELP_HELP),
            Value(v) if name.is_none() => name = Some(v.to_string_lossy().into_owned()),
            other => return Err(CliError::unexpected("help", other)),
        }
    }
    match name {
        None => print_text(&usage()),
        Some(name) => match command(&name) {
            Some(cmd) => print_text(cmd.help),
            None => Err(CliError::usage(format!(
                "help: unknown command {name:?}{}; see ibi-archive --help",
                did_you_mean(&name, COMMANDS.iter().map(|c| c.name), "")
            ))),
        },
    }
}

/// Writes `text` to stdout; a failed write (a closed pipe) is a failure, not a panic.
pub fn print_text(text: &str) -> CliResult {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(format!("cannot write to stdout: {e}")))
}

/// ` (did you mean X?)` when one of `known` is one edit (a transposition counts as one)
/// from `given`, or two from a `given` of five letters or more; else nothing. `dashes` is
/// put before the name (`--` for flags).
fn did_you_mean<'a>(given: &str, known: impl Iterator<Item = &'a str>, dashes: &str) -> String {
    known
        .map(|k| (strsim::osa_distance(given, k), k))
        .filter(|&(d, _)| d == 1 || d == 2 && given.len() >= 5)
        .min()
        .map(|(_, k)| format!(" (did you mean {dashes}{k}?)"))
        .unwrap_or_default()
}

/// The `--flags` a help text names.
fn flags_in(help: &str) -> impl Iterator<Item = &str> {
    help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter_map(|w| w.strip_prefix("--"))
        .filter(|f| f.starts_with(|c: char| c.is_ascii_lowercase()))
}

/// Writes `ibi-archive: <line>` on stderr, as one line with its control characters
/// escaped (see `logline`): warnings echo item.toml text and file names.
pub fn say(line: &str) {
    eprintln!(
        "{}",
        ibi_archive::logline::clean(&format!("ibi-archive: {line}"))
    );
}

/// The arguments of a command whose one flag is `--root`: the Archive's root (see
/// [`root_flag`]), or `None` once `--help` is answered with `help`.
pub fn root_only(
    parser: &mut lexopt::Parser,
    command: &str,
    help: &str,
) -> Result<Option<PathBuf>, CliError> {
    use lexopt::Arg::{Long, Short};
    let mut root: Option<PathBuf> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return print_text(help).map(|()| None),
            Long("root") => root = Some(parser.value()?.into()),
            other => return Err(CliError::unexpected(command, other)),
        }
    }
    Ok(Some(root_flag(root)))
}

/// The Archive root: given with --root, else `$IBI_ARCHIVE_ROOT` (the variable the web
/// servers pass the CGI program), else the current directory.
pub fn root_flag(root: Option<PathBuf>) -> PathBuf {
    root.or_else(|| {
        std::env::var_os("IBI_ARCHIVE_ROOT")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
    .unwrap_or_else(|| PathBuf::from("."))
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
    /// Whether the command's name should add a pointer to its --help (lexopt's errors).
    point_to_help: bool,
}

impl CliError {
    /// Bad input on the command line or in its arguments (exit code 2).
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            code: 2,
            message: message.into(),
            point_to_help: false,
        }
    }

    /// An argument `cmd` does not take (exit code 2), with the nearest of its flags when
    /// one is close, pointing at its --help.
    pub fn unexpected(cmd: &str, arg: lexopt::Arg<'_>) -> CliError {
        let hint = match (&arg, command(cmd.split(' ').next().unwrap_or(cmd))) {
            (lexopt::Arg::Long(flag), Some(c)) => did_you_mean(flag, flags_in(c.help), "--"),
            _ => String::new(),
        };
        CliError::usage(format!(
            "{cmd}: unexpected argument {}{hint}; see ibi-archive {cmd} --help",
            shown(arg)
        ))
    }

    /// A required argument of `cmd` that is missing (exit code 2), with the command's
    /// usage.
    pub fn missing(cmd: &str, what: &str) -> CliError {
        let usage = command(cmd.split(' ').next().unwrap_or(cmd))
            .and_then(|c| {
                c.synopsis
                    .lines()
                    .find(|l| l.starts_with(&format!("{cmd} ")))
            })
            .map(|l| format!("; usage: ibi-archive {l}"))
            .unwrap_or_default();
        CliError::usage(format!("{cmd}: missing {what}{usage}"))
    }

    /// The error as the command `cmd` reports it: `cmd: ` before a message that does not
    /// name it already, and for lexopt's, the pointer to its --help.
    fn in_command(mut self, cmd: &str) -> CliError {
        if !self.message.starts_with(&format!("{cmd}:"))
            && !self.message.starts_with(&format!("{cmd} "))
        {
            self.message = format!("{cmd}: {}", self.message);
        }
        if self.point_to_help {
            self.message = format!("{}; see ibi-archive {cmd} --help", self.message);
            self.point_to_help = false;
        }
        self
    }

    /// The command ran but failed (exit code 1).
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            message: message.into(),
            point_to_help: false,
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
        CliError {
            point_to_help: true,
            ..CliError::usage(e.to_string())
        }
    }
}

pub type CliResult = Result<(), CliError>;
