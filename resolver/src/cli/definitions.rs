//! The command line of `ibi-resolver`, defined once: its commands and flags, from which
//! come `--help`, the hints of a usage error, the man page (debian/ibi-resolver.1) and
//! the bash completion (debian/bash-completion/ibi-resolver); see the `cmdline` crate.

use cmdline::{Command, Complete, Flag, Program};

use super::{archives, backup, init, memory, migrate, register, resolve, serve, Run};

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
            doc: &[r"Begins a resolver that readers reach at *URL* (`http://` or `https://`, a host and an
optional port, no path). Mints the resolver service's IBI from *URL*'s host and port by
the rule of the generation standard (a host name gives a rep, an IP address an IBIp;
the date is now), then writes *FILE*, a resolver.toml with every setting commented, or,
when *FILE* exists and sets neither `serviceibi` nor `publicurl` (the Debian package's),
sets both in it, keeping every other line, its owner and its mode; then creates the
registry that *FILE* names (run as root, the registry is given to the owner of its
directory). Prints `publicurl`, `serviceibi` and `serviceurl` (the URL an Archive names
in `[registration]` of its archive.toml: a `[[registration.resolver]]` table's `url`)
and, on standard error, the next steps. A *FILE* that sets `serviceibi` or `publicurl`
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
            doc: &[r"Runs the resolver (HTTP) with the settings of *FILE* until SIGINT or SIGTERM: new
connections are then refused, idle ones closed at once, and requests under way get 5 s.
One line per request on standard error, after its time (RFC 3339, UTC, milliseconds),
or without it when standard error is the systemd journal; so is the last line, why it
could not start or stopped on a fault.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: serve::run,
        },
        Command {
            name: "register",
            synopsis: "register SERVICEIBI --email E [--key-file F] [--config FILE]",
            about: "register an Archive; its key is read from F or\nfrom the first line of standard input",
            doc: &[r"Registers the Archive whose service IBI is *SERVICEIBI*, with its administrator's
e-mail address *E*. Its registration key (ten or more digits, optionally a `-` and ten
or more again) is read from the file *F* or from the first line of standard input,
never from the command line, and stored only as an argon2id hash. The Archive is
included when it asks (`ibi-archive include`).
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: register::run,
        },
        Command {
            name: "unregister",
            synopsis: "unregister SERVICEIBI [--config FILE]",
            about: "forget an Archive",
            doc: &[r"Forgets the Archive whose service IBI is *SERVICEIBI*. Exit status 1 when it is not
registered.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: register::unregister,
        },
        Command {
            name: "archives",
            synopsis: "archives [--csv] [--config FILE]",
            about: "every registered Archive and its state",
            doc: &[r"Lists every registered Archive: service IBI, address, included (and dormant), last
confirmation, last seen, failures in a row, latency, its conflicts (IBIs remembered at
another Archive whose Original it claimed too), and its moves: inclusions at another
address than the one recorded (how many, the last one's time and the address it left),
and those refused because the Archive still answered at the address recorded. A move
its administrator did not make means someone else holds its key.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: archives::run,
        },
        Command {
            name: "resolve",
            synopsis: "resolve PERSISTENT-URL [--lang L] [--ip IP] [--acknowledge] [--config FILE]",
            about: "resolve once and print each step",
            doc: &[r"One resolution from the shell: every round (and why it was asked), every Archive's
answer and the choice are printed. *PERSISTENT-URL* is a whole URL, a path, or an IBI
with what follows it. Exit status 0 when found, 1 when not.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: resolve::run,
        },
        Command {
            name: "memory",
            synopsis: "memory [IBI] [--config FILE]",
            about: "the remembered locations (of IBI only)",
            doc: &[r"The location memory: for each IBI remembered (or for *IBI* only), the Archive asked
first, when it was last used and when last verified (`(expired)` once past `[memory]
expiry`), the most recently used first. Exit status 1 when *IBI* is not remembered.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: memory::run,
        },
        Command {
            name: "forget",
            synopsis: "forget IBI [--config FILE]",
            about: "forget where IBI was found (a running server\ndrops it within seconds)",
            doc: &[r"Forgets where *IBI* was found: the next resolution asks every Archive. A running
server drops it within a few seconds. Exit status 1 when it was not remembered.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: memory::forget,
        },
        Command {
            name: "backup",
            synopsis: "backup FILE [--config FILE]",
            about: "copy the registry into FILE, a new file, while\nthe server runs",
            doc: &[r"Copies the registry (the database of the settings: every registered Archive, its
state and the location memory) into *FILE*, a new file of mode 600, with SQLite's
online backup: safe while `ibi-resolver serve` runs and writes to it. An existing
*FILE* is never written over. Prints what it wrote. To restore: stop the resolver, copy
the backup over the database (`database` of the settings, owned by the user the
resolver runs as, mode 600), start it.
"],
            subcommands: &[],
            operands: Complete::Files,
            run: backup::run,
        },
        Command {
            name: "migrate-registry",
            synopsis: "migrate-registry --to URI [--config FILE]",
            about: "copy the SQLite registry into PostgreSQL, for\nseveral resolvers to share",
            doc: &[r"Copies the registry of the settings, an SQLite database (every registered Archive
with its key hash and state, the location memory, the conflicts seen), into the
PostgreSQL database *URI*, whose schema it makes or brings up to date:

  postgresql://*USER*@*HOST*[:*PORT*][,*HOST2*[:*PORT*]]/*DB*[?...]

What that database holds already is kept: running it again copies only what is not
there yet. Prints what it copied; then set `database` to
*URI* in the settings of every resolver that shares it, and restart them. The SQLite
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
            doc: &[r"Prints what the program does and its commands, or, given a *COMMAND*, that command's
usage (the same as `ibi-resolver *COMMAND* --help`).
"],
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
            doc: "how readers reach this resolver: `http://` or `https://`, a host and an optional port, no path.",
            takers: &["init"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["listen"],
            short: None,
            value: Some("[ADDRESS:]PORT"),
            doc: r"where to listen, in place of the settings' `listen`: *ADDRESS*:*PORT*
(127.0.0.1:8091, [::1]:8091) or a *PORT* alone, on 127.0.0.1; several instances that
share one settings file (and its registry) each listen on a port of their own, as the
templated unit `ibi-resolver@*PORT*.service` runs them.",
            takers: &["serve"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["to"],
            short: None,
            value: Some("URI"),
            doc: r"the PostgreSQL database to copy the registry into; `-`: the *URI* is the first line
of standard input (a URI with a password, out of the process list and the shell's
history).",
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
            doc: "read the registration key from *F* instead of standard input.",
            takers: &["register"],
            option: false,
            complete: Complete::Files,
        },
        Flag {
            names: &["csv"],
            short: None,
            value: None,
            doc: r"comma-separated values, after the header `serviceibi,address,included,...` (the
moves in the last four columns: `moves,movedat,movedfrom,movesrefused`).",
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
            doc: "the reader's address sent to the Archives (several: parted by spaces or commas) [127.0.0.1].",
            takers: &["resolve"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["acknowledge"],
            short: None,
            value: None,
            doc: "acknowledge the URL chosen to its Archive, as a redirect does.",
            takers: &["resolve"],
            option: false,
            complete: Complete::Nothing,
        },
        Flag {
            names: &["config"],
            short: None,
            value: Some("FILE"),
            doc: r"the settings (resolver.toml); every command takes it [the file the environment
variable `IBI_RESOLVER_CONFIG` names, else */etc/ibi-resolver/resolver.toml*].",
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
    fn every_flag_says_what_it_does() {
        assert_eq!(cmdline::undocumented(&super::PROGRAM), Vec::<String>::new());
    }

    #[test]
    fn each_help_lists_every_flag_of_its_command() {
        assert_eq!(
            cmdline::help_omissions(&super::PROGRAM),
            Vec::<String>::new()
        );
    }
}
