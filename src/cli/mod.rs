//! The administrator's commands: each module parses its own flags with `lexopt` and calls
//! the library; `main.rs` dispatches to them (a CGI request goes to `cgi_entry`).

use std::fmt;
use std::path::PathBuf;

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
                Some(cmd) => (cmd.run)(parser).map_err(|e| e.in_command(cmd.name)),
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
        Some(Long("generate")) => generate(&parser.value()?.to_string_lossy()),
        Some(arg) => Err(CliError::usage(format!(
            "unexpected argument {}; see ibi-archive --help",
            cmdline::shown(arg)
        ))),
        None => Err(CliError::usage("no command given; see ibi-archive --help")),
    }
}

/// `--generate man|complete-bash`: debian/ibi-archive.1 or
/// debian/bash-completion/ibi-archive.
fn generate(what: &str) -> CliResult {
    match what {
        "man" => print_text(&cmdline::man(&PROGRAM)),
        "complete-bash" => print_text(&cmdline::bash_completion(&PROGRAM)),
        other => Err(CliError::usage(format!(
            "--generate {other:?}: expected man or complete-bash"
        ))),
    }
}

/// `ibi-archive help [COMMAND]`.
pub fn help(parser: &mut lexopt::Parser) -> CliResult {
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

/// Writes `text` to stdout; a failed write (a closed pipe) is a failure, not a panic.
pub fn print_text(text: &str) -> CliResult {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(format!("cannot write to stdout: {e}")))
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
        CliError::usage(cmdline::unexpected(&PROGRAM, cmd, arg))
    }

    /// A required argument of `cmd` that is missing (exit code 2), with the command's
    /// usage.
    pub fn missing(cmd: &str, what: &str) -> CliError {
        let usage = PROGRAM
            .command(cmd.split(' ').next().unwrap_or(cmd))
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
