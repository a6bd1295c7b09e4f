//! `ibi-archive query` and `ibi-archive describe`: the service's answers from a shell.

use std::io::Write;
use std::path::PathBuf;

use ibi_archive::cgi::{self, Request};
use ibi_archive::config::Config;
use ibi_archive::ibi::Ibi;
use ibi_archive::service::Archive;

use super::{root_flag, CliError, CliResult};

/// `query [--root R] QUERYSTRING`: prints exactly the body the CGI would send.
pub fn query(parser: &mut lexopt::Parser) -> CliResult {
    let mut root: Option<PathBuf> = None;
    let mut qs: Option<std::ffi::OsString> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            lexopt::Arg::Long("root") => root = Some(parser.value()?.into()),
            lexopt::Arg::Value(v) if qs.is_none() => qs = Some(v),
            other => {
                return Err(CliError::usage(format!(
                    "query: unexpected argument {}",
                    super::shown(other)
                )))
            }
        }
    }
    let qs = qs.ok_or_else(|| CliError::usage("query: no query string given"))?;
    let req = Request::get(root_flag(root), qs.as_encoded_bytes());
    let answer = cgi::handle(&req, chrono::Utc::now().timestamp());
    for line in &answer.log {
        super::say(line);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(&answer.body)
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(e.to_string()))?;
    if answer.status == 200 {
        Ok(())
    } else {
        Err(CliError {
            code: 1,
            message: format!("status {} {}", answer.status, cgi::reason(answer.status)),
        })
    }
}

/// `describe [--root R] IBI`: the unfiltered list of properties (as Example 9.2).
pub fn describe(parser: &mut lexopt::Parser) -> CliResult {
    let mut root: Option<PathBuf> = None;
    let mut ibi: Option<String> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            lexopt::Arg::Long("root") => root = Some(parser.value()?.into()),
            lexopt::Arg::Value(v) if ibi.is_none() => {
                ibi = Some(
                    v.into_string()
                        .map_err(|v| CliError::usage(format!("describe: {v:?} is not text")))?,
                )
            }
            other => {
                return Err(CliError::usage(format!(
                    "describe: unexpected argument {}",
                    super::shown(other)
                )))
            }
        }
    }
    let text = ibi.ok_or_else(|| CliError::usage("describe: no IBI given"))?;
    let ibi = Ibi::parse(&text).map_err(|e| CliError::usage(e.to_string()))?;
    let root = root_flag(root);
    let config = Config::load(&root).map_err(|e| CliError::failed(e.to_string()))?;
    let archive = Archive::new(&root, config);
    let list = archive.url_list(&ibi, None, chrono::Utc::now().timestamp());
    for line in archive.store().take_warnings() {
        super::say(&line);
    }
    if list.is_empty() {
        return Err(CliError::failed(format!(
            "{text}: no such item in {}",
            root.display()
        )));
    }
    println!("{list}");
    Ok(())
}
