//! The operator's commands: the table of commands and flags (`definitions`), each
//! command's parser in its own module, handed the same `lexopt` parser; `main.rs`
//! dispatches here.

use std::path::PathBuf;

use cmdline::Naming;
pub use cmdline::{print_text, CliError, CliResult};

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
                return (cmd.run)(parser, config)
                    .map_err(|e| e.in_command(&PROGRAM, cmd.name, Naming::Usage));
            }
            Some(Long("config")) => config = parser.value()?.into(),
            Some(Short('h') | Long("help")) => return print_text(&cmdline::usage(&PROGRAM)),
            Some(Short('V') | Long("version")) => {
                return print_text(&format!("ibi-resolver {}\n", env!("CARGO_PKG_VERSION")))
            }
            // Hidden: what debian/ holds, made from the definitions.
            Some(Long("generate")) => {
                return cmdline::generate(&PROGRAM, &parser.value()?.to_string_lossy())
            }
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

/// `ibi-resolver help [COMMAND]`.
pub fn help(parser: &mut lexopt::Parser, _config: PathBuf) -> CliResult {
    cmdline::help(&PROGRAM, parser)
}

/// Prints the `--help` of `command`.
pub fn print_help(command: &str) -> CliResult {
    cmdline::print_help(&PROGRAM, command)
}

/// The arguments of a command whose one flag is `--config`: the settings file and the
/// operands, at most `most` of them; `None` once `--help` is answered with the command's
/// help.
pub fn config_and_operands(
    parser: &mut lexopt::Parser,
    command: &str,
    mut config: PathBuf,
    most: usize,
) -> Result<Option<(PathBuf, Vec<String>)>, CliError> {
    use lexopt::prelude::*;
    let mut operands = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return print_help(command).map(|()| None),
            Long("config") => config = parser.value()?.into(),
            Value(v) if operands.len() < most => operands.push(v.string()?),
            other => return Err(CliError::unexpected(&PROGRAM, command, other)),
        }
    }
    Ok(Some((config, operands)))
}

/// The one operand `what` of `command`.
pub fn one(command: &str, operands: Vec<String>, what: &str) -> Result<String, CliError> {
    operands
        .into_iter()
        .next()
        .ok_or_else(|| CliError::missing(&PROGRAM, command, what))
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
