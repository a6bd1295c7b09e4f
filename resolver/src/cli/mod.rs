//! The operator's commands: the table of commands and flags (`definitions`), each
//! command's parser in its own module, handed the same `lexopt` parser; `main.rs`
//! dispatches here.

use std::path::PathBuf;

use ibi_resolver::config::{self, Config};
use ibi_resolver::registry::Registry;

pub mod archives;
pub mod backup;
pub mod definitions;
pub mod init;
pub mod memory;
pub mod migrate;
pub mod register;
pub mod resolve;
pub mod serve;

pub use definitions::PROGRAM;

/// What a command is handed: the parser at its first argument, and the settings file
/// named before it (`--config` may come before the command too).
pub type Run = fn(&mut lexopt::Parser, PathBuf) -> CliResult;

/// Runs the command line (the program's name already read).
pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    let mut config = config::default_path();
    loop {
        match parser.next()? {
            Some(Value(name)) => {
                let name = name.to_string_lossy().into_owned();
                let Some(cmd) = PROGRAM.command(&name) else {
                    return Err(CliError::usage(format!(
                        "unknown command {name:?}{}; see ibi-resolver --help",
                        cmdline::did_you_mean(&name, PROGRAM.commands.iter().map(|c| c.name), "")
                    )));
                };
                return (cmd.run)(parser, config).map_err(|e| e.in_command(cmd.name));
            }
            Some(Long("config")) => config = parser.value()?.into(),
            Some(Short('h') | Long("help")) => return print_text(&cmdline::usage(&PROGRAM)),
            Some(Short('V') | Long("version")) => {
                return print_text(&format!("ibi-resolver {}\n", env!("CARGO_PKG_VERSION")))
            }
            // Hidden: what debian/ holds, made from the definitions.
            Some(Long("generate")) => return generate(&parser.value()?.to_string_lossy()),
            Some(arg) => {
                return Err(CliError::usage(format!(
                    "unexpected argument {}; see ibi-resolver --help",
                    cmdline::shown(arg)
                )))
            }
            None => return Err(CliError::usage("no command given; see ibi-resolver --help")),
        }
    }
}

/// `--generate man|complete-bash`: debian/ibi-resolver.1 or
/// debian/bash-completion/ibi-resolver.
fn generate(what: &str) -> CliResult {
    match what {
        "man" => print_text(&cmdline::man(&PROGRAM)),
        "complete-bash" => print_text(&cmdline::bash_completion(&PROGRAM)),
        other => Err(CliError::usage(format!(
            "--generate {other:?}: expected man or complete-bash"
        ))),
    }
}

/// `ibi-resolver help [COMMAND]`.
pub fn help(parser: &mut lexopt::Parser, _config: PathBuf) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    let mut name = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return print_text(definitions::HELP_HELP),
            Value(v) if name.is_none() => name = Some(v.to_string_lossy().into_owned()),
            other => return Err(CliError::unexpected("help", other)),
        }
    }
    let text = cmdline::help_text(&PROGRAM, name.as_deref()).map_err(CliError::usage)?;
    print_text(&text)
}

/// The arguments of a command whose one flag is `--config`: the settings file and the
/// operands, at most `most` of them; `None` once `--help` is answered with `help`.
pub fn config_and_operands(
    parser: &mut lexopt::Parser,
    command: &str,
    help: &str,
    mut config: PathBuf,
    most: usize,
) -> Result<Option<(PathBuf, Vec<String>)>, CliError> {
    use lexopt::prelude::*;
    let mut operands = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return print_text(help).map(|()| None),
            Long("config") => config = parser.value()?.into(),
            Value(v) if operands.len() < most => operands.push(v.string()?),
            other => return Err(CliError::unexpected(command, other)),
        }
    }
    Ok(Some((config, operands)))
}

/// The one operand `what` of `command`.
pub fn one(command: &str, operands: Vec<String>, what: &str) -> Result<String, CliError> {
    operands
        .into_iter()
        .next()
        .ok_or_else(|| CliError::missing(command, what))
}

pub fn load(path: &std::path::Path) -> Result<Config, CliError> {
    Config::load(path).map_err(CliError::failed)
}

pub fn open(config: &Config) -> Result<Registry, CliError> {
    Registry::open(&config.database).map_err(|e| CliError::failed(e.to_string()))
}

pub fn parse_ibi(s: &str) -> Result<ibi::Ibi, CliError> {
    ibi::Ibi::parse(s).map_err(|e| CliError::usage(e.to_string()))
}

/// Writes `text` to stdout; a failed write (a closed pipe) is a failure, not a panic.
pub fn print_text(text: &str) -> CliResult {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(format!("cannot write to stdout: {e}")))
}

/// A command that failed: the exit code and the line for stderr (none when empty).
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
    /// A usage error, which names the command; lexopt's also point to its --help.
    usage: bool,
    point_to_help: bool,
}

impl CliError {
    /// Bad input on the command line or in its arguments (exit code 2).
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            code: 2,
            message: message.into(),
            usage: true,
            point_to_help: false,
        }
    }

    /// The command ran but failed (exit code 1).
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            message: message.into(),
            usage: false,
            point_to_help: false,
        }
    }

    /// The command ran and said why it failed on stdout (exit code 1, nothing more).
    pub fn quiet() -> CliError {
        CliError::failed(String::new())
    }

    /// An argument `cmd` does not take (exit code 2), with the nearest of its flags when
    /// one is close, pointing at its --help.
    pub fn unexpected(cmd: &str, arg: lexopt::Arg<'_>) -> CliError {
        CliError::usage(cmdline::unexpected(&PROGRAM, cmd, arg))
    }

    /// A required argument of `cmd` that is missing (exit code 2), with its usage.
    pub fn missing(cmd: &str, what: &str) -> CliError {
        let usage = PROGRAM
            .command(cmd)
            .map(|c| format!("; usage: ibi-resolver {}", c.synopsis))
            .unwrap_or_default();
        CliError::usage(format!("{cmd}: missing {what}{usage}"))
    }

    /// The error as the command `cmd` reports it: a usage error names the command, and
    /// lexopt's points to its --help.
    fn in_command(mut self, cmd: &str) -> CliError {
        if self.usage && !self.message.starts_with(&format!("{cmd}:")) {
            self.message = format!("{cmd}: {}", self.message);
        }
        if self.point_to_help {
            self.message = format!("{}; see ibi-resolver {cmd} --help", self.message);
            self.point_to_help = false;
        }
        self
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
