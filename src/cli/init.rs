//! `ibi-archive init`: creates an Archive (see `ibi_archive::admin::init`) and says what to
//! do next.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use ::ibi::pairs::PairList;
use ibi_archive::admin::init::{init, InitRequest, Initialized};
use ibi_archive::admin::registration::check_resolver;
use ibi_archive::minting::distributor::Granularity;

use super::{root_flag, CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short};
    let mut root: Option<PathBuf> = None;
    let mut address: Option<String> = None;
    let mut req = InitRequest {
        address: String::new(),
        host: None,
        ip: None,
        baseurl: None,
        granularity: Granularity::SECOND,
        email: None,
        resolvers: Vec::new(),
        web_user: None,
    };
    let text = |parser: &mut lexopt::Parser, flag: &str| -> Result<String, CliError> {
        parser
            .value()?
            .into_string()
            .map_err(|v| CliError::usage(format!("init: {flag} {v:?} is not UTF-8 text")))
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("init"),
            Long("root") => root = Some(parser.value()?.into()),
            Long("address") => address = Some(text(parser, "--address")?),
            Long("host") => req.host = Some(text(parser, "--host")?),
            Long("ip") => {
                let v = text(parser, "--ip")?;
                req.ip = Some(v.parse::<IpAddr>().map_err(|_| {
                    CliError::usage(format!(
                        "init: --ip {v:?}: expected an IPv4 or IPv6 address, such as 150.163.34.239"
                    ))
                })?);
            }
            Long("baseurl") => req.baseurl = Some(text(parser, "--baseurl")?),
            Long("granularity") => {
                let v = text(parser, "--granularity")?;
                req.granularity = Granularity::parse(&v)
                    .map_err(|e| CliError::usage(format!("init: --granularity: {e}")))?;
            }
            Long("email") => req.email = Some(text(parser, "--email")?),
            Long("web-user") => req.web_user = Some(text(parser, "--web-user")?),
            Long("resolver") => {
                let v = text(parser, "--resolver")?;
                check_resolver(&v).map_err(|e| CliError::usage(format!("init: --{e}")))?;
                req.resolvers.push(v);
            }
            other => return Err(CliError::unexpected(&super::PROGRAM, "init", other)),
        }
    }
    req.address = address.ok_or_else(|| CliError::missing(&super::PROGRAM, "init", "--address"))?;
    if !req.resolvers.is_empty() && req.email.is_none() {
        return Err(CliError::usage(
            "init: --resolver needs --email: the resolvers are joined through [registration], which --email writes",
        ));
    }
    let root = root_flag(root);
    let done = init(&root, &req, &::ibi::time::SystemClock)
        .map_err(|e| CliError::failed(format!("init: {e}")))?;
    for note in &done.notes {
        super::say(&format!("note: {note}"));
    }
    let mut pairs = PairList::new();
    pairs.push_word("rep", done.service.as_str());
    if let Some(p) = &done.ibip {
        pairs.push_word("ibip", p.as_str());
    }
    super::print_text(&format!("{}\n", pairs.to_lines()))?;
    eprint!("{}", next_steps(&root, &done));
    Ok(())
}

/// What the administrator does next, with this Archive's own values.
fn next_steps(root: &Path, done: &Initialized) -> String {
    let abs = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let r = ::ibi::logline::clean(&abs.to_string_lossy()).into_owned();
    let service = done.service.as_str();
    let address = &done.config.archiveaddress;
    let join = if done.registration {
        format!(
            "  4. Join the resolvers: send each one's operator the service IBI {service}\n\
             \x20    and the key of its own [[registration.resolver]] table in {r}/archive.toml,\n\
             \x20    then run: ibi-archive include --root {r}\n"
        )
    } else {
        format!(
            "  4. Join a resolver: fill in [registration] of {r}/archive.toml (it is commented\n\
             \x20    out; a key of its own for each resolver), send the resolver's operator the\n\
             \x20    service IBI {service} and its key, then run: ibi-archive include --root {r}\n"
        )
    };
    format!(
        "ibi-archive: created the Archive {r}, served at {baseurl}/{service}\n\
         Next steps:\n\
         \x20 1. Let the web server's user (www-data on Debian) read archive.toml and own var/,\n\
         \x20    and nobody else; the commands below, like new and delete, then run as root:\n\
         \x20      chown root:www-data {r}/archive.toml && chmod 640 {r}/archive.toml\n\
         \x20      chown -R www-data: {r}/var\n\
         \x20 2. Serve it. With the Debian package, in /etc/apache2/conf-available/ibi-archive.conf set\n\
         \x20      Define IBI_ARCHIVE_SERVICE_IBI {service}\n\
         \x20      Define IBI_ARCHIVE_ROOT {r}\n\
         \x20    then run\n\
         \x20      a2enmod cgid alias env && a2enconf ibi-archive\n\
         \x20      apache2ctl configtest && apache2ctl graceful\n\
         \x20    and make Apache listen on the port of {address}. lighttpd, or a\n\
         \x20    build from the source: the administrator's guide\n\
         \x20    (/usr/share/doc/ibi-archive/administrators-guide.md),\n\
         \x20    \"Deploying under Apache or lighttpd\". Or try it at once with\n\
         \x20      ibi-archive serve --root {r} --listen {listen}\n\
         \x20 3. Add items: ibi-archive new --root {r} FILE...   and check: ibi-archive check --root {r}\n\
         {join}",
        baseurl = done.config.baseurl,
        listen = done.port,
    )
}
