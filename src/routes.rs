//! The routes an Archive answers on the web, the same under Apache, lighttpd (through
//! the configurations of `cgi-bin/`, which hand both prefixes to this program) and
//! `ibi-archive serve`:
//!
//! | path | answer |
//! |---|---|
//! | `/<archiveserviceibi>` | the Archive service |
//! | `/<archiveserviceibi>/filelist/<rep>` | an item's landing page (`filelist`) |
//! | `/col/<rep>/doc/<file>` | a file of an item's doc/, when `layout` says it may be served and `Item::access` that this client may have it |
//!
//! Nothing else under `col/` (item.toml, item directories, links, hard links, pipes),
//! nothing of `var/` and not `archive.toml` is ever served: files are answered here, not
//! by the web server, so that the one rule of `layout` and `item` (restricted items,
//! tombstones, what a file may be) holds whichever server runs the Archive.
//!
//! [`answer`] is the one dispatch of a request, whether it came as a CGI request
//! (`cgi`) or to `ibi-archive serve`: the route, any method but GET and HEAD refused
//! (one 405 answer), archive.toml read once, then the service, a file-list page or a
//! file.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use crate::archive::Archive;
use crate::config::Config;
use crate::download;
use crate::file_stamp::FileStamp;
use crate::filelist;
use crate::http::{content_type, Answer, Part, Reply, Request, StaticFile, PRIVATE};
use crate::item::{Access, Item, ItemError, Rule};
use crate::layout::{self, Col, DocEntry, ItemDir, Refusal};
use ::ibi::query::Query;
use ::ibi::Rep;
use rustix::fs::FileType;

/// What a request asks for, as far as what received it has routed it.
#[derive(Debug, Clone)]
pub enum Target<'a> {
    /// The web server ran this program for the service: the PATH_INFO below it.
    Service(&'a str),
    /// The web server ran this program for `/col/`: the request path, %-escaped as the
    /// client sent it (REQUEST_URI, without its query)...
    Col(&'a str),
    /// ... or, without one, as the web server decoded it (`/col` and PATH_INFO).
    ColDecoded(Vec<u8>),
    /// A request path as the client sent it, %-escaped, that no web server has routed
    /// (`serve`): a path no route leads to is not found, whatever the method.
    Path(&'a str),
}

/// The one dispatch: the answer to `req` for `target` at POSIX second `now`.
pub fn answer(req: &Request<'_>, target: &Target<'_>, now: i64) -> Reply {
    dispatch(req, target, now, None)
}

/// [`answer`] for a process that answers many requests (`serve`): archive.toml, `col/`
/// and what each item's item.toml says of who may have its files, as `kept` holds them,
/// each read again as soon as what it was read from changed.
pub fn answer_kept(req: &Request<'_>, target: &Target<'_>, now: i64, kept: &Kept) -> Reply {
    dispatch(req, target, now, Some(kept))
}

fn dispatch(req: &Request<'_>, target: &Target<'_>, now: i64, kept: Option<&Kept>) -> Reply {
    let (route, opened) = match target {
        Target::Service(path_info) => return Reply::Page(answer_service(req, path_info, now)),
        Target::Col(raw) => (
            decode_path(raw).map_or(Route::NotFound, |p| route_col(&p)),
            None,
        ),
        Target::ColDecoded(path) => (route_col(path), None),
        // No web server has routed this path: the service's own is in archive.toml,
        // read here, once.
        Target::Path(raw) => {
            let opened = match (kept, req.root) {
                (Some(kept), Some(root)) => kept.config.get(root, now).map(|c| (root, c)),
                _ => open_shared(req.root),
            };
            let route = match &opened {
                Ok((_, config)) => route(config, raw),
                // The service answers 500 and logs why.
                Err(_) => Route::Service {
                    path_info: String::new(),
                },
            };
            if route == Route::NotFound {
                // Whatever the method, as a web server answers a path it has no
                // program for.
                return not_found();
            }
            (route, Some(opened))
        }
    };
    let (root, config) = match admit(req, opened) {
        Ok(opened) => opened,
        Err(a) => return Reply::Page(a),
    };
    match route {
        Route::Service { path_info } => Reply::Page(service(
            req,
            root,
            Arc::unwrap_or_clone(config),
            &path_info,
            now,
        )),
        Route::File { .. } if req.method == "POST" => Reply::Page(post_refused()),
        Route::File { rep, path } => download::answer(
            file_judged(
                root,
                &config,
                &rep,
                path.as_deref(),
                req.client,
                kept.map(|k| (k, now, &config)),
            ),
            req,
            now,
        ),
        Route::NotFound => not_found(),
    }
}

/// [`answer`] for [`Target::Service`]: the service's own answer, always a page.
pub fn answer_service(req: &Request<'_>, path_info: &str, now: i64) -> Answer {
    match admit(req, None) {
        Ok((root, config)) => service(req, root, Arc::unwrap_or_clone(config), path_info, now),
        Err(a) => a,
    }
}

/// The Archive of `req` (`opened` already, or opened now) once its method is allowed:
/// any method but GET and HEAD is refused first, before archive.toml is read unless
/// routing needed it.
fn admit<'a>(
    req: &Request<'a>,
    opened: Option<Result<(&'a Path, Arc<Config>), Answer>>,
) -> Result<(&'a Path, Arc<Config>), Answer> {
    if req.method == "POST" && req.form.is_some() {
        // Judged by what it asks: only an OAI-PMH request may be POSTed.
        return opened.unwrap_or_else(|| open_shared(req.root));
    }
    if let Some(refused) = refuse_method(req.method) {
        return Err(refused);
    }
    opened.unwrap_or_else(|| open_shared(req.root))
}

/// [`open`], the configuration shared.
fn open_shared(root: Option<&Path>) -> Result<(&Path, Arc<Config>), Answer> {
    open(root).map(|(root, config)| (root, Arc::new(config)))
}

/// The service (or a file-list page, or no page) for `path_info`.
fn service(req: &Request<'_>, root: &Path, config: Config, path_info: &str, now: i64) -> Answer {
    let archive = Archive::new(root, config);
    let path = path_info.trim_end_matches('/');
    let post = req.method == "POST";
    if path.is_empty() {
        // A POSTed form holds the arguments (OAI-PMH's POST), the query string none.
        let query = match (post, req.form) {
            (true, Some(form)) => form,
            _ => req.query,
        };
        return match Query::parse(query) {
            Ok(q) if post && !crate::oai::is_oai_request(&q) => post_refused(),
            Ok(q) => archive.respond(&q, now),
            Err(e) => Answer::error(400, "malformed query string", e.to_string()),
        };
    }
    if post {
        return post_refused();
    }
    if let Some(ibi) = ::ibi::persistent::split_file_list_path(path.as_bytes()) {
        return filelist::page(&archive, ibi, req.client, req.headers, req.query);
    }
    let shown: String = path.chars().take(200).collect();
    Answer::error(404, "not found", format!("no such page {shown:?}"))
}

/// The 405 answer to a POST of a form that is no OAI-PMH request.
fn post_refused() -> Answer {
    refuse_method("POST").unwrap_or_else(|| Answer::text(405, ""))
}

/// The 405 answer to any method but GET and HEAD.
fn refuse_method(method: &str) -> Option<Answer> {
    if method == "GET" || method == "HEAD" {
        return None;
    }
    let shown: String = method.chars().take(32).collect();
    let mut a = Answer::error(
        405,
        "method not allowed",
        format!("method {shown:?} not allowed"),
    );
    a.headers.push(("Allow".into(), "GET, HEAD".into()));
    Some(a)
}

/// The Archive at `root`, and its configuration.
fn open(root: Option<&Path>) -> Result<(&Path, Config), Answer> {
    let Some(root) = root else {
        return Err(Answer::error(
            500,
            "archive not configured",
            "IBI_ARCHIVE_ROOT is not set".into(),
        ));
    };
    match Config::load_for_service(root) {
        Ok(c) => Ok((root, c)),
        Err(e) => Err(Answer::error(
            500,
            "archive configuration unavailable",
            e.to_string(),
        )),
    }
}

/// archive.toml as a process that answers many requests keeps it: read again when the
/// file is another one (inode, device), or its size, modification or change time
/// differ; kept only once its change time is
/// [`SETTLED_SECS`](crate::file_stamp::SETTLED_SECS) in the past, so that a file written
/// twice within one tick of the file system's clock (the same times after both writes) is
/// read again until it has settled. What it answers is what reading the file answers: the
/// same configuration, the same error.
#[derive(Default)]
pub struct KeptConfig {
    kept: Mutex<Option<(FileStamp, Arc<Config>)>>,
}

impl KeptConfig {
    /// The configuration of the Archive at `root` at POSIX second `now`, shared with the
    /// requests that have it meanwhile (nothing copied).
    pub fn get(&self, root: &Path, now: i64) -> Result<Arc<Config>, Answer> {
        let stamp = rustix::fs::stat(root.join("archive.toml"))
            .ok()
            .map(|st| FileStamp::of(&st));
        if let Some(stamp) = stamp {
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, config)) = &*kept {
                if *at == stamp {
                    return Ok(config.clone());
                }
            }
        }
        // Read after its stamp was taken: a change in between gives the next request
        // another stamp, and a read again.
        let read = open_shared(Some(root)).map(|(_, config)| config);
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = match (&read, stamp) {
            (Ok(config), Some(stamp)) if stamp.settled(now) => Some((stamp, config.clone())),
            _ => None,
        };
        read
    }
}

/// What a process that answers many requests (`serve`) keeps between them, each part
/// read again as soon as what it was read from changed, so that every answer is the one
/// reading it all again would give:
///
/// - archive.toml ([`KeptConfig`]);
/// - `col/`'s handle, kept while `<root>/col` is the same directory (device and inode:
///   the handle holds the inode, so no other directory can take its number);
/// - what each item's item.toml says of who may have its files ([`Rule`], and the IBI
///   the item is cited by), kept while item.toml is the same file, as archive.toml is
///   (device, inode, size, modification and change times, taken from the item's handle
///   without following a link; kept only once its change time is settled), for at most
///   [`Kept::MAX_ITEMS`] items, those asked for least recently dropped first.
///
/// The walk itself is never kept: every request reaches the item's directory from col/'s
/// handle (one `openat2`, no link followed), takes item.toml's status from that
/// directory's descriptor, and opens and checks the file from it (`layout`), so a
/// directory replaced, a doc/ file replaced, removed or swapped for a link is seen as a
/// fresh walk sees it. (Keeping the item's and doc/'s handles instead would need the
/// status of every directory from col/ down to prove that none of their names changed,
/// more system calls than the walk they would spare, and a descriptor per item held.)
#[derive(Default)]
pub struct Kept {
    pub config: KeptConfig,
    col: Mutex<Option<KeptCol>>,
    items: Mutex<KeptItems>,
}

/// col/ opened, and what it was when it was opened.
struct KeptCol {
    dev: u64,
    ino: u64,
    col: Arc<Col>,
}

/// The judgements kept, by rep, each with the tick it was last used at.
#[derive(Default)]
struct KeptItems {
    by_rep: HashMap<String, (KeptItem, u64)>,
    tick: u64,
}

#[derive(Clone)]
struct KeptItem {
    stamp: FileStamp,
    judged: Judged,
    /// The configuration `judged.links` were written for (a weak reference: it keeps
    /// that configuration's place in memory, so that no other can take it, but not its
    /// values).
    config: Weak<Config>,
}

/// What an item's item.toml says that its files' answers depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Judged {
    rule: Rule,
    /// The IBI the item is cited by (its IBIp, else its rep), for the answers' links.
    cited_as: String,
    /// The answers' links ([`filelist::file_links`]) for the configuration at hand.
    links: Vec<String>,
}

impl Judged {
    fn of(item: &Item, config: &Config) -> Judged {
        Judged {
            rule: item.rule(),
            cited_as: item.cited_as().to_string(),
            links: filelist::file_links(config, item.cited_as(), item.rep.as_str()),
        }
    }
}

impl Kept {
    /// Items whose judgement is kept at most.
    pub const MAX_ITEMS: usize = 4096;

    /// The number of items whose judgement is kept now.
    pub fn items_kept(&self) -> usize {
        self.items
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_rep
            .len()
    }

    /// `<root>/col`, opened (following a link there, as [`Col::open`] does), or the
    /// handle kept while that is still the same directory.
    fn col(&self, root: &Path) -> std::io::Result<Arc<Col>> {
        let path = root.join("col");
        let now = rustix::fs::stat(&path).map_err(std::io::Error::from);
        let mut kept = self.col.lock().unwrap_or_else(|e| e.into_inner());
        match (&now, &*kept) {
            (Ok(st), Some(k)) if st.st_dev == k.dev && st.st_ino == k.ino => {
                return Ok(k.col.clone())
            }
            // Gone: nothing kept, and the open below says why.
            (Err(_), _) => *kept = None,
            _ => {}
        }
        let col = Arc::new(Col::open(root)?);
        // What was opened, not what the name was a moment ago.
        let st = col.stat()?;
        *kept = Some(KeptCol {
            dev: st.st_dev,
            ino: st.st_ino,
            col: col.clone(),
        });
        Ok(col)
    }

    /// The judgement of the item whose directory is `dir`, named `rep`, at POSIX second
    /// `now`: kept while its item.toml is the same file, else read ([`Item::load`]).
    fn judge(
        &self,
        dir: &ItemDir,
        rep: Rep,
        now: i64,
        config: &Arc<Config>,
    ) -> Result<Judged, ItemError> {
        // Taken before the file is read: a change in between gives the next request
        // another stamp, and a read again.
        let stamp = dir
            .item_toml_stat()
            .ok()
            .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
            .map(|st| FileStamp::of(&st));
        if let Some(stamp) = stamp {
            let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
            items.tick += 1;
            let tick = items.tick;
            if let Some((kept, used)) = items.by_rep.get_mut(rep.as_str()) {
                if kept.stamp == stamp {
                    *used = tick;
                    if !std::ptr::eq(kept.config.as_ptr(), Arc::as_ptr(config)) {
                        let judged = &mut kept.judged;
                        judged.links = filelist::file_links(config, &judged.cited_as, rep.as_str());
                        kept.config = Arc::downgrade(config);
                    }
                    return Ok(kept.judged.clone());
                }
            }
        }
        let key = rep.as_str().to_string();
        let read = Item::load(dir, rep).map(|item| Judged::of(&item, config));
        let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        match (read, stamp) {
            (Ok(judged), Some(stamp)) if stamp.settled(now) => {
                let kept = KeptItem {
                    stamp,
                    judged: judged.clone(),
                    config: Arc::downgrade(config),
                };
                items.keep(key, kept);
                Ok(judged)
            }
            (read, _) => {
                items.by_rep.remove(&key);
                read
            }
        }
    }
}

impl KeptItems {
    /// Keeps `item` for `rep`; past [`Kept::MAX_ITEMS`], the least recently used quarter
    /// is dropped first (one pass for many insertions).
    fn keep(&mut self, rep: String, item: KeptItem) {
        if self.by_rep.len() >= Kept::MAX_ITEMS && !self.by_rep.contains_key(&rep) {
            let mut ticks: Vec<u64> = self.by_rep.values().map(|(_, t)| *t).collect();
            let cut = ticks.len() / 4;
            let (_, oldest_kept, _) = ticks.select_nth_unstable(cut);
            let below = *oldest_kept;
            self.by_rep.retain(|_, (_, t)| *t >= below);
        }
        self.tick += 1;
        self.by_rep.insert(rep, (item, self.tick));
    }
}

fn not_found() -> Reply {
    Reply::Page(Answer::text(404, "not found\n"))
}

/// Where a request path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The Archive service, with this PATH_INFO (empty for the service itself).
    Service { path_info: String },
    /// Something below an item's doc/: the item's rep as the URL spells it, and the path
    /// below `doc/` (bytes as stored: names may be Latin-1; empty or ending in `/` for a
    /// folder; `None` for `…/doc` itself, without its slash).
    File { rep: String, path: Option<Vec<u8>> },
    /// Nothing is served here.
    NotFound,
}

/// Routes a request path (`raw`, still %-escaped as it came on the request line).
/// Routing looks at no file: what is there is [`file()`]'s question.
pub fn route(config: &Config, raw: &str) -> Route {
    match decode_path(raw) {
        Some(path) => route_decoded(config, &path),
        None => Route::NotFound,
    }
}

/// Routes a path already %-decoded (as a web server gives SCRIPT_NAME and PATH_INFO).
pub fn route_decoded(config: &Config, path: &[u8]) -> Route {
    if path.contains(&0) {
        return Route::NotFound;
    }
    let service = format!("/{}", config.service);
    if path == service.as_bytes() {
        return Route::Service {
            path_info: String::new(),
        };
    }
    if let Some(rest) = path.strip_prefix(service.as_bytes()) {
        if rest.starts_with(b"/") {
            return match String::from_utf8(rest.to_vec()) {
                Ok(p) => Route::Service { path_info: p },
                Err(_) => Route::NotFound,
            };
        }
    }
    route_col(path)
}

/// Routes a %-decoded path below `/col/`: a file of an item's doc/, or nothing.
fn route_col(path: &[u8]) -> Route {
    if path.contains(&0) {
        return Route::NotFound;
    }
    let Some((rep, below)) = layout::split_doc_url_path(path) else {
        return Route::NotFound;
    };
    let Ok(rep) = String::from_utf8(rep.to_vec()) else {
        return Route::NotFound;
    };
    Route::File {
        rep,
        path: below.map(<[u8]>::to_vec),
    }
}

/// The file `path` below the doc/ of the item `rep` of the Archive at `root`, for a
/// client at `client` (the address of the connection, not anything the request says).
pub fn file(
    root: &Path,
    config: &Config,
    rep: &str,
    path: Option<&[u8]>,
    client: Option<IpAddr>,
) -> Reply {
    file_judged(root, config, rep, path, client, None)
}

/// [`file`], with `col/` and the item's judgement as `kept` holds them at POSIX second
/// `now`, for `config` shared (when given): the same answer.
fn file_judged(
    root: &Path,
    config: &Config,
    rep: &str,
    path: Option<&[u8]>,
    client: Option<IpAddr>,
    kept: Option<(&Kept, i64, &Arc<Config>)>,
) -> Reply {
    let page = |status: u16, text: &str| Reply::Page(Answer::text(status, format!("{text}\n")));
    let not_found = || page(404, "not found");
    // The rep as the URL spells it must be the directory's own spelling: the grammar
    // keeps `..` and the like out, and URLs are only ever handed out in that spelling.
    let Ok(parsed) = Rep::parse(rep) else {
        return not_found();
    };
    let opened = match kept {
        Some((kept, ..)) => kept.col(root),
        None => Col::open(root).map(Arc::new),
    };
    let col = match opened {
        Ok(col) => col,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return not_found(),
        // Out of descriptors, say: not an absence, and the log says why.
        Err(e) => {
            let mut a = Answer::text(503, "unavailable: try again later\n");
            a.log.push(format!("{}: {e}", root.join("col").display()));
            return Reply::Page(a);
        }
    };
    let logged = |mut reply: Reply, line: String| {
        if let Reply::Page(a) = &mut reply {
            a.log.push(line);
        }
        reply
    };
    // The item's directory is reached anew for every request, from col/'s handle: what
    // is kept is only what its item.toml said, while it is the same file.
    let dir = match col.item(rep) {
        Ok(dir) => dir,
        Err(Refusal::Absent) => return not_found(),
        Err(e) => {
            return logged(
                not_found(),
                format!("{}: {e}; not served", col.path().join(rep).display()),
            )
        }
    };
    let judged = match kept {
        Some((kept, now, shared)) => kept.judge(&dir, parsed, now, shared),
        None => Item::load(&dir, parsed).map(|item| Judged::of(&item, config)),
    };
    let judged = match judged {
        Ok(judged) => judged,
        Err(e) => return logged(not_found(), format!("{e}; its files are not served")),
    };
    // Whatever comes of it from here depends on the client's network when the item is
    // restricted: a 403 outside, the file (or a redirect, or a 404) inside.
    let private = judged.rule.depends_on_network();
    let reply = match judged.rule.access(config, client) {
        Access::Granted => item_file(judged.links, &dir, rep, path),
        Access::Restricted => page(
            403,
            "forbidden: this item's files are open only to the networks the Archive licenses",
        ),
        Access::Deleted => return page(410, "gone: this item has been deleted"),
    };
    match reply {
        Reply::Page(mut a) if private => {
            a.headers
                .extend(PRIVATE.map(|(n, v)| (n.to_string(), v.to_string())));
            Reply::Page(a)
        }
        Reply::File(mut f) => {
            f.private = private;
            Reply::File(f)
        }
        other => other,
    }
}

/// The file `path` (`None`: doc/ itself) of the doc/ of an item, a client may have,
/// with the item's `links`.
fn item_file(links: Vec<String>, dir: &layout::ItemDir, rep: &str, path: Option<&[u8]>) -> Reply {
    let page = |status: u16, text: &str| Reply::Page(Answer::text(status, format!("{text}\n")));
    let not_found = || page(404, "not found");
    let logged = |mut reply: Reply, line: String| {
        if let Reply::Page(a) = &mut reply {
            a.log.push(line);
        }
        reply
    };
    let redirect = |name: &[u8]| {
        let mut location = String::new();
        layout::push_doc_url_path(&mut location, rep, name);
        if !name.is_empty() {
            location.push('/');
        }
        let mut a = Answer::text(301, "moved to the folder's own URL\n");
        a.headers.push(("Location".into(), location));
        Reply::Page(a)
    };
    let Some(name) = path else {
        return redirect(b"");
    };
    let mut served = name.to_vec();
    let opened = match dir.open_doc(name) {
        // A folder asked as one: its index page, as web servers show one.
        Ok(DocEntry::Dir) if name.is_empty() || name.ends_with(b"/") => {
            served.extend_from_slice(b"index.html");
            dir.open_doc(&served)
        }
        Ok(DocEntry::Dir) => return redirect(name),
        other => other,
    };
    match opened {
        Ok(DocEntry::File(f)) => Reply::File(StaticFile {
            content_type: content_type(&served),
            file: f.file,
            len: f.len,
            modified: f.modified,
            links,
            etag: download::etag(&f.stamp),
            part: Part::Whole,
            private: false,
        }),
        Ok(DocEntry::Dir) | Err(Refusal::Absent | Refusal::BadName) => not_found(),
        Err(e) => logged(
            not_found(),
            format!(
                "{}/{}: {e}",
                dir.path().join(layout::DOC).display(),
                String::from_utf8_lossy(name)
            ),
        ),
    }
}

/// The origin form (`/path?query`) of a request target: the absolute form
/// (`http://host/path`, RFC 9112 §3.2.2) names the same resource.
pub fn origin_form(target: &str) -> &str {
    match target.find("://") {
        Some(i) if !target.starts_with('/') => {
            let rest = &target[i + 3..];
            rest.find(['/', '?']).map_or("/", |j| &rest[j..])
        }
        _ => target,
    }
}

/// Percent-decodes a request path to bytes; a malformed escape or a NUL is no path.
fn decode_path(raw: &str) -> Option<Vec<u8>> {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            return None;
        }
        i += 1;
    }
    let decoded: Vec<u8> = percent_encoding::percent_decode(bytes).collect();
    (!decoded.contains(&0)).then_some(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Config {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-archive");
        Config::load(&root).unwrap()
    }

    #[test]
    fn the_service_and_its_sub_paths() {
        let c = sample();
        assert_eq!(
            route(&c, "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17"),
            Route::Service {
                path_info: String::new()
            }
        );
        assert_eq!(
            route(&c, "/sid.inpe.br/mtc-m18%4080/2008/03.17.15.17/filelist/iconet.com.br/banon/2009/09.09.22.01"),
            Route::Service { path_info: "/filelist/iconet.com.br/banon/2009/09.09.22.01".into() }
        );
        assert_eq!(
            route(&c, "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17x"),
            Route::NotFound
        );
    }

    #[test]
    fn files_route_only_below_doc() {
        let c = sample();
        assert_eq!(
            route(
                &c,
                "/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf"
            ),
            Route::File {
                rep: "sid.inpe.br/mtc-m19/2013/09.04.12.27.57".into(),
                path: Some(b"Relat\xf3rio Final.pdf".to_vec())
            }
        );
        assert_eq!(
            route(&c, "/col/a.b/c/2009/09.09.22.01/doc"),
            Route::File {
                rep: "a.b/c/2009/09.09.22.01".into(),
                path: None
            }
        );
        for bad in [
            "/col/iconet.com.br/banon/2009/09.09.22.01/item.toml",
            "/col/iconet.com.br/banon/2009/../../../archive.toml",
            "/col/",
            "/archive.toml",
            "/var/urlkey.secret",
            "/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib%00",
            "/col/iconet.com.br/banon/2009/09.09.22.01/doc/%zz",
        ] {
            assert_eq!(route(&c, bad), Route::NotFound, "{bad}");
        }
    }

    /// archive.toml of a copy of sample-archive with `address` for its archiveaddress.
    fn write_config(root: &Path, address: &str) {
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-archive/archive.toml");
        let text = std::fs::read_to_string(sample).unwrap();
        let text = text.replace("\"localhost:8080\"", &format!("\"{address}\""));
        let new = root.join("archive.toml.new");
        std::fs::write(&new, text).unwrap();
        std::fs::rename(&new, root.join("archive.toml")).unwrap();
    }

    #[test]
    fn a_kept_config_is_the_file_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_config(root, "localhost:8080");
        let kept = KeptConfig::default();
        let now = ::ibi::time::SystemClock::now();
        let address = |now: i64| kept.get(root, now).unwrap().archiveaddress.clone();
        // Changed less than SETTLED_SECS ago: read, and not kept.
        assert_eq!(address(now), "localhost:8080");
        assert!(kept.kept.lock().unwrap().is_none());
        // Settled: kept, and given while the file is the same.
        let later = now + 100;
        assert_eq!(address(later), "localhost:8080");
        assert!(kept.kept.lock().unwrap().is_some());
        assert_eq!(address(later), "localhost:8080");
        // Another size; another file of the same size (another inode).
        write_config(root, "localhost:80");
        assert_eq!(address(later), "localhost:80");
        write_config(root, "localhost:81");
        assert_eq!(address(later), "localhost:81");
        // Gone: the answer of a missing archive.toml, and nothing kept.
        std::fs::remove_file(root.join("archive.toml")).unwrap();
        let e = kept.get(root, later).unwrap_err();
        assert_eq!(e.status, 500);
        assert!(kept.kept.lock().unwrap().is_none());
    }

    #[test]
    fn kept_items_are_bounded_least_recently_used_first() {
        let stamp = FileStamp {
            dev: 1,
            ino: 2,
            size: 3,
            modified: (4, 5),
            changed: (6, 7),
        };
        let item = |n: usize| KeptItem {
            stamp,
            judged: Judged {
                rule: Rule {
                    deleted: false,
                    restricted: n.is_multiple_of(2),
                },
                cited_as: format!("a.b/c/2020/{n}"),
                links: Vec::new(),
            },
            config: Weak::new(),
        };
        let mut items = KeptItems::default();
        for n in 0..Kept::MAX_ITEMS {
            items.keep(n.to_string(), item(n));
        }
        assert_eq!(items.by_rep.len(), Kept::MAX_ITEMS);
        // The first one used again: the oldest are those after it.
        items.tick += 1;
        items.by_rep.get_mut("0").unwrap().1 = items.tick;
        items.keep("new".into(), item(1));
        assert_eq!(
            items.by_rep.len(),
            Kept::MAX_ITEMS - Kept::MAX_ITEMS / 4 + 1
        );
        assert!(items.by_rep.contains_key("0"));
        assert!(items.by_rep.contains_key("new"));
        assert!(!items.by_rep.contains_key("1"));
        assert!(!items
            .by_rep
            .contains_key(&(Kept::MAX_ITEMS / 4).to_string()));
        assert!(items
            .by_rep
            .contains_key(&(Kept::MAX_ITEMS / 4 + 1).to_string()));
        // Kept again under the same rep: replaced, nothing dropped.
        let len = items.by_rep.len();
        items.keep("new".into(), item(2));
        assert_eq!(items.by_rep.len(), len);
        assert!(items.by_rep["new"].0.judged.rule.restricted);
    }

    #[test]
    fn content_types_by_extension() {
        assert_eq!(content_type(b"a/b.PDF"), "application/pdf");
        assert_eq!(content_type(b"ref.bib"), "text/plain");
        assert_eq!(content_type(b"x.tar.gz"), "application/gzip");
        assert_eq!(content_type(b"dir.d/noext"), "application/octet-stream");
        assert_eq!(content_type(b"Relat\xf3rio Final.pdf"), "application/pdf");
    }
}
