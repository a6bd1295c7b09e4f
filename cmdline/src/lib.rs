//! The command lines of `ibi-archive` and `ibi-resolver`, each defined once: a [`Program`]
//! with its [`Command`]s and [`Flag`]s. From the definitions come the program's `--help`
//! ([`usage`]), each command's `--help` ([`command_help`]), the hints of a usage error
//! ([`did_you_mean`], [`flags_of`]), the man page ([`man`]) and the bash completion
//! ([`bash_completion`]); each executable prints the last two with a hidden
//! `--generate man|complete-bash`, and a test compares them with the files under debian/.
//! What a failed command answers ([`CliError`]) and the steps every command line takes
//! ([`help`], [`generate`], [`print_text`]) are here too.
//!
//! What a command does ([`Command::doc`]) and what a flag does ([`Flag::doc`]) are written
//! once, in a light markup, and rendered twice: to plain text for `--help`, to roff for
//! the man page ([`prose`]). Blocks are parted by a blank line: a paragraph is wrapped
//! anew, a block whose lines all start with two spaces is kept as written;
//! `` `words` `` is a command or a literal (kept in its backquotes in plain text, bold in
//! roff); `*NAME*` an operand or placeholder (`NAME` in plain text, italic in roff); a
//! `--flag` is bold in roff; roff's `\`, `-` and a leading `.` or `'` are escaped.

use std::fmt::Write;

mod error;
pub mod prose;

pub use error::{generate, help, print_help, print_text, CliError, CliResult, Naming};

/// An executable's command line.
pub struct Program<Run: 'static> {
    pub name: &'static str,
    pub version: &'static str,
    /// The date of the man page.
    pub date: &'static str,
    /// What it is, after the name (the man page's NAME).
    pub summary: &'static str,
    /// `--help` before the list of commands, and after it.
    pub usage_head: &'static str,
    pub usage_tail: &'static str,
    /// `--help`: whether each command's line starts with the program's name, and the
    /// column before what each command does.
    pub usage_names_program: bool,
    pub usage_column: usize,
    /// Every command, in the order `--help` and the man page list them.
    pub commands: &'static [Command<Run>],
    /// Every flag of the program and of its commands.
    pub flags: &'static [Flag],
    /// The man page: the paragraphs of DESCRIPTION (roff), and the sections after
    /// OPTIONS (roff, each with its `.SH`).
    pub man_description: &'static str,
    pub man_tail: &'static str,
}

/// One command.
pub struct Command<Run: 'static> {
    pub name: &'static str,
    /// How it is called, after the program's name: one line per form.
    pub synopsis: &'static str,
    /// What it does, in a few words (lines after the first continue it).
    pub about: &'static str,
    /// What it does, in the markup of [`prose`]: one text per line of the synopsis. Its
    /// `--help` is its usage, these texts and the table of its flags; its section of the
    /// man page each text under its line of the synopsis as a heading, then its flags. A
    /// command whose texts are the next command's (include and exclude) shares that
    /// command's section: its headings only.
    pub doc: &'static [&'static str],
    /// Words it takes after its name that are no flag's: `mint` of `ibi mint`.
    pub subcommands: &'static [&'static str],
    /// What completes an argument that is not a flag.
    pub operands: Complete,
    pub run: Run,
}

/// One flag: its long names (one, or several that share what follows), taken by the
/// commands `takers` names.
pub struct Flag {
    pub names: &'static [&'static str],
    pub short: Option<char>,
    /// The name of its value; `None` for a switch.
    pub value: Option<&'static str>,
    /// What it does, in the markup of [`prose`]: its line of each `--help` that lists
    /// it, and its paragraph of the man page. Never empty (see [`undocumented`]).
    pub doc: &'static str,
    /// The commands that take it: names (`ibi mint` for a subcommand), `""` for the
    /// program itself (before a command), `"*"` for every command.
    pub takers: &'static [&'static str],
    /// Listed in the man page's OPTIONS (a flag of the program, or of most commands),
    /// instead of under its command.
    pub option: bool,
    /// What completes its value.
    pub complete: Complete,
}

/// What the bash completion offers for a value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Complete {
    Nothing,
    Directories,
    Files,
    /// `*.toml` files, and directories on the way to them.
    TomlFiles,
    /// These words (space-separated).
    Words(&'static str),
    /// These words, the value going on after them (`title=`).
    Prefixes(&'static str),
    /// The program's commands.
    Commands,
}

impl Flag {
    /// Whether `command` (`""`: the program itself) takes it.
    pub fn taken_by(&self, command: &str) -> bool {
        self.takers
            .iter()
            .any(|t| *t == command || (*t == "*" && !command.is_empty()))
    }
}

impl<Run> Program<Run> {
    /// The command named `name`.
    pub fn command(&self, name: &str) -> Option<&Command<Run>> {
        self.commands.iter().find(|c| c.name == name)
    }
}

/// The long names of the flags `command` (`ibi mint` for a subcommand, `""` for the
/// program) takes.
pub fn flags_of<'a>(flags: &'a [Flag], command: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    flags
        .iter()
        .filter(move |f| f.taken_by(command))
        .flat_map(|f| f.names.iter().copied())
}

/// `--help` and `--version`, as both programs define them (`takers` as [`Flag::taken_by`]
/// reads them: `""` the program itself, `"*"` every command).
pub const HELP: Flag = Flag {
    names: &["help"],
    short: Some('h'),
    value: None,
    doc: "print the usage of the program or of the command, and exit.",
    takers: &["", "*"],
    option: true,
    complete: Complete::Nothing,
};

/// See [`HELP`].
pub const VERSION: Flag = Flag {
    names: &["version"],
    short: Some('V'),
    value: None,
    doc: "print the version, and exit.",
    takers: &[""],
    option: true,
    complete: Complete::Nothing,
};

/// What `help [COMMAND]` prints: the program's usage, or the help of `command`; Err the
/// usage error of a command the program does not have, with the nearest name.
pub fn help_text<Run>(program: &Program<Run>, command: Option<&str>) -> Result<String, String> {
    let Some(name) = command else {
        return Ok(usage(program));
    };
    match command_help(program, name) {
        Some(text) => Ok(text),
        None => Err(format!(
            "help: unknown command {name:?}{}; see {} --help",
            did_you_mean(name, program.commands.iter().map(|c| c.name), ""),
            program.name
        )),
    }
}

/// The width of `--help`'s lines.
pub const HELP_WIDTH: usize = 80;

/// The widest flag names (and value) that `--help` puts in the column before what the
/// flags do; wider ones have lines of their own.
const FLAG_COLUMN: usize = 24;

/// The subcommand (one of `command`'s) that the synopsis line `line` of `command` is
/// the form of.
fn form_of<'a, Run>(command: &Command<Run>, line: &'a str) -> Option<&'a str> {
    let word = line
        .strip_prefix(command.name)?
        .strip_prefix(' ')?
        .split(' ')
        .next()?;
    command.subcommands.contains(&word).then_some(word)
}

/// The names a command's flags are taken by: `name`, and `name sub` for each of its
/// subcommands.
fn takers_of<Run>(command: &Command<Run>) -> Vec<String> {
    let mut names = vec![command.name.to_string()];
    names.extend(
        command
            .subcommands
            .iter()
            .map(|s| format!("{} {s}", command.name)),
    );
    names
}

/// The `--help` of the command `name` (`ibi mint` for a subcommand): `usage:` and its
/// forms (the lines of its synopsis, those of the subcommand only), what it does, and the
/// table of its flags (those of its subcommands too); `None` when it has no such command.
pub fn command_help<Run>(p: &Program<Run>, name: &str) -> Option<String> {
    let (command, sub) = match name.split_once(' ') {
        Some((c, s)) => (c, Some(s)),
        None => (name, None),
    };
    let c = p.command(command)?;
    if sub.is_some_and(|s| !c.subcommands.contains(&s)) {
        return None;
    }
    let forms: Vec<(usize, &str)> = c
        .synopsis
        .lines()
        .enumerate()
        .filter(|(_, line)| sub.is_none() || form_of(c, line) == sub)
        .collect();
    let mut out = String::new();
    for (k, (_, line)) in forms.iter().enumerate() {
        let lead = if k == 0 { "usage:" } else { "      " };
        let _ = writeln!(out, "{lead} {} {line}", p.name);
    }
    for (i, _) in &forms {
        if let Some(doc) = c.doc.get(*i) {
            out.push('\n');
            out.push_str(&prose::plain(doc, HELP_WIDTH));
        }
    }
    let takers = match sub {
        Some(_) => vec![name.to_string()],
        None => takers_of(c),
    };
    let flags: Vec<&Flag> = p
        .flags
        .iter()
        .filter(|f| takers.iter().any(|t| f.taken_by(t)))
        .collect();
    if !flags.is_empty() {
        out.push('\n');
        out.push_str(&flag_table(&flags, HELP_WIDTH));
    }
    Some(out)
}

/// A flag's names (and short name) and value, as `--help` lists it.
fn flag_names(f: &Flag) -> String {
    let mut names: Vec<String> = f.short.iter().map(|s| format!("-{s}")).collect();
    names.extend(f.names.iter().map(|n| format!("--{n}")));
    let mut tag = names.join(", ");
    if let Some(v) = f.value {
        let _ = write!(tag, " {v}");
    }
    tag
}

/// The table of `flags` in `--help`: each flag's names, and what it does in a column
/// after the widest names that fit in [`FLAG_COLUMN`], its lines no wider than `width`.
fn flag_table(flags: &[&Flag], width: usize) -> String {
    let column = flags
        .iter()
        .map(|f| flag_names(f).chars().count())
        .filter(|n| *n <= FLAG_COLUMN)
        .max()
        .unwrap_or(0);
    let indent = 2 + column + 2;
    let mut out = String::new();
    for f in flags {
        let names = flag_names(f);
        let mut doc = prose::plain_lines(f.doc, width.saturating_sub(indent).max(20)).into_iter();
        if names.chars().count() <= column {
            let first = doc.next().unwrap_or_default();
            let _ = writeln!(out, "{}", format!("  {names:<column$}  {first}").trim_end());
        } else {
            for line in prose::wrap(&names, width.saturating_sub(2)) {
                let _ = writeln!(out, "  {line}");
            }
        }
        for line in doc {
            if line.is_empty() {
                out.push('\n');
            } else {
                let _ = writeln!(out, "{:indent$}{line}", "");
            }
        }
    }
    out
}

/// An argument as it was written: `-x`, `--flag`, or a value quoted.
pub fn shown(arg: lexopt::Arg<'_>) -> String {
    match arg {
        lexopt::Arg::Short(c) => format!("-{c}"),
        lexopt::Arg::Long(l) => format!("--{l}"),
        lexopt::Arg::Value(v) => format!("{v:?}"),
    }
}

/// The usage error of an argument `command` of `program` does not take: the nearest of
/// its flags when one is close, and a pointer to its `--help`.
pub fn unexpected<Run>(program: &Program<Run>, command: &str, arg: lexopt::Arg<'_>) -> String {
    let hint = match &arg {
        lexopt::Arg::Long(flag) => did_you_mean(flag, flags_of(program.flags, command), "--"),
        _ => String::new(),
    };
    format!(
        "{command}: unexpected argument {}{hint}; see {} {command} --help",
        shown(arg),
        program.name
    )
}

/// ` (did you mean X?)` when one of `known` is one edit (a transposition counts as one)
/// from `given`, or two from a `given` of five letters or more; else nothing. `dashes` is
/// put before the name (`--` for flags).
pub fn did_you_mean<'a>(given: &str, known: impl Iterator<Item = &'a str>, dashes: &str) -> String {
    known
        .map(|k| (strsim::osa_distance(given, k), k))
        .filter(|&(d, _)| d == 1 || d == 2 && given.len() >= 5)
        .min()
        .map(|(_, k)| format!(" (did you mean {dashes}{k}?)"))
        .unwrap_or_default()
}

/// The program's `--help`: its head, each command's synopsis and what it does, its tail.
pub fn usage<Run>(p: &Program<Run>) -> String {
    let mut out = String::from(p.usage_head);
    let column = p.usage_column;
    for c in p.commands {
        for (i, line) in c.synopsis.lines().enumerate() {
            let line = if p.usage_names_program {
                format!("  {} {line}", p.name)
            } else {
                format!("  {line}")
            };
            if i > 0 {
                let _ = writeln!(out, "{line}");
                continue;
            }
            let mut about = c.about.lines();
            let first = about.next().unwrap_or("");
            if line.len() < column {
                let _ = writeln!(out, "{line:<column$} {first}");
            } else {
                let _ = writeln!(out, "{line}\n{:<column$} {first}", "");
            }
            for more in about {
                let _ = writeln!(out, "{:<column$} {more}", "");
            }
        }
    }
    out.push_str(p.usage_tail);
    out
}

/// A synopsis (or a flag's value) in roff: `--flags` in bold, UPPER-CASE names in
/// italics, the rest as written; `bold` words at its start in bold too (the program and
/// command names).
fn synopsis_roff(text: &str, bold: usize) -> String {
    let mut out = String::new();
    let mut words = 0;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let word_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        if word_len == 0 {
            out.push_str(&prose::escape_roff(&c.to_string()));
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let (word, after) = rest.split_at(word_len);
        if words < bold {
            // The program and command names, as one bold run.
            let mut run = word.len();
            let mut more = after;
            words += 1;
            while words < bold && more.starts_with(' ') {
                let next = more[1..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .unwrap_or(more.len() - 1);
                run += 1 + next;
                more = &more[1 + next..];
                words += 1;
            }
            let _ = write!(out, "\\fB{}\\fR", prose::escape_roff(&rest[..run]));
            rest = &rest[run..];
            continue;
        }
        if word.starts_with("--") || (word.starts_with('-') && word.len() == 2) {
            let _ = write!(out, "\\fB{}\\fR", prose::escape_roff(word));
        } else if word.starts_with(|c: char| c.is_ascii_uppercase())
            && word.chars().all(|c| !c.is_ascii_lowercase())
        {
            let _ = write!(out, "\\fI{}\\fR", prose::escape_roff(word));
        } else {
            out.push_str(&prose::escape_roff(word));
        }
        rest = after;
    }
    out
}

/// The tag of a flag's paragraph: its names (and short name) in bold, then its value.
fn flag_tag(f: &Flag) -> String {
    let mut names: Vec<String> = Vec::new();
    if let Some(s) = f.short {
        names.push(format!("\\fB\\-{s}\\fR"));
    }
    names.extend(
        f.names
            .iter()
            .map(|n| format!("\\fB\\-\\-{}\\fR", prose::escape_roff(n))),
    );
    let mut tag = names.join(", ");
    if let Some(v) = f.value {
        let _ = write!(tag, " {}", synopsis_roff(v, 0));
    }
    tag
}

/// The flag paragraphs (`.TP`) of `flags`.
fn flag_paragraphs<'a>(out: &mut String, flags: impl Iterator<Item = &'a Flag>) {
    for f in flags {
        let _ = write!(
            out,
            ".TP\n{}\n{}",
            flag_tag(f),
            prose::roff_with(f.doc, ".IP")
        );
    }
}

/// The program's man page (roff).
pub fn man<Run>(p: &Program<Run>) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        ".\\\" Manual page of {name}, installed by the Debian package (debian/ in the repository).\n\
         .\\\" Made by `{name} --generate man` from the definitions of its commands and flags.\n\
         .TH {upper} 1 \"{date}\" \"{name} {version}\" \"User Commands\"\n\
         .SH NAME\n{name} \\- {summary}\n.SH SYNOPSIS\n.nf\n",
        name = p.name,
        upper = p.name.to_ascii_uppercase(),
        date = p.date,
        version = p.version,
        summary = p.summary,
    );
    for c in p.commands {
        for line in c.synopsis.lines() {
            let bold = 2 + usize::from(c.subcommands.iter().any(|s| {
                line.strip_prefix(c.name)
                    .and_then(|l| l.strip_prefix(' '))
                    .is_some_and(|l| l.split(' ').next() == Some(s))
            }));
            let _ = writeln!(
                out,
                "{}",
                synopsis_roff(&format!("{} {line}", p.name), bold)
            );
        }
    }
    let _ = write!(
        out,
        "\\fB{}\\fR \\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR\n.fi\n.SH DESCRIPTION\n{}.SH COMMANDS\n",
        p.name, p.man_description
    );
    for (k, c) in p.commands.iter().enumerate() {
        // Said under the next command, for both.
        let shared = p.commands.get(k + 1).is_some_and(|next| next.doc == c.doc);
        for (i, line) in c.synopsis.lines().enumerate() {
            let _ = writeln!(out, ".SS \"{} {}\"", p.name, prose::escape_roff(line));
            if let Some(text) = c.doc.get(i).filter(|_| !shared) {
                out.push_str(&prose::roff(text));
            }
        }
        if shared {
            continue;
        }
        let names = takers_of(c);
        flag_paragraphs(
            &mut out,
            p.flags
                .iter()
                .filter(|f| !f.option && names.iter().any(|n| f.takers.contains(&&**n))),
        );
    }
    out.push_str(".SH OPTIONS\n");
    flag_paragraphs(&mut out, p.flags.iter().filter(|f| f.option));
    out.push_str(p.man_tail);
    out
}

/// The words `complete` offers, as a bash command setting COMPREPLY.
fn offer(complete: Complete, function: &str, commands: &str) -> Option<String> {
    Some(match complete {
        Complete::Nothing => return None,
        Complete::Directories => format!("{function}_offer -d"),
        Complete::Files => format!("{function}_offer -f"),
        Complete::TomlFiles => {
            format!("{function}_offer -f -X '!*.toml'\n            {function}_offer_more -d")
        }
        Complete::Words(w) => format!("{function}_offer -W \"{w}\""),
        Complete::Prefixes(w) => {
            format!("compopt -o nospace 2>/dev/null\n            {function}_offer -W \"{w}\"")
        }
        Complete::Commands => format!("{function}_offer -W \"{commands}\""),
    })
}

/// `words` parted by ` | `, as a bash `case` pattern: lines of at most 88 columns, each
/// after the first starting with `indent`.
fn wrapped(words: &[String], indent: &str) -> String {
    let mut out = String::new();
    let mut line = 0;
    for (i, w) in words.iter().enumerate() {
        let piece = if i == 0 { w.clone() } else { format!(" | {w}") };
        if i > 0 && line + piece.len() + 2 > 88 - indent.len() {
            let _ = write!(out, " |\\\n{indent}{w}");
            line = w.len();
        } else {
            out.push_str(&piece);
            line += piece.len();
        }
    }
    out
}

/// The program's bash completion script: its commands, each command's flags, and what
/// completes a flag's value or an operand.
pub fn bash_completion<Run>(p: &Program<Run>) -> String {
    let f = format!("_{}", p.name.replace('-', "_"));
    let commands: Vec<&str> = p.commands.iter().map(|c| c.name).collect();
    let commands = commands.join(" ");
    let mut out = completion_head(p, &f);
    out.push_str(&value_arms(p, &f, &commands));
    let _ = write!(
        out,
        "    esac

    if [[ -z $cmd ]]; then
        {f}_offer -W \"{commands} {}\"
        return
    fi

",
        dashed_names(p.flags.iter().filter(|fl| fl.taken_by(""))).join(" ")
    );
    out.push_str(&command_flags(p, &f));
    out.push_str(&operand_arms(p, &f, &commands));
    let _ = write!(out, "}}\n\ncomplete -F {f} {}\n", p.name);
    out
}

/// `--name` (and `-s`) of each of `flags`.
fn dashed_names<'a>(flags: impl Iterator<Item = &'a Flag>) -> Vec<String> {
    flags
        .flat_map(|fl| {
            let mut v: Vec<String> = fl.names.iter().map(|n| format!("--{n}")).collect();
            v.extend(fl.short.map(|s| format!("-{s}")));
            v
        })
        .collect()
}

/// The script up to the completion of a flag's value: its helpers, and the loop that
/// finds the command (and subcommand) in the words before the cursor.
fn completion_head<Run>(p: &Program<Run>, f: &str) -> String {
    let name = p.name;
    let valued: std::collections::BTreeSet<String> = p
        .flags
        .iter()
        .filter(|fl| fl.value.is_some())
        .flat_map(|fl| fl.names.iter().map(|n| format!("--{n}")))
        .collect();
    let valued: Vec<String> = valued.into_iter().collect();
    let mut out = format!(
        "# bash completion for {name} (installed by the Debian package as
# /usr/share/bash-completion/completions/{name}): its commands, each command's flags,
# and what completes a flag's value. Made by `{name} --generate complete-bash` from the
# definitions of its commands and flags.

# Sets COMPREPLY to what `compgen ARGS -- \"$cur\"` prints, one word a line.
{f}_offer()
{{
    mapfile -t COMPREPLY < <(compgen \"$@\" -- \"$cur\")
}}

# Adds to COMPREPLY what `compgen ARGS -- \"$cur\"` prints.
{f}_offer_more()
{{
    local more
    mapfile -t more < <(compgen \"$@\" -- \"$cur\")
    COMPREPLY+=(\"${{more[@]}}\")
}}

{f}()
{{
    local cur=${{COMP_WORDS[COMP_CWORD]}}
    local prev=${{COMP_WORDS[COMP_CWORD-1]}}
    local cmd='' i

    # The command is the first word that is neither a flag nor a flag's value, with the
    # word after it when that is one of its subcommands.
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${{COMP_WORDS[i]}} in
            -*) ;;
            *)
                case ${{COMP_WORDS[i-1]}} in
                    {valued})
                        ;;
                    *)
                        cmd=${{COMP_WORDS[i]}}
",
        valued = wrapped(&valued, "                        ")
    );
    for c in p.commands.iter().filter(|c| !c.subcommands.is_empty()) {
        let _ = write!(
            out,
            "                        if [[ $cmd == {} ]] && ((i + 1 < COMP_CWORD)); then
                            case ${{COMP_WORDS[i+1]}} in
                                {}) cmd=\"$cmd ${{COMP_WORDS[i+1]}}\" ;;
                            esac
                        fi
",
            c.name,
            c.subcommands.join(" | ")
        );
    }
    out.push_str(
        "                        break
                        ;;
                esac
                ;;
        esac
    done

",
    );
    out
}

/// The `case` arms that complete the value of the flag before the cursor: one arm per
/// way of completing, in the order the flags come.
fn value_arms<Run>(p: &Program<Run>, f: &str, commands: &str) -> String {
    let mut arms: Vec<(Option<String>, Vec<String>)> = Vec::new();
    for fl in p.flags.iter().filter(|fl| fl.value.is_some()) {
        let action = offer(fl.complete, f, commands);
        let patterns = fl.takers.iter().flat_map(|t| {
            fl.names.iter().map(move |n| match *t {
                "*" => format!("*\" --{n}\""),
                t => format!("\"{t} --{n}\""),
            })
        });
        match arms.iter_mut().find(|(a, _)| *a == action) {
            Some((_, known)) => known.extend(patterns),
            None => arms.push((action, patterns.collect())),
        }
    }
    let mut out = String::from(
        "    # The value of the flag before the cursor.\n    case \"$cmd $prev\" in\n",
    );
    for (action, patterns) in arms {
        let action = action
            .map(|a| format!("{a}\n            "))
            .unwrap_or_default();
        let _ = write!(
            out,
            "        {})\n            {action}return\n            ;;\n",
            wrapped(&patterns, "            ")
        );
    }
    out
}

/// The flags of each command (and subcommand), offered when the word begins with `-`.
fn command_flags<Run>(p: &Program<Run>, f: &str) -> String {
    let mut out = String::from("    local flags=''\n    case $cmd in\n");
    for c in p.commands {
        let mut names = vec![c.name.to_string()];
        names.extend(c.subcommands.iter().map(|s| format!("\"{} {s}\"", c.name)));
        for n in names {
            let own = dashed_names(p.flags.iter().filter(|fl| fl.taken_by(n.trim_matches('"'))));
            let _ = writeln!(out, "        {n}) flags=\"{}\" ;;", own.join(" "));
        }
    }
    let _ = write!(
        out,
        "        *) return ;;
    esac
    if [[ $cur == -* ]]; then
        {f}_offer -W \"$flags\"
        return
    fi

"
    );
    out
}

/// The `case` arms that complete an operand: a file, a subcommand, a command.
fn operand_arms<Run>(p: &Program<Run>, f: &str, commands: &str) -> String {
    let mut out = String::from("    # An operand.\n    case $cmd in\n");
    for c in p.commands {
        let action = match (c.operands, c.subcommands) {
            (Complete::Nothing, []) => None,
            (Complete::Nothing, subs) => Some(format!("{f}_offer -W \"{}\"", subs.join(" "))),
            (o, _) => offer(o, f, commands),
        };
        if let Some(action) = action {
            let _ = write!(
                out,
                "        {})\n            {action}\n            ;;\n",
                c.name
            );
        }
    }
    out.push_str("    esac\n");
    out
}

/// The flags a command takes that say nothing (an empty [`Flag::doc`]), one line each:
/// a flag's doc is its line of `--help` and its paragraph of the man page.
pub fn undocumented<Run>(p: &Program<Run>) -> Vec<String> {
    p.flags
        .iter()
        .filter(|f| f.doc.trim().is_empty() && !f.takers.is_empty())
        .map(|f| format!("--{} has no doc", f.names.join(", --")))
        .collect()
}

/// The flags each command (and subcommand) takes that its `--help` does not name, one
/// line each.
pub fn help_omissions<Run>(p: &Program<Run>) -> Vec<String> {
    let mut found = Vec::new();
    for c in p.commands {
        for name in takers_of(c) {
            let help = command_help(p, &name).unwrap_or_default();
            let named: std::collections::BTreeSet<&str> = help
                .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '-'))
                .filter_map(|w| w.strip_prefix("--"))
                .collect();
            for f in flags_of(p.flags, &name).filter(|f| !named.contains(f)) {
                found.push(format!("{name} --help does not name --{f}"));
            }
        }
    }
    found
}

/// The value of a `--listen` flag: `ADDRESS:PORT` (`127.0.0.1:8080`, `[::1]:8080`,
/// `0.0.0.0:80`), or a port alone, on 127.0.0.1. Why not, naming the flag.
pub fn listen_address(v: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = v.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    v.parse().map_err(|_| {
        format!("--listen {v:?}: expected ADDRESS:PORT (127.0.0.1:8080, [::1]:8080) or a PORT")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listen_address_is_an_address_and_port_or_a_port_on_loopback() {
        assert_eq!(
            listen_address("8091"),
            Ok("127.0.0.1:8091".parse().unwrap())
        );
        assert_eq!(listen_address("[::1]:80"), Ok("[::1]:80".parse().unwrap()));
        assert_eq!(
            listen_address("0.0.0.0:8090"),
            Ok("0.0.0.0:8090".parse().unwrap())
        );
        assert_eq!(
            listen_address("localhost:80"),
            Err("--listen \"localhost:80\": expected ADDRESS:PORT (127.0.0.1:8080, [::1]:8080) or a PORT".into())
        );
        assert!(listen_address("65536").is_err());
    }

    #[test]
    fn a_synopsis_in_roff() {
        assert_eq!(
            synopsis_roff("p ibi mint --host HOST [--ip IP] --date DATE|now", 3),
            "\\fBp ibi mint\\fR \\fB\\-\\-host\\fR \\fIHOST\\fR [\\fB\\-\\-ip\\fR \\fIIP\\fR] \\fB\\-\\-date\\fR \\fIDATE\\fR|now"
        );
        assert_eq!(
            synopsis_roff("p new [--root R] [OPTIONS] FILE...", 2),
            "\\fBp new\\fR [\\fB\\-\\-root\\fR \\fIR\\fR] [\\fIOPTIONS\\fR] \\fIFILE\\fR..."
        );
        assert_eq!(
            synopsis_roff("[ADDRESS:]PORT", 0),
            "[\\fIADDRESS\\fR:]\\fIPORT\\fR"
        );
    }

    /// A program of three commands, one with a subcommand, two saying the same.
    static TOOL: Program<()> = Program {
        name: "tool",
        version: "1",
        date: "2026-01-01",
        summary: "a tool",
        usage_head: "",
        usage_tail: "",
        usage_names_program: true,
        usage_column: 30,
        commands: &[
            Command {
                name: "go",
                synopsis: "go [--fast] [--to PLACE]\ngo far --to PLACE",
                about: "go",
                doc: &["Goes to *PLACE*.\n", "`far` goes further.\n"],
                subcommands: &["far"],
                operands: Complete::Nothing,
                run: (),
            },
            Command {
                name: "stay",
                synopsis: "stay",
                about: "stay",
                doc: &["Waits.\n"],
                subcommands: &[],
                operands: Complete::Nothing,
                run: (),
            },
            Command {
                name: "wait",
                synopsis: "wait",
                about: "wait",
                doc: &["Waits.\n"],
                subcommands: &[],
                operands: Complete::Nothing,
                run: (),
            },
        ],
        flags: &[
            Flag {
                names: &["fast"],
                short: None,
                value: None,
                doc: "go fast, *N* times.",
                takers: &["go"],
                option: false,
                complete: Complete::Nothing,
            },
            Flag {
                names: &["to"],
                short: None,
                value: Some("PLACE"),
                doc: "where to go [home].",
                takers: &["go", "go far"],
                option: false,
                complete: Complete::Nothing,
            },
            HELP,
        ],
        man_description: "",
        man_tail: "",
    };

    #[test]
    fn a_command_help_is_its_usage_its_text_and_its_flags() {
        assert_eq!(
            command_help(&TOOL, "go").unwrap(),
            "usage: tool go [--fast] [--to PLACE]
       tool go far --to PLACE

Goes to PLACE.

`far` goes further.

  --fast      go fast, N times.
  --to PLACE  where to go [home].
  -h, --help  print the usage of the program or of the command, and exit.
"
        );
        assert_eq!(
            command_help(&TOOL, "go far").unwrap(),
            "usage: tool go far --to PLACE

`far` goes further.

  --to PLACE  where to go [home].
  -h, --help  print the usage of the program or of the command, and exit.
"
        );
        assert_eq!(command_help(&TOOL, "go near"), None);
        assert_eq!(command_help(&TOOL, "run"), None);
        assert_eq!(help_omissions(&TOOL), Vec::<String>::new());
        assert_eq!(undocumented(&TOOL), Vec::<String>::new());
    }

    #[test]
    fn a_long_flag_has_lines_of_its_own_and_its_text_a_column() {
        let many = Flag {
            names: &["first-long-name", "second-long-name"],
            doc: "what both do, said at a length that takes two lines of the column.",
            ..HELP
        };
        assert_eq!(
            flag_table(&[&many, &HELP], 50),
            "  -h, --first-long-name, --second-long-name
              what both do, said at a length that
              takes two lines of the column.
  -h, --help  print the usage of the program or of
              the command, and exit.
"
        );
    }

    #[test]
    fn a_command_in_the_man_page_is_its_text_under_its_forms_then_its_flags() {
        let page = man(&TOOL);
        let commands =
            &page[page.find(".SH COMMANDS\n").unwrap()..page.find(".SH OPTIONS\n").unwrap()];
        assert_eq!(
            commands,
            r#".SH COMMANDS
.SS "tool go [\-\-fast] [\-\-to PLACE]"
Goes to \fI\%PLACE\fR.
.SS "tool go far \-\-to PLACE"
\fB\%far\fR goes further.
.TP
\fB\-\-fast\fR
go fast, \fI\%N\fR times.
.TP
\fB\-\-to\fR \fIPLACE\fR
where to go [home].
.SS "tool stay"
.SS "tool wait"
Waits.
"#
        );
    }

    #[test]
    fn a_flag_without_a_doc_is_found() {
        static QUIET: Program<()> = Program {
            flags: &[Flag {
                doc: "",
                takers: &["go"],
                ..HELP
            }],
            commands: &[],
            ..TOOL
        };
        assert_eq!(undocumented(&QUIET), vec!["--help has no doc".to_string()]);
    }

    #[test]
    fn the_nearest_name() {
        let known = ["csv", "config", "email"];
        assert_eq!(
            did_you_mean("cvs", known.iter().copied(), "--"),
            " (did you mean --csv?)"
        );
        assert_eq!(did_you_mean("frobnicate", known.iter().copied(), ""), "");
    }
}
