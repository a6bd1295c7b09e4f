//! `ibi-resolver init`: the beginning of a resolver — its service IBI minted from its
//! public URL, its settings written or completed, its registry created (see
//! [`ibi_resolver::setup`]).

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use ibi::pairs::PairList;
use ibi_resolver::config::{self, Config, PublicUrl};
use ibi_resolver::setup::{self, Created, SetError};
use ibi_resolver::store::Database;

use super::{CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser, mut config: PathBuf) -> CliResult {
    use lexopt::prelude::*;
    let mut publicurl = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("init"),
            Long("config") => config = parser.value()?.into(),
            Long("publicurl") => publicurl = Some(parser.value()?.string()?),
            other => return Err(CliError::unexpected(&super::PROGRAM, "init", other)),
        }
    }
    let publicurl =
        publicurl.ok_or_else(|| CliError::missing(&super::PROGRAM, "init", "--publicurl URL"))?;
    let url = PublicUrl::parse(&publicurl).map_err(|e| CliError::usage(format!("init: {e}")))?;
    let serviceibi = setup::mint_serviceibi(&url, ibi::time::SystemClock::now())
        .map_err(|e| CliError::usage(format!("init: {e}")))?;
    let shown = config.display().to_string();
    let failed = |e: std::io::Error| CliError::failed(format!("{shown}: {e}"));

    // The settings, made before anything is written, and checked as every command reads
    // them.
    let (dir, name) = ibi::dirfd::open_parent(&config).map_err(|e| {
        CliError::failed(format!(
            "{shown}: cannot open its directory: {e} (create it, or name another file with --config FILE)"
        ))
    })?;
    let found = setup::read_at(dir.as_fd(), name).map_err(failed)?;
    let text = match &found {
        None => setup::template(serviceibi.as_str(), &url.plain),
        Some(found) => setup::set_identity(&found.text, serviceibi.as_str(), &url.plain)
            .map_err(|e| match e {
                SetError::AlreadySet(keys) => CliError::failed(format!(
                    "{shown} sets {} already: this resolver is initialised (its serviceibi is how Archives know it; edit the file to change it)",
                    keys.join(" and ")
                )),
                SetError::NotToml(e) => CliError::failed(format!("{shown}: {e}")),
            })?,
    };
    let settings = Config::parse(&text, config.parent().unwrap_or(Path::new(".")))
        .map_err(|e| CliError::failed(format!("{shown}: {e}")))?;

    // The registry first: a settings file written is the mark of an initialised resolver.
    let created = setup::create_registry(&settings.database).map_err(CliError::failed)?;
    match &found {
        None => ibi::atomic::create_exact_at(dir.as_fd(), name, text.as_bytes(), 0o640),
        Some(found) => {
            ibi::atomic::replace_like_at(dir.as_fd(), name, text.as_bytes(), &found.stat)
        }
    }
    .map_err(|e| CliError::failed(format!("{shown}: cannot write: {e}")))?;

    let serviceurl = format!("{}/{}", url.plain, serviceibi.as_str());
    let mut pairs = PairList::new();
    pairs.push_word("publicurl", url.plain.as_str());
    pairs.push_word("serviceibi", serviceibi.as_str());
    pairs.push_word("serviceurl", serviceurl.as_str());
    super::print_text(&format!("{}\n", pairs.to_lines()))?;
    eprint!(
        "{}",
        next_steps(
            &config,
            found.is_some(),
            &settings.database,
            &created,
            &serviceurl
        )
    );
    Ok(())
}

/// What `init` says on stderr once done: what it wrote, and what to do next.
fn next_steps(
    config: &Path,
    completed: bool,
    database: &Database,
    created: &Created,
    serviceurl: &str,
) -> String {
    let with_config = if config == Path::new(config::DEFAULT_PATH) {
        String::new()
    } else {
        format!(" --config {}", config.display())
    };
    let settings = if completed {
        format!("set serviceibi and publicurl in {}", config.display())
    } else {
        format!("wrote {}", config.display())
    };
    let registry = match created {
        Created::New => format!("created the registry {database}"),
        Created::GivenTo(uid, _) => format!(
            "created the registry {database} (owner: user {uid}, the owner of its directory)"
        ),
        Created::Kept => format!("kept the registry {database}, there already"),
        Created::InPostgres => format!("brought the registry's schema in {database} up to date"),
    };
    // The package's registry is the ibi-resolver user's: its commands run as that user.
    let as_owner = match created {
        Created::GivenTo(..) if config == Path::new(config::DEFAULT_PATH) => {
            "runuser -u ibi-resolver -- "
        }
        _ => "",
    };
    format!(
        "ibi-resolver: {settings}; {registry}.
Next steps:
  1. Register each Archive with its service IBI and the registration key its
     administrator sends you (a key for this resolver alone):
       echo KEY | {as_owner}ibi-resolver register SERVICEIBI --email E{with_config}
  2. Start the resolver: ibi-resolver serve{with_config}
     (installed from the Debian package: systemctl enable --now ibi-resolver)
  3. Each Archive names this resolver, with that key, in its archive.toml,
       [[registration.resolver]]
       url = \"{serviceurl}\"
       key = \"KEY\"
     and joins it: ibi-archive include
"
    )
}
