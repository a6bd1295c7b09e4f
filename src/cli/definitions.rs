//! The command line of `ibi-archive`, defined once: its commands and flags, from which
//! come `--help`, the hints of a usage error, the man page (debian/ibi-archive.1) and
//! the bash completion (debian/bash-completion/ibi-archive); see the `cmdline` crate.

use cmdline::{Command, Complete, Flag, Program};

use super::{check, delete, ibi, init, new, prefixes, query, register, serve, stats, Run};

pub const HELP_HELP: &str = "\
usage: ibi-archive help [COMMAND]

Prints what the program does and its commands, or, given a COMMAND, that command's
usage (the same as ibi-archive COMMAND --help).
";

/// The commands that read or write an Archive: they take --root.
const ON_AN_ARCHIVE: &[&str] = &[
    "init", "new", "check", "delete", "prefixes", "include", "exclude", "stats", "query",
    "describe", "serve",
];

/// A flag of `takers` with a value, described in its command's text.
const fn valued(
    name: &'static [&'static str],
    value: &'static str,
    takers: &'static [&'static str],
) -> Flag {
    Flag {
        names: name,
        short: None,
        value: Some(value),
        doc: "",
        takers,
        option: false,
        complete: Complete::Nothing,
    }
}

/// A flag of `takers` with a value, and what it does.
const fn documented(
    name: &'static [&'static str],
    value: Option<&'static str>,
    takers: &'static [&'static str],
    doc: &'static str,
) -> Flag {
    Flag {
        names: name,
        short: None,
        value,
        doc,
        takers,
        option: false,
        complete: Complete::Nothing,
    }
}

pub static PROGRAM: Program<Run> = Program {
    name: "ibi-archive",
    version: env!("CARGO_PKG_VERSION"),
    date: "2026-11-24",
    summary: "the Archive service of the IBI resolution system, and its administrator's tools",
    usage_head: "\
ibi-archive: the Archive service of the IBI resolution system, and its tools

As a CGI program (GATEWAY_INTERFACE set) it answers the resolver for the Archive
at $IBI_ARCHIVE_ROOT. From a shell:

",
    usage_tail: "
Every command has --help (or -h). The Archive root is --root, else $IBI_ARCHIVE_ROOT,
else the current directory. Exit status: 0 done, 1 failed, 2 bad arguments.
",
    usage_names_program: true,
    usage_column: 50,
    commands: &[
        Command {
            name: "init",
            synopsis: "init [--root R] --address HOST[:PORT] [OPTIONS]",
            about: "create an Archive",
            help: init::HELP,
            man: &[r"Creates an Archive in
.I R
(made if missing; one that already holds archive.toml, col/ or var/ is refused): a
commented archive.toml (mode 600), col/ with the Archive service item, and var/ (mode
700) with the minting state. Prints the pairs
.B rep
and
.B ibip
of the service item, then the next steps on standard error. With
.BR \-\-email ,
each
.B \-\-resolver
.I URL
(repeatable; the service URL
.B ibi-resolver init
prints as
.BR serviceurl )
names a resolver of
.BR [registration] ,
in that order (default: http://urlib.net/J8LNKB5R7W/3FUQHC5), each in a
.B [[registration.resolver]]
table with a new registration key of its own.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: init::run,
        },
        Command {
            name: "new",
            synopsis: "new [--root R] [OPTIONS] FILE...",
            about: "mint an IBI and create an item",
            help: new::HELP,
            man: &[r"Mints an IBI with the temporal distributor
.RB ( [minting]
of archive.toml, its state in var/minting.state) and stores the
.IR FILE s
(a directory is copied whole, under its name) as the new item's doc/. Prints the pairs
.B rep
and
.BR ibip .
"],
            subcommands: &[],
            operands: Complete::Files,
            run: new::run,
        },
        Command {
            name: "check",
            synopsis: "check [--root R] [--web-user USER] [--fix]",
            about: "validate the whole Archive",
            help: check::HELP,
            man: &[r#"Validates the whole Archive: archive.toml and its service item, every directory and item
under col/, and the files of doc/ that are never served (links, hard links, pipes).
Prints one line per fault, then
.RI "checked " N " items: " K " faults" .
Reports as a fault var/, or a file of it the service uses, that the web server's user
cannot use (var/ writable and searchable, var/urlkey.secret readable,
var/acknowledgments.log, var/acknowledgments.synced and var/acknowledged/
writable), with the
.B chown
to run.
Warns when archive.toml or var/urlkey.secret is readable by every local user. Notes
(not faults) a next edition, metadata or translation naming an IBI this Archive does
not hold, which the resolver looks for in the other Archives; and a persistent URL
in a metadata item's record (its
.BR dc:identifier )
that names a resolver
.B [registration]
does not name (an Archive made before its resolver took the standard's), which
.B \-\-fix
rewrites to name the first of
.BR [registration] ,
in the record and in its page. Exit
status 1 when there are faults.
Writes var/oai-records, the index of the OAI-PMH data provider's records, from its
walk, and var/oai-records.stamp, what col/ was (when var/ exists); the data provider
builds them itself when they are missing or col/ has changed since.
"#],
            subcommands: &[],
            operands: Complete::Nothing,
            run: check::run,
        },
        Command {
            name: "delete",
            synopsis: "delete [--root R] [--keep-content] [--reason TEXT] IBI",
            about: "make an item a tombstone",
            help: delete::HELP,
            man: &[r"Turns the item
.I IBI
into a tombstone: state Deleted, timestamp now, its doc/ removed (kept with
.BR \-\-keep\-content ),
and
.I TEXT
of
.BR \-\-reason ,
when given, as its reason, which its landing page shows (at most 500 bytes).
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: delete::run,
        },
        Command {
            name: "prefixes",
            synopsis: "prefixes [--root R]",
            about: "remember col/'s prefixes for IBIp lookups",
            help: prefixes::HELP,
            man: &[r"Lists the Archive's prefixes and writes them to var/col-prefixes, so that the service
finds an IBIp without listing col/.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: prefixes::run,
        },
        Command {
            name: "include",
            synopsis: "include [--root R] [--resolver URL]...",
            about: "join the resolvers",
            help: register::HELP,
            // Said under exclude, for both.
            man: &[],
            subcommands: &[],
            operands: Complete::Nothing,
            run: register::include,
        },
        Command {
            name: "exclude",
            synopsis: "exclude [--root R] [--resolver URL]...",
            about: "leave the resolvers",
            help: register::HELP,
            man: &[r#"Sends each resolver of archive.toml's
.B [registration]
(the
.B [[registration.resolver]]
tables, or the list
.BR resolvers ,
or the one
.BR resolver ;
the
.B \-\-resolver
URLs instead when given, the flag repeated for several) the inclusion or exclusion
request, with the values of
.B [registration]
and the registration key of that resolver: the
.B key
of its
.B [[registration.resolver]]
table, else the
.B key
of
.B [registration]
(a
.B \-\-resolver
URL without a table of its own takes that one, or is refused when each resolver has
its own key). Prints the status pairs each answers; with several resolvers, each line
after the resolver's URL and
.BR ": " ,
and a failure of one (said on standard error) does not keep the others from being
asked. Exit status 0 only when every resolver answers
.B status.archive included
(include) or
.B excluded
(exclude). A registration key is never printed.
.PP
.B include
warns on standard error for each resolver whose URL is
.B http://
to a host that is not loopback: its key crosses the network in clear, and whoever reads
it can include the Archive at another address there. This build speaks no https: reach
such a resolver through a TLS tunnel (the administrator's guide, "Joining resolvers").
.PP
A resolver that answers 429 (too many requests from the Archive's network: it checks
them in turn) or 503 (its registry out of reach) with Retry-After is asked again after
the seconds it asks for (60 at most), one line on standard error each time, 5 times in
all; then the command gives up on it, saying why.
"#],
            subcommands: &[],
            operands: Complete::Nothing,
            run: register::exclude,
        },
        Command {
            name: "stats",
            synopsis: "stats [--root R] [--csv] [--item IBI]",
            about: "access counts",
            help: stats::HELP,
            man: &[r"Counts the accesses recorded in var/acknowledgments.log, per item and per month (UTC):
an aligned table, or with
.B \-\-csv
the rows under the header item,month,count.
.B \-\-item
counts one item only (either form of its IBI). The log is first synced to disk when the
service wrote lines no sync covers yet (archive.toml's
.B [acknowledgments] sync_interval
lets them wait for a sync, 1 second unless set).
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: stats::run,
        },
        Command {
            name: "query",
            synopsis: "query [--root R] QUERYSTRING",
            about: "the body the service would send",
            help: query::QUERY_HELP,
            man: &[r"Prints the body the Archive service would send for
.I QUERYSTRING
(what follows
.B ?
in the request), byte for byte.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: query::query,
        },
        Command {
            name: "describe",
            synopsis: "describe [--root R] IBI",
            about: "every property of an item",
            help: query::DESCRIBE_HELP,
            man: &[r"Prints every property of the item
.IR IBI ,
for every relation the Archive offers, as one pair list.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: query::describe,
        },
        Command {
            name: "serve",
            synopsis: "serve [--root R] [--listen [ADDRESS:]PORT] [--no-inclusion] [LIMITS]",
            about: "an embedded web server",
            help: serve::HELP,
            man: &[r#"Serves the Archive's routes with no web server (default 127.0.0.1:8080).
When archive.toml has
.BR [registration] ,
the Archive is included in each of its resolvers once
.B serve
listens (the request of
.BR "ibi-archive include" ,
each resolver sent its own key),
and excluded from each when it is stopped by SIGTERM, SIGINT or SIGHUP, before it exits
(5 seconds at most, so that a resolver that does not answer never holds the stop); its
registration is kept. A failed inclusion is one line on standard error (never the key)
and is tried again 1, 2, 4... seconds later, at most 5 minutes apart, while
.B serve
goes on serving; after an answer 429 or 503 with Retry-After, after the time the
resolver asks (60 seconds at most).
.PP
An acknowledgment counted is in var/acknowledgments.log before it is answered, and is
synced to disk within archive.toml's
.B [acknowledgments] sync_interval
(1 second unless set; "0" syncs each line before its answer): by the acknowledgments
that follow, or, when none comes,
.BR serve 's
own thread, which syncs the log once more when it stops.
"#],
            subcommands: &[],
            operands: Complete::Nothing,
            run: serve::run,
        },
        Command {
            name: "ibi",
            synopsis: "ibi IBI\nibi mint --host H [--port P] [--ip IP [--ibip-port P]] --date T|now",
            about: "read an IBI of either form, or mint one",
            help: ibi::HELP,
            man: &[
                r"Reads
.IR IBI ,
a uniform repository name (sid.inpe.br/mtc-m18/2009/02.16.17.46) or an IBIp
(8JMKD3MGP8W/34PGRBS), and prints its form, prefix, suffix, date, and host and port or
IP and port.
",
                r"Prints the rep of
.B \-\-host
and
.B \-\-port
(default 80) for
.B \-\-date
and, with
.BR \-\-ip ,
the IBIp of that IP and
.B \-\-ibip\-port
(default 800). Nothing is recorded.
",
            ],
            subcommands: &["mint"],
            operands: Complete::Nothing,
            run: ibi::run,
        },
        Command {
            name: "help",
            synopsis: "help [COMMAND]",
            about: "this text, or a command's",
            help: HELP_HELP,
            man: &[r#"Prints what the program does and its commands, or a
.IR COMMAND 's
usage (the same as
.RI "ibi-archive " COMMAND " \-\-help" ).
"#],
            subcommands: &[],
            operands: Complete::Commands,
            run: super::help,
        },
    ],
    flags: &[
        // init
        Flag {
            complete: Complete::Nothing,
            ..documented(
                &["address"],
                Some("HOST[:PORT]"),
                &["init"],
                r"how the resolver and readers reach the web server that serves the Archive
.RB ( archiveaddress ):
every URL handed out starts with
.RI http:// HOST [: PORT ];
.I PORT
is also the port of the reps.",
            )
        },
        documented(
            &["host"],
            Some("FQDN"),
            &["init"],
            r"the fully qualified host name the reps are made of (default: the
.I HOST
of
.BR \-\-address ).",
        ),
        documented(
            &["ip"],
            Some("IP"),
            &["init"],
            r"the IP address coded in the IBIps (default:
.I HOST
resolved).",
        ),
        documented(
            &["baseurl"],
            Some("URL"),
            &["init"],
            r"where col/ and the service are reached, when not
.RI http:// HOST [: PORT ]
(https, a path prefix).",
        ),
        Flag {
            complete: Complete::Words("60 1 0.1 0.01 0.001"),
            ..documented(
                &["granularity"],
                Some("G"),
                &["init"],
                "seconds between two minted IBIs: 60, 1, 0.1, ... (default 1).",
            )
        },
        documented(
            &["email"],
            Some("E"),
            &["init"],
            r"the administrator's e-mail address: writes
.B [registration]
with a new registration key for each resolver, for joining them.",
        ),
        // check
        documented(
            &["web-user"],
            Some("USER"),
            &["check", "init", "new"],
            r"the web server's user, which runs the service and must be able to use var/
(default www-data). For
.BR check ,
one this machine does not have is said in a note, and var/ is not judged; for
.B init
and
.B new
run as root, the var/ they make is given to that user, where this machine has one.",
        ),
        documented(
            &["fix"],
            None,
            &["check"],
            r"rewrite the persistent URLs of metadata items that name a resolver
.B [registration]
does not name, to name its first resolver (each rewrite is a note).",
        ),
        // new
        Flag {
            complete: Complete::Files,
            ..documented(
                &["target"],
                Some("FILE"),
                &["new"],
                "the item's default file (default: the only file, else index.html).",
            )
        },
        documented(
            &["language"],
            Some("ll[-CC]"),
            &["new"],
            "the language of the content.",
        ),
        documented(
            &["translation-of"],
            Some("IBI"),
            &["new"],
            r"the item translates
.I IBI
.RB ( \-\-language
required); an
.I IBI
stored here gets the link to the new item, and the new item the link back.",
        ),
        documented(
            &["edition-of"],
            Some("IBI"),
            &["new"],
            r"the item is the next edition of
.IR IBI .",
        ),
        documented(
            &["restricted"],
            None,
            &["new"],
            r"clients outside
.RB [ access ]. networks
get the metadata instead of the data.",
        ),
        documented(
            &["copy"],
            None,
            &["new"],
            r"store a Copy of an item identified elsewhere, under its IBI, instead of minting one:
the IBI given with
.B \-\-ibi
.I REP
and, when it has one, a second
.B \-\-ibi
.IR IBIP .",
        ),
        documented(
            &["ibi"],
            Some("REP|IBIP"),
            &["new"],
            r"(with
.B \-\-copy
only) the IBI of the item the Copy is of: one rep and at most one IBIp.",
        ),
        documented(
            &[
                "title",
                "creator",
                "subject",
                "description",
                "publisher",
                "contributor",
                "date",
                "type",
                "format",
                "identifier",
                "source",
                "relation",
                "coverage",
                "rights",
            ],
            Some("VALUE"),
            &["new"],
            r"Dublin Core elements: any of them makes a second item (contenttype Metadata, holding
oai_dc.xml and metadata.html) to which the new item's
.B metadata
points; it is printed as
.B metadata.rep
and
.BR metadata.ibip .",
        ),
        Flag {
            complete: Complete::Prefixes(
                "title= creator= subject= description= publisher= contributor= date= type= format= identifier= source= language= relation= coverage= rights=",
            ),
            ..documented(
                &["dc"],
                Some("ELEMENT=VALUE"),
                &["new"],
                "any of the fifteen elements (also language); repeatable.",
            )
        },
        // delete, include and exclude, stats: said in their text.
        Flag {
            value: None,
            ..valued(&["keep-content"], "", &["delete"])
        },
        valued(&["reason"], "TEXT", &["delete"]),
        valued(&["resolver"], "URL", &["init", "include", "exclude"]),
        Flag {
            value: None,
            ..valued(&["csv"], "", &["stats"])
        },
        valued(&["item"], "IBI", &["stats"]),
        // serve
        documented(
            &["listen"],
            Some("[ADDRESS:]PORT"),
            &["serve"],
            "where to listen: 127.0.0.1:8080, [::1]:8080, 0.0.0.0:80, or a port alone on 127.0.0.1.",
        ),
        documented(
            &["no-inclusion"],
            None,
            &["serve"],
            "send neither the inclusion nor the exclusion request.",
        ),
        documented(
            &["max-connections"],
            Some("N"),
            &["serve"],
            "connections open at once (256, fewer when descriptors are few).",
        ),
        documented(
            &["max-per-client"],
            Some("N"),
            &["serve"],
            "connections open at once from one address (16).",
        ),
        documented(
            &["head-timeout"],
            Some("SECS"),
            &["serve"],
            "time to send a request head (10).",
        ),
        documented(
            &["idle-timeout"],
            Some("SECS"),
            &["serve"],
            "time a connection may wait between requests (5).",
        ),
        documented(
            &["write-timeout"],
            Some("SECS"),
            &["serve"],
            "time a write may make no progress (30).",
        ),
        // ibi mint: said in its text.
        valued(&["host"], "HOST", &["ibi mint"]),
        valued(&["port"], "PORT", &["ibi mint"]),
        valued(&["ip"], "IP", &["ibi mint"]),
        valued(&["ibip-port"], "PORT", &["ibi mint"]),
        Flag {
            complete: Complete::Words("now"),
            ..valued(&["date"], "DATE|now", &["ibi mint"])
        },
        // The program's, and most commands'.
        Flag {
            names: &["root"],
            short: None,
            value: Some("R"),
            doc: "the Archive root, for every command that reads or writes an Archive.",
            takers: ON_AN_ARCHIVE,
            option: true,
            complete: Complete::Directories,
        },
        cmdline::HELP,
        cmdline::VERSION,
    ],
    man_description: MAN_DESCRIPTION,
    man_tail: MAN_TAIL,
};

/// The man page's DESCRIPTION.
const MAN_DESCRIPTION: &str = r#"IBIs (Internet Based Identifiers) are the persistent identifiers of the URLib platform.
A resolver (see
.BR ibi-resolver (1))
turns a persistent URL into the URL that the Archive holding the item hands out, by
asking every Archive it knows over HTTP GET.
.B ibi-archive
is what answers inside an Archive.
.PP
Run by a web server as a CGI program (the environment variable
.B GATEWAY_INTERFACE
set), it answers the resolver for the Archive at
.BR $IBI_ARCHIVE_ROOT :
the Archive service at
.RI / archiveserviceibi ,
the file lists below it, and the items' files at
.RI /col/ rep /doc/ file ,
which it opens itself without following any symbolic link and serves only under the
Archive's rule (a regular file with a single link inside the item's
.IR doc/ ,
never a tombstone's, a restricted item's only to clients inside
.RB [ access ]. networks ).
The Debian package installs the web servers' configurations for it (see
.BR FILES ).
.PP
From a shell it is the administrator's tool. An Archive is a directory (its
.IR root )
holding
.I archive.toml
(its configuration),
.I col/
(one directory per item, named after its uniform repository name, with its
.I item.toml
and its files under
.IR doc/ )
and
.I var/
(the service's own writable state). Every command takes
.BR \-\-help " (or " \-h ).
The Archive root is
.BR \-\-root ,
else the environment variable
.BR IBI_ARCHIVE_ROOT ,
else the current directory.
"#;

/// The man page's sections after OPTIONS.
const MAN_TAIL: &str = r#".SH ENVIRONMENT
.TP
.B IBI_ARCHIVE_ROOT
the Archive root, when
.B \-\-root
is not given; the web servers' configurations pass it to the CGI program.
.TP
.B GATEWAY_INTERFACE
set by a web server: the program answers one CGI request instead of reading a command.
.SH FILES
.TP
.I /var/lib/ibi-archive
the default Archive root of the Debian package, made empty (root, mode 755) when the
package is installed and never removed while it holds anything, not even on purge. Create
the Archive in it with
.BR "ibi-archive init \-\-root /var/lib/ibi-archive \-\-address" " HOST[:PORT]" .
.TP
.I /var/lib/ibi-archive/archive.toml
the Archive's configuration; it may hold the registration keys: owner root, group
www-data, mode 640.
.TP
.I /var/lib/ibi-archive/var/
the service's writable state (access log, urlkey secret): owned by www-data, mode 700.
.TP
.I /etc/apache2/conf-available/ibi-archive.conf
the Apache configuration: set
.B IBI_ARCHIVE_SERVICE_IBI
in it (the
.B archiveserviceibi
of archive.toml), then
.BR "a2enmod cgid alias env" ,
.BR "a2enconf ibi-archive" .
While it is not set, an enabled configuration makes
.B apache2ctl configtest
fail, saying so.
.TP
.I /etc/lighttpd/conf-available/50-ibi-archive.conf
the lighttpd configuration: set
.B var.ibi_archive_service_ibi
in it, then
.BR "lighty-enable-mod ibi-archive" .
.TP
.I /usr/share/ibi-archive/
the routes the two files above include (cgi-bin/ of the source, unchanged).
.TP
.I /usr/share/doc/ibi-archive/
the documentation: README.md (what it is, and where to read on), the administrator's
guide (administrators-guide.md: the Archive on disk, the commands, deploying, joining
resolvers, and running it for years: TLS, logs, backup and restore, moving, upgrading,
removing and purging), the resolver operator's guide (resolver-guide.md), the protocol
reference (protocol.md) and the layout of the code (code.md).
.TP
.I /usr/share/doc/ibi-archive/examples/
Apache in front of the resolver, and the https sites of the Archive
.RI ( apache2-ibi-archive-tls.conf )
and of the resolver.
.TP
.I /usr/lib/systemd/system/ibi-archive-inclusion.service
includes the Archive served by Apache in the resolvers of its
.B [registration]
while Apache runs
.RB ( "ibi-archive include" " when apache2 starts, " "ibi-archive exclude"
before it stops: WantedBy, After and PartOf apache2.service), once enabled with
.BR "systemctl enable \-\-now ibi-archive-inclusion" .
It is installed, neither enabled nor started.
.TP
.I /etc/default/ibi-archive-inclusion
read by that unit if it exists:
.BI IBI_ARCHIVE_ROOT= DIR
names another Archive root than /var/lib/ibi-archive.
.SH EXIT STATUS
0 done, 1 failed, 2 bad arguments (one line on standard error that shows the expected
form).
.SH EXAMPLES
An Archive served by Apache on this host, as root:
.PP
.nf
.RS
ibi-archive init \-\-root /var/lib/ibi-archive \-\-address archive.example.org \-\-email admin@example.org
chown root:www-data /var/lib/ibi-archive/archive.toml
chmod 640 /var/lib/ibi-archive/archive.toml
chown \-R www-data: /var/lib/ibi-archive/var
editor /etc/apache2/conf-available/ibi-archive.conf
a2enmod cgid alias env && a2enconf ibi-archive
apache2ctl configtest && apache2ctl graceful
ibi-archive new \-\-root /var/lib/ibi-archive \-\-title "A report" report.pdf
.RE
.fi
.SH SEE ALSO
.BR ibi-resolver (1),
.BR a2enconf (8),
.BR apache2ctl (8),
.BR lighty-enable-mod (8)
"#;

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
