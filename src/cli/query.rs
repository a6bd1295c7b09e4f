//! `ibi-archive query` and `ibi-archive describe`: the service's answers from a shell.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use ::ibi::time::SystemClock;
use ::ibi::Ibi;
use ibi_archive::archive::Archive;
use ibi_archive::cgi::{self, CgiRequest};
use ibi_archive::config::Config;

use super::{root_flag, CliError, CliResult};

/// `query [--root R] QUERYSTRING`: prints exactly the body the CGI would send.
pub fn query(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    let mut root: Option<PathBuf> = None;
    let mut qs: Option<std::ffi::OsString> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("query"),
            Long("root") => root = Some(parser.value()?.into()),
            Value(v) if qs.is_none() => qs = Some(v),
            other => return Err(CliError::unexpected(&super::PROGRAM, "query", other)),
        }
    }
    let qs = qs.ok_or_else(|| CliError::missing(&super::PROGRAM, "query", "QUERYSTRING"))?;
    let req = CgiRequest::get(root_flag(root), qs.as_encoded_bytes());
    let answer = cgi::handle(&req, SystemClock::now());
    for line in &answer.log {
        super::say(line);
    }
    let mut out = std::io::stdout().lock();
    // The body is the CGI's, byte for byte; a shell prompt should not follow it on
    // the same line.
    let newline = out.is_terminal() && !answer.body.ends_with(b"\n");
    out.write_all(&answer.body)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(e.to_string()))?;
    if answer.status == 200 {
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "status {} {}",
            answer.status,
            cgi::reason(answer.status)
        )))
    }
}

/// `describe [--root R] IBI`: the unfiltered list of properties (as Example 9.2).
pub fn describe(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    let mut root: Option<PathBuf> = None;
    let mut ibi: Option<String> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("describe"),
            Long("root") => root = Some(parser.value()?.into()),
            Value(v) if ibi.is_none() => {
                ibi = Some(
                    v.into_string()
                        .map_err(|v| CliError::usage(format!("describe: {v:?} is not text")))?,
                )
            }
            other => return Err(CliError::unexpected(&super::PROGRAM, "describe", other)),
        }
    }
    let text = ibi.ok_or_else(|| CliError::missing(&super::PROGRAM, "describe", "IBI"))?;
    let ibi = Ibi::parse(&text).map_err(|e| CliError::usage(format!("describe: {e}")))?;
    let root = root_flag(root);
    let config = Config::load(&root).map_err(|e| CliError::failed(e.to_string()))?;
    let archive = Archive::new(&root, config);
    let list = archive.url_list(&ibi, None, SystemClock::now());
    for line in &list.log {
        super::say(line);
    }
    if list.pairs.is_empty() {
        return Err(CliError::failed(format!(
            "{text}: no such item in {}",
            root.display()
        )));
    }
    println!("{}", list.pairs.to_lines());
    Ok(())
}
