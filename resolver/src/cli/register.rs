//! `ibi-resolver register` and `unregister`: an Archive added to the registry, with its
//! administrator's e-mail and registration key, or removed from it.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{CliError, CliResult};

/// What `register` was given.
struct Registration {
    config: PathBuf,
    ibi: String,
    email: String,
    key_file: Option<PathBuf>,
}

pub fn run(parser: &mut lexopt::Parser, config: PathBuf) -> CliResult {
    let Some(r) = parse(parser, config)? else {
        return Ok(());
    };
    let ibi = super::parse_ibi(&r.ibi)?;
    let key = read_key(r.key_file.as_deref())?;
    let config = super::load(&r.config)?;
    super::open(&config)?
        .register(&ibi, &r.email, &key)
        .map_err(|e| CliError::failed(e.to_string()))?;
    super::print_text(&format!("registered {}\n", ibi.key()))
}

/// The command line of `register`; `None` once --help is answered.
fn parse(
    parser: &mut lexopt::Parser,
    mut config: PathBuf,
) -> Result<Option<Registration>, CliError> {
    use lexopt::prelude::*;
    let (mut ibi, mut email, mut key_file) = (None, None, None);
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("register").map(|()| None),
            Long("config") => config = parser.value()?.into(),
            Long("email") => email = Some(parser.value()?.string()?),
            Long("key-file") => key_file = Some(parser.value()?.into()),
            Value(v) if ibi.is_none() => ibi = Some(v.string()?),
            other => return Err(CliError::unexpected(&super::PROGRAM, "register", other)),
        }
    }
    let ibi = ibi.ok_or_else(|| CliError::missing(&super::PROGRAM, "register", "SERVICEIBI"))?;
    let email = email.ok_or_else(|| CliError::missing(&super::PROGRAM, "register", "--email E"))?;
    if !email.contains('@')
        || email.len() > 254
        || email.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(CliError::usage(format!(
            "register: {email:?} is not an e-mail address"
        )));
    }
    Ok(Some(Registration {
        config,
        ibi,
        email,
        key_file,
    }))
}

/// The registration key, from a file or the first line of standard input (never from
/// the command line, where other users could read it).
fn read_key(file: Option<&Path>) -> Result<String, CliError> {
    let mut text = String::new();
    match file {
        Some(f) => {
            text = std::fs::read_to_string(f)
                .map_err(|e| CliError::failed(format!("{}: {e}", f.display())))?;
        }
        None => {
            std::io::stdin()
                .take(4096)
                .read_to_string(&mut text)
                .map_err(|e| {
                    CliError::failed(format!("cannot read the key from standard input: {e}"))
                })?;
        }
    }
    let key = text.lines().next().unwrap_or("").trim().to_string();
    if ibi::registration::Key::parse(&key).is_err() {
        return Err(CliError::usage(
            "the registration key must be ten or more digits, optionally '-' and ten or more again (Table 7.1)",
        ));
    }
    Ok(key)
}

/// `ibi-resolver unregister SERVICEIBI`.
pub fn unregister(parser: &mut lexopt::Parser, config: PathBuf) -> CliResult {
    let Some((config, operands)) = super::config_and_operands(parser, "unregister", config, 1)?
    else {
        return Ok(());
    };
    let ibi = super::parse_ibi(&super::one("unregister", operands, "SERVICEIBI")?)?;
    let config = super::load(&config)?;
    if super::open(&config)?
        .unregister(&ibi)
        .map_err(|e| CliError::failed(e.to_string()))?
    {
        super::print_text(&format!("unregistered {}\n", ibi.key()))
    } else {
        Err(CliError::failed(format!("{} is not registered", ibi.key())))
    }
}
