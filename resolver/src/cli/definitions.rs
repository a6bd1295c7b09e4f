//! The command line of `ibi-resolver`, defined once: its commands and flags, from which
//! come `--help`, the hints of a usage error, the man page (debian/ibi-resolver.1) and
//! the bash completion (debian/bash-completion/ibi-resolver); see the `cmdline` crate.

use cmdline::{Command, Complete, Flag, Program};

use super::{archives, backup, init, memory, migrate, register, resolve, serve, Run};

pub const HELP_HELP: &str = "\
usage: ibi-resolver help [COMMAND]

Prints what the program does and its commands, or, given a COMMAND, that command's
usage (the same as ibi-resolver COMMAND --help).
";

/// Every command but `serve`, `help` and `--help`, which is every command's.
const OPERATORS: &[&str] = &[
    "",
    "init",
    "serve",
    "register",
    "unregister",
    "archives",
    "resolve",
    "memory",
    "forget",
    "backup",
    "migrate-registry",
];

pub static PROGRAM: Program<Run> = Program {
    name: "ibi-resolver",
    version: env!("CARGO_PKG_VERSION"),
    date: "2026-11-24",
    summary: "the resolver of the IBI persistent-identifier system: registers Archives and redirects persistent URLs",
    usage_head: "\
usage: ibi-resolver COMMAND [--config FILE] [ARGS]

Commands (each takes --help; --config defaults to $IBI_RESOLVER_CONFIG, else to
/etc/ibi-resolver/resolver.toml):
",
    usage_tail: "
Exit status: 0 success, 1 failure (or, for resolve, not found), 2 usage error.
",
    usage_names_program: false,
    usage_column: 39,
    commands: &[
        Command {
            name: "init",
            synopsis: "init --publicurl URL [--config FILE]",
            about: "begin a resolver reached at URL: its service IBI,\nits settings and its registry",
            help: init::HELP,
            man: &[r"Begins a resolver that readers reach at
.I URL
.RB ( http:// or
.BR https:// ,
a host and an optional port, no path). Mints the resolver service's IBI from
.IR URL 's
host and port by the rule of the generation standard (a host name gives a rep, an IP
address an IBIp; the date is now), then writes the settings file, every setting
commented, or, when it exists and sets neither
.B serviceibi
nor
.B publicurl
(the Debian package's), sets both in it, keeping every other line, its owner and its
mode; then creates the registry it names (run as root, the registry is given to the owner
of its directory). Prints
.BR publicurl ,
.B serviceibi
and
.B serviceurl
(the URL an Archive puts in
.B [registration]
.BR resolver )
and, on standard error, the next steps. A settings file that sets
.B serviceibi
or
.B publicurl
already is refused.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: init::run,
        },
        Command {
            name: "serve",
            synopsis: "serve [--listen [ADDRESS:]PORT] [--config FILE]",
            about: "run the resolver (HTTP) until SIGINT or SIGTERM",
            help: serve::HELP,
            man: &[r"Runs the resolver until SIGINT or SIGTERM: new connections are then refused, idle ones
closed at once, and requests under way get 5 s.
.B \-\-listen
puts it on another address than the settings'
.BR listen :
several instances that share one settings file and its registry, each on a port of its
own, as the templated unit
.BI ibi-resolver@ PORT .service
runs them.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: serve::run,
        },
        Command {
            name: "register",
            synopsis: "register SERVICEIBI --email E [--key-file F] [--config FILE]",
            about: "register an Archive; its key is read from F or\nfrom the first line of standard input",
            help: register::HELP,
            man: &[r"Registers the Archive whose service IBI is
.IR SERVICEIBI ,
with its administrator's e-mail address
.RB ( \-\-email ).
Its registration key (ten or more digits, optionally a
.B \-
and ten more) is read from the file
.I F
.RB ( \-\-key\-file )
or from the first line of standard input, never from the command line, and stored only
as an argon2id hash.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: register::run,
        },
        Command {
            name: "unregister",
            synopsis: "unregister SERVICEIBI [--config FILE]",
            about: "forget an Archive",
            help: register::UNREGISTER_HELP,
            man: &["Forgets an Archive.\n"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: register::unregister,
        },
        Command {
            name: "archives",
            synopsis: "archives [--csv] [--config FILE]",
            about: "every registered Archive and its state",
            help: archives::HELP,
            man: &[r"Lists every registered Archive: service IBI, address, included (and dormant), last
confirmation, last seen, failures in a row, latency, its conflicts (IBIs remembered at
another Archive whose Original it claimed too), and its moves: inclusions at another
address than the one recorded (how many, the last one's time and the address it left),
and those refused because the Archive still answered at the address recorded; with
.B \-\-csv
as comma-separated values (the moves in the last four columns). A move its
administrator did not make means someone else holds its key.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: archives::run,
        },
        Command {
            name: "resolve",
            synopsis: "resolve PERSISTENT-URL [--lang L] [--ip IP] [--acknowledge] [--config FILE]",
            about: "resolve once and print each step",
            help: resolve::HELP,
            man: &[r"One resolution from the shell: every round (and why it was asked), every Archive's
answer and the choice are printed.
.B \-\-lang
is the reader's Accept-Language,
.B \-\-ip
the reader's address sent to the Archives, and
.B \-\-acknowledge
sends the acknowledgment to the Archive chosen, as a redirect does. Exit status 0 when
found, 1 when not.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: resolve::run,
        },
        Command {
            name: "memory",
            synopsis: "memory [IBI] [--config FILE]",
            about: "the remembered locations (of IBI only)",
            help: memory::HELP,
            man: &[r#"The location memory: for each IBI remembered (or for
.I IBI
only), the Archive asked first, when it was last used and when last verified (with
.B (expired)
once past
.BR [memory] " " expiry ).
Exit status 1 when
.I IBI
is not remembered.
"#],
            subcommands: &[],
            operands: Complete::Nothing,
            run: memory::run,
        },
        Command {
            name: "forget",
            synopsis: "forget IBI [--config FILE]",
            about: "forget where IBI was found (a running server\ndrops it within seconds)",
            help: memory::FORGET_HELP,
            man: &[r"Forgets where
.I IBI
was found: the next resolution asks every Archive. A running server drops it within a
few seconds. Exit status 1 when it was not remembered.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: memory::forget,
        },
        Command {
            name: "backup",
            synopsis: "backup FILE [--config FILE]",
            about: "copy the registry into FILE, a new file, while\nthe server runs",
            help: backup::HELP,
            man: &[r"Copies the registry (every registered Archive, its state and the location memory)
into
.IR FILE ,
a new file of mode 600, with SQLite's online backup: safe while
.B ibi-resolver serve
runs and writes to it. An existing
.I FILE
is never written over. To restore: stop the resolver, copy the backup over
.B database
(owned by the user the resolver runs as, mode 600), start it.
"],
            subcommands: &[],
            operands: Complete::Files,
            run: backup::run,
        },
        Command {
            name: "migrate-registry",
            synopsis: "migrate-registry --to URI [--config FILE]",
            about: "copy the SQLite registry into PostgreSQL, for\nseveral resolvers to share",
            help: migrate::HELP,
            man: &[r"Copies the registry of the settings, an SQLite database (every registered Archive
with its key hash and state, the location memory, the conflicts seen), into the
PostgreSQL database
.I URI
.RB ( postgresql:// \fIUSER\fP @ \fIHOST\fP [: \fIPORT\fP ][, \fIHOST2\fP ...] / \fIDB\fP ),
whose schema it makes or brings up to date. What that database holds already is kept:
running it again copies only what is not there yet. Then set
.B database
to
.I URI
in the settings of every resolver that shares it, and restart them. The SQLite
registry is left as it was.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: migrate::run,
        },
        Command {
            name: "help",
            synopsis: "help [COMMAND]",
            about: "this text, or a command's",
            help: HELP_HELP,
            man: &[r#"Prints what the program does and its commands, or a
.IR COMMAND 's
usage (the same as
.RI "ibi-resolver " COMMAND " \-\-help" ).
"#],
            subcommands: &[],
            operands: Complete::Commands,
            run: super::help,
        },
    ],
    flags: &[
        Flag {
            names: &["publicurl"],
            short: None,
            value: Some("URL"),
            doc: "how readers reach this resolver:\n.BR http:// or\n.BR https:// ,\na host and an optional port, no path.",
            takers: &["init"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["listen"],
            short: None,
            value: Some("[ADDRESS:]PORT"),
            doc: "where to listen, in place of the settings'\n.BR listen :\n127.0.0.1:8091, [::1]:8091, or a port alone on 127.0.0.1.",
            takers: &["serve"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["to"],
            short: None,
            value: Some("URI"),
            doc: "the PostgreSQL database to copy the registry into;\n.B \\-\n: the first line of standard input (a URI with a password, out of the process list).",
            takers: &["migrate-registry"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["email"],
            short: None,
            value: Some("E"),
            doc: "the Archive administrator's e-mail address.",
            takers: &["register"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["key-file"],
            short: None,
            value: Some("F"),
            doc: "read the registration key from\n.I F\ninstead of standard input.",
            takers: &["register"],
            option: false,
            complete: Complete::Files,
        },
        Flag {
            names: &["csv"],
            short: None,
            value: None,
            doc: "comma-separated values.",
            takers: &["archives"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["lang"],
            short: None,
            value: Some("L"),
            doc: "the reader's language preference, as an Accept-Language header.",
            takers: &["resolve"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["ip"],
            short: None,
            value: Some("IP"),
            doc: "the reader's address.",
            takers: &["resolve"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["acknowledge"],
            short: None,
            value: None,
            doc: "acknowledge the URL chosen to its Archive.",
            takers: &["resolve"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["config"],
            short: None,
            value: Some("FILE"),
            doc: "the settings (resolver.toml); every command takes it. Without it, the file the\nenvironment variable\n.B IBI_RESOLVER_CONFIG\nnames, else\n.IR /etc/ibi-resolver/resolver.toml .",
            takers: OPERATORS,
            option: true,
            complete: Complete::TomlFiles,
        },
        cmdline::HELP,
        cmdline::VERSION,
    ],
    man_description: r".B ibi-resolver
is a long-running HTTP server that registers Archives (see
.BR ibi-archive (1)),
includes and excludes them at their request, and turns a persistent URL
.RI ( publicurl / IBI [ modifier ][/ file ])
into the URL an Archive hands out, by asking every included Archive, then redirects the
reader there. Its settings are in a TOML file
.RB ( \-\-config ,
else the file
.B IBI_RESOLVER_CONFIG
names, else
.IR /etc/ibi-resolver/resolver.toml ),
which
.B ibi-resolver init
writes or completes; its registry of Archives is the database named by
.B database
in that file: an SQLite file, or a PostgreSQL database
.RB ( postgresql:// ...)
that several resolvers share behind a balancer.
.PP
An Archive included at one address that asks to be included at another (a move) is
refused (409) while it still answers at the address recorded: its administrator
switches it off or excludes it first. Every move is logged and counted, and
.B ibi-resolver archives
lists them.
.PP
An answer that names a related item kept elsewhere (its metadata, a translation, a next
edition) without its URL starts another round for that item, in every Archive. A reader
gets a redirect (302) to the URL found; 410 when the item is removed everywhere it was
found; 404 when every included Archive answered and none knows it; 503, with
Retry-After and the Archives named, while an Archive that could hold it did not answer.
.PP
The registry must stay the server's own: the operator's commands run as the user that
runs the server. With the Debian package, that is the system user
.BR ibi-resolver :
.PP
.nf
.RS
ibi-resolver init \-\-publicurl https://resolver.example.org
echo KEY | runuser \-u ibi-resolver \-\- ibi-resolver register SERVICEIBI \-\-email E
.RE
.fi
",
    man_tail: r#".SH FILES
.TP
.I /etc/ibi-resolver/resolver.toml
the settings of the Debian package (owner root, group ibi-resolver, mode 640), read
when neither
.B \-\-config
nor
.B IBI_RESOLVER_CONFIG
names another file.
.B ibi-resolver init \-\-publicurl
.I URL
sets
.B serviceibi
(the resolver service's IBI: it answers at
.IR publicurl / serviceibi )
and
.B publicurl
(how readers reach it) in it: until then every command refuses the file, naming the
missing setting.
.TP
.I /var/lib/ibi-resolver/resolver.sqlite
the registry (mode 600, in a directory of mode 700, both the ibi-resolver user's). Removed
with the user when the package is purged.
.TP
.I /usr/lib/systemd/system/ibi-resolver.service
the systemd unit: it runs
.B ibi-resolver serve
as the user ibi-resolver, sandboxed. The package neither enables nor starts it:
.B systemctl enable \-\-now ibi-resolver
once resolver.toml is set. Its log is in the journal
.RB ( "journalctl \-u ibi-resolver" ),
whose times stand for the lines' own; elsewhere each line on standard error starts with
its time (RFC 3339, UTC, milliseconds).
.TP
.I /usr/lib/systemd/system/ibi-resolver@.service
the templated unit: the instance
.BI ibi-resolver@ PORT
runs
.B ibi-resolver serve \-\-listen 127.0.0.1:\c
.I PORT
with the same settings file, for several instances behind a balancer
.RB ( "systemctl enable \-\-now ibi-resolver@8090 ibi-resolver@8091" ;
its log:
.BR "journalctl \-u ibi-resolver@8090" ).
.SH ENVIRONMENT
.TP
.B IBI_RESOLVER_CONFIG
the settings file of every command when
.B \-\-config
is not given.
.SH EXIT STATUS
0 success, 1 failure (or, for
.BR resolve ,
not found), 2 bad arguments (one line on standard error that shows the expected form,
or points to the command's
.BR \-\-help ).
.SH SEE ALSO
.BR ibi-archive (1),
.BR runuser (1),
.BR systemctl (1)
"#,
};

#[cfg(test)]
mod tests {
    #[test]
    fn each_help_names_the_flags_of_its_command() {
        assert_eq!(
            cmdline::help_disagreements(&super::PROGRAM),
            Vec::<String>::new()
        );
    }
}
