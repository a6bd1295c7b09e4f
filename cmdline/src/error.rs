//! What a command of either program answers when it fails, and the few steps every
//! command line takes: its `help` command, its hidden `--generate`, its text on stdout.

use std::fmt;

use crate::Program;

/// A command that failed: the exit code and the line for stderr (none when empty).
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
    /// lexopt's errors point to the command's --help.
    point_to_help: bool,
}

/// The result of a command.
pub type CliResult = Result<(), CliError>;

/// Which of a command's errors name it (`cmd: …`) when they do not already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// Every error (the Archive's tool: its failures quote files and items, not the
    /// command).
    Every,
    /// Usage errors only (the resolver's: its failures name what failed).
    Usage,
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

    /// Whether it is a usage error (exit code 2).
    fn is_usage(&self) -> bool {
        self.code == 2
    }

    /// The command ran but failed (exit code 1).
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            message: message.into(),
            point_to_help: false,
        }
    }

    /// The command ran and said why it failed on stdout (exit code 1, nothing more).
    pub fn quiet() -> CliError {
        CliError::failed(String::new())
    }

    /// An argument `cmd` of `program` does not take (exit code 2), with the nearest of its
    /// flags when one is close, pointing at its --help.
    pub fn unexpected<Run>(program: &Program<Run>, cmd: &str, arg: lexopt::Arg<'_>) -> CliError {
        CliError::usage(crate::unexpected(program, cmd, arg))
    }

    /// A required argument of `cmd` of `program` that is missing (exit code 2), with the
    /// form of its synopsis that `cmd` starts (`prefixes list` names one of several).
    pub fn missing<Run>(program: &Program<Run>, cmd: &str, what: &str) -> CliError {
        let usage = program
            .command(cmd.split(' ').next().unwrap_or(cmd))
            .and_then(|c| {
                c.synopsis
                    .lines()
                    .find(|l| *l == cmd || l.starts_with(&format!("{cmd} ")))
            })
            .map(|l| format!("; usage: {} {l}", program.name))
            .unwrap_or_default();
        CliError::usage(format!("{cmd}: missing {what}{usage}"))
    }

    /// The error as the command `cmd` of `program` reports it: named as `naming` says,
    /// and lexopt's pointing to its --help.
    pub fn in_command<Run>(
        mut self,
        program: &Program<Run>,
        cmd: &str,
        naming: Naming,
    ) -> CliError {
        let names = naming == Naming::Every || self.is_usage();
        if names
            && !self.message.is_empty()
            && !self.message.starts_with(&format!("{cmd}:"))
            && !self.message.starts_with(&format!("{cmd} "))
        {
            self.message = format!("{cmd}: {}", self.message);
        }
        if self.point_to_help {
            self.message = format!("{}; see {} {cmd} --help", self.message, program.name);
            self.point_to_help = false;
        }
        self
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

/// Writes `text` to stdout; a failed write (a closed pipe) is a failure, not a panic.
pub fn print_text(text: &str) -> CliResult {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(format!("cannot write to stdout: {e}")))
}

/// `PROGRAM help [COMMAND]`: the program's `--help`, or the command's.
pub fn help<Run>(program: &Program<Run>, parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    let mut name = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return print_help(program, "help"),
            Value(v) if name.is_none() => name = Some(v.to_string_lossy().into_owned()),
            other => return Err(CliError::unexpected(program, "help", other)),
        }
    }
    let text = crate::help_text(program, name.as_deref()).map_err(CliError::usage)?;
    print_text(&text)
}

/// Prints the `--help` of the command `name` of `program` (`ibi mint` for a subcommand).
pub fn print_help<Run>(program: &Program<Run>, name: &str) -> CliResult {
    let text = crate::command_help(program, name)
        .ok_or_else(|| CliError::failed(format!("{name}: no such command")))?;
    print_text(&text)
}

/// The hidden `--generate man|complete-bash`: what debian/ holds, made from `program`.
pub fn generate<Run>(program: &Program<Run>, what: &str) -> CliResult {
    match what {
        "man" => print_text(&crate::man(program)),
        "complete-bash" => print_text(&crate::bash_completion(program)),
        other => Err(CliError::usage(format!(
            "--generate {other:?}: expected man or complete-bash"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_its_command_once() {
        let program: Program<()> = Program {
            name: "tool",
            version: "1",
            date: "2026-01-01",
            summary: "",
            usage_head: "",
            usage_tail: "",
            usage_names_program: false,
            usage_column: 10,
            commands: &[],
            flags: &[],
            man_description: "",
            man_tail: "",
        };
        let named = |e: CliError, naming| e.in_command(&program, "run", naming).message;
        assert_eq!(
            named(CliError::failed("x failed"), Naming::Every),
            "run: x failed"
        );
        assert_eq!(
            named(CliError::failed("x failed"), Naming::Usage),
            "x failed"
        );
        assert_eq!(named(CliError::usage("bad x"), Naming::Usage), "run: bad x");
        assert_eq!(
            named(CliError::usage("run: bad x"), Naming::Every),
            "run: bad x"
        );
        assert_eq!(named(CliError::quiet(), Naming::Every), "");
        let lexopt = CliError::from(lexopt::Error::MissingValue {
            option: Some("--root".into()),
        });
        assert_eq!(
            named(lexopt, Naming::Usage),
            "run: missing argument for option '--root'; see tool run --help"
        );
    }
}
