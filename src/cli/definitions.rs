//! The command line of `ibi-archive`, defined once: its commands and flags, from which
//! come `--help`, the hints of a usage error, the man page (debian/ibi-archive.1) and
//! the bash completion (debian/bash-completion/ibi-archive); see the `cmdline` crate.

use cmdline::{Command, Complete, Flag, Program};

use super::{check, delete, ibi, init, new, prefixes, query, register, serve, stats, Run};

/// The commands that read or write an Archive: they take --root.
const ON_AN_ARCHIVE: &[&str] = &[
    "init", "new", "check", "delete", "prefixes", "include", "exclude", "stats", "query",
    "describe", "serve",
];

/// A flag of `takers`, its value (`None` for a switch), and what it does.
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

/// What `include` and `exclude` do, said once for both.
const REGISTRATION: &[&str] = &[
    r#"Sends each resolver of archive.toml's `[registration]` (its
`[[registration.resolver]]` tables, or the list `resolvers`, or the one `resolver`; the
--resolver URLs instead when given) the inclusion (`include`) or exclusion (`exclude`)
request of Table 7.2 of the resolution standard, with the values of `[registration]`
(`adminemail`, `ip`, `platformversion`) and the registration key of that resolver: the
`key` of its `[[registration.resolver]]` table, else the `key` of `[registration]` (a
--resolver URL without a table of its own takes that one, or is refused when each
resolver has its own key). Each key is checked (rule chave of Table 7.1) before
anything is sent, and never printed.

Prints the status pairs each resolver answers; with several resolvers, each line after
the resolver's URL and `: `, and a failure of one (said on standard error) does not keep
the others from being asked. Exit status 0 only when every resolver answers
`status.archive included` (include) or `excluded` (exclude).

`include` warns on standard error for each resolver whose URL is `http://` to a host
that is not loopback: its key crosses the network in clear, and whoever reads it can
include the Archive at another address there. This build speaks no https: reach such a
resolver through a TLS tunnel (the administrator's guide, "Joining resolvers").

A resolver that answers 429 (too many requests from the Archive's network: it checks
them in turn) or 503 (its registry out of reach) with Retry-After is asked again after
the seconds it asks for (60 at most), one line on standard error each time, 5 times in
all; then the command gives up on it, saying why.

`ibi-archive serve` sends the same requests by itself, when it starts and when it
stops.
"#,
];

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
            doc: &[r"Creates an Archive in *R* (made if missing; one that already holds archive.toml,
col/ or var/ is refused): a commented archive.toml (mode 600), col/ with the Archive
service item, minted as `ibi-archive new` mints, and var/ (mode 700) with the minting
state, so that `new` never mints the service item's date again. Prints the pairs `rep`
and `ibip` of the service item, then the next steps on standard error.

With --email, archive.toml has a `[registration]` for joining the resolvers: each one
of --resolver, in that order, in a `[[registration.resolver]]` table of its own (`url`
and `key`) with a new registration key of its own.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: init::run,
        },
        Command {
            name: "new",
            synopsis: "new [--root R] [OPTIONS] FILE...",
            about: "mint an IBI and create an item",
            doc: &[r"Mints an IBI with the temporal distributor (`[minting]` of archive.toml, its state
in var/minting.state) and stores the *FILE*s (a directory is copied whole, under its
name) as the new item's doc/. Prints the pairs `rep` and `ibip`.
"],
            subcommands: &[],
            operands: Complete::Files,
            run: new::run,
        },
        Command {
            name: "check",
            synopsis: "check [--root R] [--web-user USER] [--fix]",
            about: "validate the whole Archive",
            doc: &[r#"Validates the whole Archive: archive.toml (every setting, as the service, `new` and
`include`/`exclude` read it) and its service item, every directory and item under col/
(names, item.toml, ibip dates, target and format files, duplicate IBIs, Original and
Copy of one IBI, next-edition loops, symbolic links leading outside col/), and the files
of doc/ that are never served (links, hard links, pipes).

Prints one line per fault, `*PATH*: *FAULT*` (`*PATH*:*LINE*:*COLUMN*: *FAULT*` for a
TOML error), paths relative to the Archive root and control characters escaped, then
`checked *N* items: *K* faults`. Warnings, `*PATH*: warning: ...` lines counted in the
summary, say that archive.toml (which may hold the registration keys) or
var/urlkey.secret is readable by every local user.

var/, and what the service uses in it, must be usable by the web server's user
(--web-user): var/ writable and searchable, var/urlkey.secret readable,
var/acknowledgments.log, var/acknowledgments.synced and var/acknowledged/ writable; each
that is not is a fault, said with the `chown` to run.

Notes, `*PATH*: note: ...` lines counted in the summary too, are not faults: a next
edition, metadata or translation naming an IBI this Archive does not hold (item.toml
allows one held elsewhere: the resolver looks for it in the other Archives); a
persistent URL in a metadata item's record (its `dc:identifier`) that names a resolver
`[registration]` does not name (an Archive made before its resolver took the
standard's, urlib.net), which --fix rewrites to name the first resolver of
`[registration]`, in the record and in its page (metadata.html); and, when archive.toml
does not load, which checks depending on it were skipped.

Exit status 1 when there are faults (warnings and notes alone exit 0). Shows its
progress on standard error when that is a terminal. Writes var/oai-records, the index
of the OAI-PMH data provider's records, from its walk, and var/oai-records.stamp, what
col/ was (when var/ exists); the data provider builds them itself when they are missing
or col/ has changed since.
"#],
            subcommands: &[],
            operands: Complete::Nothing,
            run: check::run,
        },
        Command {
            name: "delete",
            synopsis: "delete [--root R] [--keep-content] [--reason TEXT] IBI",
            about: "make an item a tombstone",
            doc: &[r"Turns the item *IBI* into a tombstone: state Deleted, timestamp now, its doc/ removed
(kept with --keep-content), and the *TEXT* of --reason, when given, as its reason
(item.toml's `reason`), which its landing page shows. The service then answers state
Deleted and the timestamp. Refuses an unknown item, an item already Deleted and the
Archive service item.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: delete::run,
        },
        Command {
            name: "prefixes",
            synopsis: "prefixes [--root R]",
            about: "remember col/'s prefixes for IBIp lookups",
            doc: &[r"Lists the Archive's prefixes, `*SUBDOMAIN*/*WORD*[.*PORT*]` one a line, and writes
them to var/col-prefixes with the inode and change time of each directory they were
read from. The service then finds an IBIp without listing col/ and its subdomains, as
long as those directories are unchanged (the service never writes the file: run this
command again after adding a prefix). When a directory changed less than two seconds
ago, it waits for it to settle (up to 10 s). Exit status 1 when the file cannot be
written.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: prefixes::run,
        },
        Command {
            name: "include",
            synopsis: "include [--root R] [--resolver URL]...",
            about: "join the resolvers",
            doc: REGISTRATION,
            subcommands: &[],
            operands: Complete::Nothing,
            run: register::include,
        },
        Command {
            name: "exclude",
            synopsis: "exclude [--root R] [--resolver URL]...",
            about: "leave the resolvers",
            doc: REGISTRATION,
            subcommands: &[],
            operands: Complete::Nothing,
            run: register::exclude,
        },
        Command {
            name: "stats",
            synopsis: "stats [--root R] [--csv] [--item IBI]",
            about: "access counts",
            doc: &[r"Counts the accesses recorded in var/acknowledgments.log, one line per
acknowledgment the service counted (the resolver acknowledging a URL it handed out,
with a urlkey it issued, once per key), per item and per month (UTC), in an aligned
table. Columns:

  item    the item's rep as stored here (the log may name another form of its IBI;
          an item no longer here keeps the name the log gives);
          `*` adds up every item;
          `-` counts log lines that name no item (an earlier version of the service
          wrote them for acknowledgments whose item it could not tell)
  month   YYYY-MM, or `total` for every month
  count   the accesses

Rows: for each item, one per month with accesses, then its total; then those of item
`*`. The table starts with a line saying what it counts and, when there is a row `-`,
ends with a line saying what that is.

The log is first synced to disk when the service wrote lines no sync covers yet
(archive.toml's `[acknowledgments] sync_interval` lets them wait for a sync, 1 second
unless set). Lines of the log that cannot be read are counted and reported on standard
error. Fails (exit status 1) outside an Archive: without an archive.toml that loads in
the root.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: stats::run,
        },
        Command {
            name: "query",
            synopsis: "query [--root R] QUERYSTRING",
            about: "the body the service would send",
            doc: &[r"Prints the body the Archive service would send for *QUERYSTRING* (what follows `?`
in the request), byte for byte; on a terminal a final newline is added. For example:

  ibi-archive query 'servicesubject=urlRequest&parsedibiurl.ibi=8JMKD3MGP8W/35MME4E'

The service's log lines go to standard error. Exit status 1 when the service would
answer another status than 200.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: query::query,
        },
        Command {
            name: "describe",
            synopsis: "describe [--root R] IBI",
            about: "every property of an item",
            doc: &[r"Prints every property of the item *IBI* (either form), for every relation the Archive
offers, as one pair list (the unfiltered answer of the service). Exit status 1 when the
item is not in the Archive.
"],
            subcommands: &[],
            operands: Complete::Nothing,
            run: query::describe,
        },
        Command {
            name: "serve",
            synopsis: "serve [--root R] [--listen [ADDRESS:]PORT] [--no-inclusion] [LIMITS]",
            about: "an embedded web server",
            doc: &[r#"Serves the Archive's routes with no web server: the service at /*archiveserviceibi*,
the file lists below it, and the items' files at /col/*rep*/doc/*file* (a restricted
item's only to clients inside `[access].networks`, by the address of the connection).
*LIMITS* are --max-connections, --max-per-client, --head-timeout, --idle-timeout and
--write-timeout; request heads are limited to 16 KiB. One line per request on standard
error.

When archive.toml has `[registration]`, the Archive is included in each of its
resolvers once `serve` listens (the request of `ibi-archive include`, each resolver sent
its own key), and excluded from each when it is stopped by SIGTERM, SIGINT or SIGHUP,
before it exits (5 seconds at most, so that a resolver that does not answer never holds
the stop); its registration is kept. A failed inclusion is one line on standard error
(never the key) and is tried again 1, 2, 4... seconds later, at most 5 minutes apart,
while `serve` goes on serving; after an answer 429 or 503 with Retry-After, after the
time the resolver asks (60 seconds at most). --no-inclusion sends neither request.

An acknowledgment counted is in var/acknowledgments.log before it is answered, and is
synced to disk within archive.toml's `[acknowledgments] sync_interval` (1 second unless
set; "0" syncs each line before its answer): by the acknowledgments that follow, or,
when none comes, by a thread of `serve`'s own, which syncs the log once more when it
stops.
"#],
            subcommands: &[],
            operands: Complete::Nothing,
            run: serve::run,
        },
        Command {
            name: "ibi",
            synopsis: "ibi IBI\nibi mint --host H [--port P] [--ip IP [--ibip-port P]] --date T|now",
            about: "read an IBI of either form, or mint one",
            doc: &[
                r"Reads *IBI*, a uniform repository name (sid.inpe.br/mtc-m18/2009/02.16.17.46) or an
IBIp (8JMKD3MGP8W/34PGRBS), and prints the pairs `form` (`rep` or `ibip`), `prefix`,
`suffix`, `date` (ISO 8601, UTC), and `host` and `port` (rep) or `ip` and `port` (IBIp).
",
                r"`mint` prints the pair `rep` (Algorithms 1-3 of the generation standard) of --host
*H* (a fully qualified host name) and --port *P* (default 80, which a rep leaves out)
for the date *T* of --date and, with --ip, the pair `ibip` (Algorithms 5-7) of *IP* and
--ibip-port (default 800, which an IBIp leaves out: the port of the label generator,
not of the web server) for *T*. These are the defaults and the rule of `[minting]`
`port` and `ibipport` in archive.toml, so that `ibi-archive new` mints the same IBIs
for the same settings. *T* is ISO 8601 in UTC (2009-02-16T17:46:00Z,
2009-02-16T17:46Z, fractions allowed), POSIX seconds (1234806360) or `now` (this
second). Nothing is waited for or recorded: `ibi-archive new` mints for items.
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
            doc: &[r"Prints what the program does and its commands, or, given a *COMMAND*, that command's
usage (the same as `ibi-archive *COMMAND* --help`).
"],
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
(`archiveaddress`): every URL handed out starts with http://*HOST*[:*PORT*]; *PORT* is
also the port of the reps.",
            )
        },
        documented(
            &["host"],
            Some("FQDN"),
            &["init"],
            r"the fully qualified host name the reps are made of [the *HOST* of --address, which
must then be one].",
        ),
        documented(
            &["ip"],
            Some("IP"),
            &["init"],
            "the IP address coded in the IBIps [*HOST* resolved].",
        ),
        documented(
            &["baseurl"],
            Some("URL"),
            &["init"],
            r"where col/ and the service are reached, when not http://*HOST*[:*PORT*] (https, a
path prefix).",
        ),
        Flag {
            complete: Complete::Words("60 1 0.1 0.01 0.001"),
            ..documented(
                &["granularity"],
                Some("G"),
                &["init"],
                "seconds between two minted IBIs: 60, 1, 0.1, ... [1].",
            )
        },
        documented(
            &["email"],
            Some("E"),
            &["init"],
            r"the administrator's e-mail address: writes `[registration]` with a new registration
key for each resolver, for joining them (archive.toml is made mode 600 either way).",
        ),
        documented(
            &["resolver"],
            Some("URL"),
            &["init"],
            r"with --email: a resolver to join, by its service URL (what `ibi-resolver init` prints
as `serviceurl`); repeated for several, asked in that order
[http://urlib.net/J8LNKB5R7W/3FUQHC5].",
        ),
        documented(
            &["web-user"],
            Some("USER"),
            &["init"],
            r"the web server's user, which runs the service: run as root, the var/ made is given
to *USER*, where this machine has one [www-data].",
        ),
        // check
        documented(
            &["web-user"],
            Some("USER"),
            &["check"],
            r"the web server's user, which runs the service and must be able to use var/
[www-data]; one this machine does not have is said in a note, and var/ is not judged.",
        ),
        documented(
            &["fix"],
            None,
            &["check"],
            r"rewrite the persistent URLs of metadata items that name a resolver `[registration]`
does not name, to name its first resolver (each rewrite is a note).",
        ),
        // new
        Flag {
            complete: Complete::Files,
            ..documented(
                &["target"],
                Some("FILE"),
                &["new"],
                "the item's default file [the only file, else index.html].",
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
            r"the item translates *IBI* (--language required): *IBI*, when stored here, gets the
new item in its `[translations]`, under the new item's language, and the new item gets
the link back.",
        ),
        documented(
            &["edition-of"],
            Some("IBI"),
            &["new"],
            r"the item is the next edition of *IBI*: *IBI*, when stored here, gets `nextedition` =
the new item.",
        ),
        documented(
            &["restricted"],
            None,
            &["new"],
            "clients outside `[access].networks` get the metadata instead of the data.",
        ),
        documented(
            &["copy"],
            None,
            &["new"],
            r"store a Copy of an item identified elsewhere, under its IBI, instead of minting one:
the IBI given with --ibi *REP* and, when it has one, a second --ibi *IBIP*.",
        ),
        documented(
            &["ibi"],
            Some("REP|IBIP"),
            &["new"],
            "(with --copy only) the IBI of the item the Copy is of: one rep and at most one IBIp.",
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
oai_dc.xml and metadata.html) to which the new item's `metadata` points; it is printed
as `metadata.rep` and `metadata.ibip`.",
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
        documented(
            &["web-user"],
            Some("USER"),
            &["new"],
            r"the web server's user, which runs the service: run as root where there is no var/,
var/ is made for *USER*, where this machine has one [www-data].",
        ),
        // delete
        documented(
            &["keep-content"],
            None,
            &["delete"],
            "keep the item's doc/ instead of removing it.",
        ),
        documented(
            &["reason"],
            Some("TEXT"),
            &["delete"],
            r"why the item was removed, which its landing page shows: not empty, at most 500
bytes.",
        ),
        // include and exclude
        documented(
            &["resolver"],
            Some("URL"),
            &["include", "exclude"],
            r"a resolver to ask, by its service URL, instead of those of `[registration]`;
repeated for several.",
        ),
        // stats
        documented(
            &["csv"],
            None,
            &["stats"],
            r"print the rows alone, after the header `item,month,count` (an item holding a comma
or a quote is quoted).",
        ),
        documented(
            &["item"],
            Some("IBI"),
            &["stats"],
            "count the item *IBI* only (either form of its IBI).",
        ),
        // serve
        documented(
            &["listen"],
            Some("[ADDRESS:]PORT"),
            &["serve"],
            r"where to listen: *ADDRESS*:*PORT* (127.0.0.1:8080, [::1]:8080, 0.0.0.0:80) or a
*PORT* alone, on 127.0.0.1 [127.0.0.1:8080].",
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
            r"connections open at once [256, fewer when descriptors are few: 136 each].",
        ),
        documented(
            &["max-per-client"],
            Some("N"),
            &["serve"],
            "connections open at once from one address [16].",
        ),
        documented(
            &["head-timeout"],
            Some("SECS"),
            &["serve"],
            "time to send a request head [10].",
        ),
        documented(
            &["idle-timeout"],
            Some("SECS"),
            &["serve"],
            "time a connection may wait between requests [5].",
        ),
        documented(
            &["write-timeout"],
            Some("SECS"),
            &["serve"],
            "time a write may make no progress [30].",
        ),
        // ibi mint
        documented(
            &["host"],
            Some("H"),
            &["ibi mint"],
            "the fully qualified host name of the rep.",
        ),
        documented(
            &["port"],
            Some("P"),
            &["ibi mint"],
            "the port of the rep [80].",
        ),
        documented(
            &["ip"],
            Some("IP"),
            &["ibi mint"],
            "the IP address of the IBIp.",
        ),
        documented(
            &["ibip-port"],
            Some("P"),
            &["ibi mint"],
            "with --ip: the port of the IBIp [800].",
        ),
        Flag {
            complete: Complete::Words("now"),
            ..documented(
                &["date"],
                Some("T|now"),
                &["ibi mint"],
                "the date: ISO 8601 in UTC, POSIX seconds, or `now`.",
            )
        },
        // The program's, and most commands'.
        Flag {
            names: &["root"],
            short: None,
            value: Some("R"),
            doc: r"the Archive root, for every command that reads or writes an Archive
[`$IBI_ARCHIVE_ROOT`, else the current directory].",
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
    fn every_flag_says_what_it_does() {
        assert_eq!(cmdline::undocumented(&super::PROGRAM), Vec::<String>::new());
    }

    #[test]
    fn each_help_lists_every_flag_of_its_command() {
        assert_eq!(
            cmdline::help_omissions(&super::PROGRAM),
            Vec::<String>::new()
        );
        let mint = cmdline::command_help(&super::PROGRAM, "ibi mint").unwrap();
        assert!(
            mint.starts_with("usage: ibi-archive ibi mint --host H "),
            "{mint}"
        );
        assert!(!mint.contains("Reads IBI"), "{mint}");
    }

    /// `new`'s Dublin Core flags are the elements `new` reads (all but `language`, which
    /// is the flag of the content's language), in their order.
    #[test]
    fn the_dublin_core_flags_of_new_are_the_elements_but_language() {
        let flag = super::PROGRAM
            .flags
            .iter()
            .find(|f| f.names.contains(&"title"))
            .unwrap();
        let elements: Vec<&str> = ::ibi::dc::DC_ELEMENTS
            .into_iter()
            .filter(|e| *e != "language")
            .collect();
        assert_eq!(flag.names, elements);
    }
}
