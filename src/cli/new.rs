//! `ibi-archive new`: mints an IBI and stores a new item (see `ibi_archive::admin::new_item`).

use std::io::Write;
use std::path::PathBuf;

use ::ibi::dc::DC_ELEMENTS;
use ::ibi::pairs::PairList;
use ::ibi::relation::Lang;
use ::ibi::Ibi;
use ibi_archive::admin::new_item::{create, CopyOf, Created, NewItem};

use super::{root_flag, CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    let Some((root, req)) = parse(parser)? else {
        return super::print_help("new");
    };
    let created = create(&root_flag(root), &req, &::ibi::time::SystemClock)
        .map_err(|e| CliError::failed(format!("new: {e}")))?;
    for note in &created.notes {
        super::say(&format!("note: {note}"));
    }
    print_pairs(&created)
}

/// The command line: the root given, and what to create; `None` when help is asked for.
fn parse(parser: &mut lexopt::Parser) -> Result<Option<(Option<PathBuf>, NewItem)>, CliError> {
    use lexopt::Arg::{Long, Short, Value};
    let mut root: Option<PathBuf> = None;
    let mut req = NewItem::default();
    let mut copy = false;
    let mut ibis: Vec<Ibi> = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("root") => root = Some(parser.value()?.into()),
            Long("web-user") => req.web_user = Some(text(parser.value()?, "--web-user")?),
            Long("target") => req.target = Some(text(parser.value()?, "--target")?),
            Long("language") => {
                let v = text(parser.value()?, "--language")?;
                req.language = Some(
                    Lang::parse(&v)
                        .map_err(|e| CliError::usage(format!("new: --language: {e}")))?,
                );
            }
            Long("translation-of") => {
                req.translation_of = Some(ibi(
                    text(parser.value()?, "--translation-of")?,
                    "--translation-of",
                )?)
            }
            Long("edition-of") => {
                req.edition_of = Some(ibi(text(parser.value()?, "--edition-of")?, "--edition-of")?)
            }
            Long("restricted") => req.restricted = true,
            Long("copy") => copy = true,
            Long("ibi") => ibis.push(ibi(text(parser.value()?, "--ibi")?, "--ibi")?),
            Long("dc") => {
                let v = text(parser.value()?, "--dc")?;
                let (e, value) = v.split_once('=').ok_or_else(|| {
                    CliError::usage(format!("new: --dc {v:?} is not ELEMENT=VALUE"))
                })?;
                req.dc.push((e.to_ascii_lowercase(), value.to_string()));
            }
            Long(flag) if DC_ELEMENTS.contains(&flag) && flag != "language" => {
                let flag = flag.to_string();
                let v = text(parser.value()?, &format!("--{flag}"))?;
                req.dc.push((flag, v));
            }
            Value(v) => req.files.push(PathBuf::from(v)),
            other => return Err(CliError::unexpected(&super::PROGRAM, "new", other)),
        }
    }
    req.copy_of = copy_of(copy, ibis)?;
    check_complete(&req)?;
    Ok(Some((root, req)))
}

/// The value of `flag`, which must be UTF-8 text.
fn text(v: std::ffi::OsString, flag: &str) -> Result<String, CliError> {
    v.into_string()
        .map_err(|v| CliError::usage(format!("new: {flag} {v:?} is not UTF-8 text")))
}

/// The IBI given with `flag`.
fn ibi(s: String, flag: &str) -> Result<Ibi, CliError> {
    Ibi::parse(&s).map_err(|e| CliError::usage(format!("new: {flag}: {e}")))
}

/// The IBI of the item a Copy is of (`--copy`): one rep and at most one IBIp among the
/// `--ibi` flags, which are for `--copy` only.
fn copy_of(copy: bool, ibis: Vec<Ibi>) -> Result<Option<CopyOf>, CliError> {
    if !copy {
        if !ibis.is_empty() {
            return Err(CliError::usage(
                "new: --ibi is for --copy; a new Original gets a minted IBI",
            ));
        }
        return Ok(None);
    }
    let mut rep = None;
    let mut ibip = None;
    for i in ibis {
        match i {
            Ibi::Rep(r) if rep.is_none() => rep = Some(r),
            Ibi::Ibip(p) if ibip.is_none() => ibip = Some(p),
            other => {
                return Err(CliError::usage(format!(
                    "new: --ibi {other}: give one rep and at most one IBIp"
                )))
            }
        }
    }
    let rep = rep.ok_or_else(|| {
        CliError::usage("new: --copy needs --ibi REP (a Copy is stored under its rep)")
    })?;
    Ok(Some(CopyOf { rep, ibip }))
}

/// Refuses a command line without what every `new` needs: a FILE, and the language of a
/// translation.
fn check_complete(req: &NewItem) -> CliResult {
    if req.files.is_empty() {
        return Err(CliError::missing(&super::PROGRAM, "new", "FILE"));
    }
    if req.translation_of.is_some() && req.language.is_none() {
        return Err(CliError::usage(
            "new: --translation-of needs --language, the translation's language (ll or ll-CC)",
        ));
    }
    Ok(())
}

/// Prints the pairs of what was created: rep and ibip, and those of the metadata item.
fn print_pairs(created: &Created) -> CliResult {
    let mut pairs = PairList::new();
    pairs.push_word("rep", created.rep.as_str());
    if let Some(p) = &created.ibip {
        pairs.push_word("ibip", p.as_str());
    }
    if let Some((mrep, mibip)) = &created.metadata {
        pairs.push_word("metadata.rep", mrep.as_str());
        if let Some(p) = mibip {
            pairs.push_word("metadata.ibip", p.as_str());
        }
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", pairs.to_lines())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(e.to_string()))
}
