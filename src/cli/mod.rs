//! The administrator's commands: each module parses its own flags with `lexopt` and calls
//! the library; `main.rs` dispatches to them (a CGI request goes to `cgi_entry`).

use std::path::PathBuf;

use cmdline::Naming;
pub use cmdline::{print_text, CliError, CliResult};

pub mod check;
pub mod definitions;
pub mod delete;
pub mod ibi;
pub mod init;
pub mod new;
pub mod prefixes;
pub mod query;
pub mod register;
pub mod serve;
pub mod stats;

pub use definitions::PROGRAM;

/// What a command is handed: the parser at its first argument.
pub type Run = fn(&mut lexopt::Parser) -> CliResult;

/// The names of the commands.
fn command_names() -> impl Iterator<Item = &'static str> {
    PROGRAM.commands.iter().map(|c| c.name)
}

/// Runs the command line of the administrator's tool (the program's name already read).
pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    match parser.next()? {
        Some(Value(name)) => {
            let name = name.to_string_lossy().into_owned();
            match PROGRAM.command(&name) {
                Some(cmd) => {
                    (cmd.run)(parser).map_err(|e| e.in_command(&PROGRAM, cmd.name, Naming::Every))
                }
                None => Err(CliError::usage(format!(
                    "unknown command {name:?}{}; see ibi-archive --help",
                    cmdline::did_you_mean(&name, command_names(), "")
                ))),
            }
        }
        Some(Short('h') | Long("help")) => print_text(&cmdline::usage(&PROGRAM)),
        Some(Short('V') | Long("version")) => {
            print_text(&format!("ibi-archive {}\n", env!("CARGO_PKG_VERSION")))
        }
        // Hidden: what debian/ holds, made from the definitions.
        Some(Long("generate")) => cmdline::generate(&PROGRAM, &parser.value()?.to_string_lossy()),
        Some(arg) => Err(CliError::usage(format!(
            "unexpected argument {}; see ibi-archive --help",
            cmdline::shown(arg)
        ))),
        None => Err(CliError::usage("no command given; see ibi-archive --help")),
    }
}

/// `ibi-archive help [COMMAND]`.
pub fn help(parser: &mut lexopt::Parser) -> CliResult {
    cmdline::help(&PROGRAM, parser)
}

/// Prints the `--help` of `command` (`ibi mint` for a subcommand).
pub fn print_help(command: &str) -> CliResult {
    cmdline::print_help(&PROGRAM, command)
}

/// Writes `ibi-archive: <line>` on stderr, as one line with its control characters
/// escaped (see `logline`): warnings echo item.toml text and file names.
pub fn say(line: &str) {
    eprintln!("{}", ::ibi::logline::clean(&format!("ibi-archive: {line}")));
}

/// The arguments of a command whose one flag is `--root`: the Archive's root (see
/// [`root_flag`]), or `None` once `--help` is answered with the command's help.
pub fn root_only(parser: &mut lexopt::Parser, command: &str) -> Result<Option<PathBuf>, CliError> {
    use lexopt::Arg::{Long, Short};
    let mut root: Option<PathBuf> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return print_help(command).map(|()| None),
            Long("root") => root = Some(parser.value()?.into()),
            other => return Err(CliError::unexpected(&PROGRAM, command, other)),
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
