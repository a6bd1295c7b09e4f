//! `new`: mints an IBI with the temporal distributor and stores a new item under it.
//!
//! The item is built whole — `doc/` with its files, then `item.toml` — in a temporary
//! directory `col/<prefix>/<year>/.ibi-tmp-new-…` (a dot-name the service never looks at),
//! every file and directory synced, and renamed into place as `col/<rep>` in one step; the
//! service sees no item or the whole item. The temporary directory is made beside the item,
//! not in `col/`, so that `col/` and its subdomains change only when a prefix is added:
//! the prefixes remembered in `var/col-prefixes` stay true, and are brought up to date
//! here when a prefix was added. A minted date whose rep already names a directory (made
//! by hand, say) is skipped for the next one the distributor gives; a Copy whose rep is
//! taken is refused.
//!
//! Relations:
//! - metadata (Dublin Core fields given): a second item, with its own minted IBI and
//!   `contenttype = "Metadata"`, holding `oai_dc.xml` (the `oai_dc` format) and
//!   `metadata.html` (its target); it is stored first, so the data item's `metadata`
//!   never points at nothing. Its `dc:identifier` gets the data item's persistent URL
//!   (`<publicurl>/<IBIp, else rep>`, the public URL of the Archive's first resolver:
//!   [`Config::persistent_url`]) and `dc:language` the item's language, unless given
//!   (see [`super::dublin_core`]); its page links to that URL.
//! - `translation_of` X: the new item's language is required; X (when stored here) gets
//!   `[translations] <language> = "<new rep>"`, and the new item gets the link back,
//!   `[translations] <X's language> = "<X's rep>"`, when X's language is known.
//! - `edition_of` X: X (when stored here) gets `nextedition = "<new rep>"`.
//!
//! X's item.toml is changed after the new item is in place (so X never points at
//! nothing), under `var/items.lock`, with its comments kept (see [`super::itemfile`]);
//! its timestamp is left as it is (its content did not change). When X is not stored
//! here, nothing can be changed there: [`Created::notes`] says so.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::dublin_core::{check_dc, dc_fields, metadata_html, oai_dc_xml};
use super::itemfile::{Draft, Edit};
use super::{io_err, rep_dirs, AdminError, ItemsLock};
use crate::config::{Config, Minting};
use crate::item::{check_relative_file, ContentType, Item, State};
use crate::minting::distributor::{Distributor, Granularity};
use crate::store::{LogLines, Store};
use ::ibi::atomic::{sync_dir, temp_name};
use ::ibi::mint::mint_ports;
use ::ibi::relation::Lang;
use ::ibi::time::Clock;
use ::ibi::{Ibi, Ibip, Rep};

/// What to create.
#[derive(Debug, Clone, Default)]
pub struct NewItem {
    /// Files (or directories, copied whole) that make up doc/.
    pub files: Vec<PathBuf>,
    /// The default file, relative to doc/.
    pub target: Option<String>,
    pub language: Option<Lang>,
    pub translation_of: Option<Ibi>,
    pub edition_of: Option<Ibi>,
    /// Store a Copy of an item identified elsewhere instead of minting.
    pub copy_of: Option<CopyOf>,
    pub restricted: bool,
    /// Dublin Core fields `(element, value)`, in the order given; any makes a metadata item.
    pub dc: Vec<(String, String)>,
    /// The web server's user, given var/ when `new` makes it as root (None: www-data).
    pub web_user: Option<String>,
}

/// The IBI of an item identified elsewhere: its rep (its directory here) and its IBIp.
#[derive(Debug, Clone)]
pub struct CopyOf {
    pub rep: Rep,
    pub ibip: Option<Ibip>,
}

/// What was created.
#[derive(Debug, Clone)]
pub struct Created {
    pub rep: Rep,
    pub ibip: Option<Ibip>,
    pub dir: PathBuf,
    /// The metadata item, when Dublin Core fields were given.
    pub metadata: Option<(Rep, Option<Ibip>)>,
    /// Things the administrator should know (links that could not be made here).
    pub notes: Vec<String>,
}

/// One file to copy: from `src` to `doc/<rel>`.
struct Planned {
    /// The file, for messages (and for opening, when it was named on the command line).
    src: PathBuf,
    /// For a file found inside a directory given: that directory, opened, and the
    /// file's path below it (opened from there, following no link).
    beneath: Option<(Arc<OwnedFd>, PathBuf)>,
    rel: PathBuf,
}

/// Creates the item (and its metadata item) in the Archive at `root`: their IBIs are
/// minted on `clock` (minting may wait on it for its date), and they are stamped with the
/// time it gives once minted.
pub fn create(root: &Path, req: &NewItem, clock: &dyn Clock) -> Result<Created, AdminError> {
    let config = Config::load(root).map_err(|e| AdminError::new(e.to_string()))?;
    let col = root.join("col");
    let (plan, target) = check_request(req)?;
    let store = Store::new(root);
    let mut notes = Vec::new();
    let related = check_related(&store, req, &mut notes)?;
    let ((rep, ibip), meta_ids) = item_ids(root, &col, &config, req, clock)?;
    let now = clock.now();
    // The metadata item first: the data item will point at it.
    if let Some(meta) = &meta_ids {
        store_metadata_item(&col, &config, meta, req, (&rep, ibip.as_ref()), now)?;
    }
    let mut draft = data_item_draft(req, target, ibip.as_ref(), meta_ids.as_ref(), now);
    if let Some(note) = link_back(&mut draft, &related) {
        notes.push(note);
    }
    let dir = install(&col, &rep, &draft, |doc| copy_planned(&plan, doc))?;
    link_related(root, &rep, &related)?;
    if let Some((meta_rep, _)) = &meta_ids {
        // Its record, for the OAI-PMH data provider's index (when there is one).
        let _lock = ItemsLock::take(root)?;
        crate::oai_index::add(
            &root.join("var"),
            crate::oai_index::Entry {
                seconds: now,
                deleted: false,
                rep: meta_rep.as_str().to_string(),
                formats: vec!["oai_dc".into()],
            },
        );
    }
    notes.extend(refresh_prefixes(root, clock));
    Ok(Created {
        rep,
        ibip,
        dir,
        metadata: meta_ids,
        notes,
    })
}

/// An item's IBI: its rep and, when it has one, its IBIp.
type Ids = (Rep, Option<Ibip>);

/// Checks what is asked of `new` that needs no Archive: the Dublin Core fields, the files
/// (where each goes under doc/) and the target.
fn check_request(req: &NewItem) -> Result<(Vec<Planned>, Option<String>), AdminError> {
    check_dc(&req.dc)?;
    let plan = plan_files(&req.files)?;
    let target = choose_target(&plan, req.target.as_deref())?;
    if req.restricted && req.dc.is_empty() {
        return Err(AdminError::new(
            "a restricted item needs a metadata item for the clients outside [access].networks: give Dublin Core fields",
        ));
    }
    Ok((plan, target))
}

/// The IBIs of the new item (a Copy's as given, else minted) and of its metadata item
/// (minted, when Dublin Core fields are given). An IBI a directory of col/ already holds
/// is refused for the new item before the metadata item's is minted.
fn item_ids(
    root: &Path,
    col: &Path,
    config: &Config,
    req: &NewItem,
    clock: &dyn Clock,
) -> Result<(Ids, Option<Ids>), AdminError> {
    let needs_minting = req.copy_of.is_none() || !req.dc.is_empty();
    let minter = if needs_minting {
        Some(minter(root, config, req.web_user.as_deref(), clock)?)
    } else {
        None
    };
    let mint = || -> Result<Ids, AdminError> {
        let (m, d) = minter.as_ref().expect("minting checked");
        mint_free(col, m, d)
    };
    let ids = match &req.copy_of {
        Some(c) => copy_ids(c)?,
        None => mint()?,
    };
    refuse_existing(col, &ids.0)?;
    let meta_ids = if req.dc.is_empty() {
        None
    } else {
        Some(mint()?)
    };
    Ok((ids, meta_ids))
}

/// The items a new one is related to, checked before anything is minted or written, each
/// with its item when it is stored here.
struct Related {
    /// The item translated, and the new item's language.
    translation: Option<(Ibi, Lang, Option<Item>)>,
    /// The item the new one is the next edition of.
    edition: Option<(Ibi, Option<Item>)>,
}

/// Checks that the items named by `translation_of` and `edition_of` can take the new
/// relation; one not stored here is noted in `notes`.
fn check_related(
    store: &Store,
    req: &NewItem,
    notes: &mut Vec<String>,
) -> Result<Related, AdminError> {
    let mut logged = LogLines::default();
    let translation = match &req.translation_of {
        None => None,
        Some(x) => {
            let lang = req.language.clone().ok_or_else(|| {
                AdminError::new(format!(
                    "--translation-of {x}: the translation's language is required (--language)"
                ))
            })?;
            let local = store.find(x).into_item(&mut logged);
            match &local {
                Some(item) => check_translation_slot(x, item, &lang)?,
                None => notes.push(format!(
                    "{x} is not in this Archive: record the translation in its item.toml where it is stored"
                )),
            }
            Some((x.clone(), lang, local))
        }
    };
    let edition = match &req.edition_of {
        None => None,
        Some(x) => {
            let local = store.find(x).into_item(&mut logged);
            match &local {
                Some(item) => check_edition_slot(x, item)?,
                None => notes.push(format!(
                    "{x} is not in this Archive: record its nextedition where it is stored"
                )),
            }
            Some((x.clone(), local))
        }
    };
    notes.extend(logged);
    Ok(Related {
        translation,
        edition,
    })
}

/// The `[minting]` settings of archive.toml and the distributor that gives their dates
/// (its state in `var/minting.state`; var/ made for `web_user` when missing).
fn minter<'c>(
    root: &Path,
    config: &Config,
    web_user: Option<&str>,
    clock: &'c dyn Clock,
) -> Result<(Minting, Distributor<'c>), AdminError> {
    let toml = root.join("archive.toml");
    let m = config
        .minting()
        .map_err(|e| AdminError::new(format!("{}: {e}", toml.display())))?;
    let m = m.ok_or_else(|| {
        AdminError::new(format!(
            "{}: no [minting] section, so no IBI can be minted",
            toml.display()
        ))
    })?;
    let r = Granularity::parse(&m.granularity)
        .map_err(|e| AdminError::new(format!("minting.granularity: {e}")))?;
    let var = root.join("var");
    crate::var_owner::make_var_for(&var, web_user).map_err(|e| io_err("cannot create", &var, e))?;
    Ok((m, Distributor::new(var.join("minting.state"), r, clock)))
}

/// The IBI of a Copy, as given: its IBIp, when given, must code the date of its rep.
fn copy_ids(c: &CopyOf) -> Result<Ids, AdminError> {
    if let Some(p) = &c.ibip {
        if p.date().rep_suffix() != c.rep.suffix() {
            return Err(AdminError::new(format!(
                "--ibi {p} codes the date {}, --ibi {} the date {}: they are not the same item",
                p.date().rep_suffix(),
                c.rep,
                c.rep.suffix()
            )));
        }
    }
    Ok((c.rep.clone(), c.ibip.clone()))
}

/// Stores the metadata item `meta` of the data item `data`: its Dublin Core record as
/// `oai_dc.xml` and `metadata.html`.
fn store_metadata_item(
    col: &Path,
    config: &Config,
    meta: &Ids,
    req: &NewItem,
    data: (&Rep, Option<&Ibip>),
    now: i64,
) -> Result<(), AdminError> {
    let (mrep, mibip) = meta;
    let (rep, ibip) = data;
    let persistent = config.persistent_url(ibip.map_or(rep.as_str(), Ibip::as_str));
    let fields = dc_fields(&req.dc, &persistent, req.language.as_ref());
    let xml = oai_dc_xml(&fields);
    let html = metadata_html(&fields, rep, &persistent, config);
    let draft = Draft {
        state: Some(State::Original),
        ibip: mibip.as_ref().map(|p| p.as_str().to_string()),
        timestamp: Some(now),
        contenttype: Some(ContentType::Metadata),
        target: Some("metadata.html".into()),
        formats: [("oai_dc".to_string(), "oai_dc.xml".to_string())].into(),
        ..Draft::default()
    };
    install(col, mrep, &draft, |doc| {
        write_new(&doc.join("oai_dc.xml"), xml.as_bytes())?;
        write_new(&doc.join("metadata.html"), html.as_bytes())
    })?;
    Ok(())
}

/// The item.toml of the data item: an Original, or a Copy when `copy_of` is given.
fn data_item_draft(
    req: &NewItem,
    target: Option<String>,
    ibip: Option<&Ibip>,
    meta: Option<&Ids>,
    now: i64,
) -> Draft {
    Draft {
        state: Some(if req.copy_of.is_some() {
            State::Copy
        } else {
            State::Original
        }),
        ibip: ibip.map(|p| p.as_str().to_string()),
        timestamp: Some(now),
        target,
        language: req.language.as_ref().map(Lang::to_string),
        metadata: meta.map(|(r, _)| r.as_str().to_string()),
        restricted: Some(req.restricted),
        ..Draft::default()
    }
}

/// The `[translations]` entry from the new item back to the item it translates, when that
/// one is stored here; a note when its language is unknown.
fn link_back(draft: &mut Draft, related: &Related) -> Option<String> {
    let Some((xi, _, Some(x))) = &related.translation else {
        return None;
    };
    match &x.language {
        Some(xl) => {
            draft
                .translations
                .insert(xl.to_string(), x.rep.as_str().to_string());
            None
        }
        None => Some(format!(
            "{xi} has no language: the new item has no [translations] entry back to it"
        )),
    }
}

/// Links the related items stored here to the new item `rep`: the item translated gets
/// the `[translations]` entry, the previous edition its `nextedition`.
fn link_related(root: &Path, rep: &Rep, related: &Related) -> Result<(), AdminError> {
    if let Some((x, lang, Some(_))) = &related.translation {
        let edit = Edit::Translation(lang.clone(), rep.as_str().to_string());
        link_from(root, rep, x, edit, &|item: &Item| {
            check_translation_slot(x, item, lang)
        })?;
    }
    if let Some((x, Some(_))) = &related.edition {
        let edit = Edit::NextEdition(rep.as_str().to_string());
        link_from(root, rep, x, edit, &|item: &Item| {
            check_edition_slot(x, item)
        })?;
    }
    Ok(())
}

/// Makes `edit` to the item.toml of `x`, under `var/items.lock`, after `check` on the
/// item as it is then (another command may have changed it since it was checked).
fn link_from(
    root: &Path,
    rep: &Rep,
    x: &Ibi,
    edit: Edit,
    check: &dyn Fn(&Item) -> Result<(), AdminError>,
) -> Result<(), AdminError> {
    let _lock = ItemsLock::take(root)?;
    let store = Store::new(root);
    let item = store.find(x).item.ok_or_else(|| {
        AdminError::new(format!(
            "created {rep}, but {x} can no longer be read: it was not linked to the new item"
        ))
    })?;
    check(&item)
        .map_err(|e| AdminError::new(format!("created {rep}, but it was not linked: {e}")))?;
    let path = item.dir.join(crate::layout::ITEM_TOML);
    let dir = item
        .handle
        .clone()
        .ok_or_else(|| AdminError::new(format!("{}: not opened", item.dir.display())))?;
    let text = dir
        .item_toml_text(crate::item::MAX_ITEM_TOML)
        .map_err(|e| AdminError::new(format!("cannot read {}: {e}", path.display())))?;
    let edited = super::itemfile::edit(&text, &item.dir, &item.rep, &[edit])
        .map_err(|e| AdminError::new(format!("{}: {e}", path.display())))?;
    dir.replace_item_toml(edited.as_bytes())
        .map_err(|e| io_err("cannot write", &path, e))
}

/// At most this many dates in a row skipped because their rep is taken.
const MAX_TAKEN_DATES: usize = 64;

/// The IBIs of the next date the distributor gives whose rep names no directory yet: a
/// date taken by an item made by hand (or minted elsewhere with the same settings) is
/// skipped, and the distributor, which has recorded it, gives the next one.
fn mint_free(col: &Path, m: &Minting, d: &Distributor) -> Result<Ids, AdminError> {
    for _ in 0..MAX_TAKEN_DATES {
        let date = d
            .next()
            .map_err(|e| AdminError::new(format!("cannot mint: {e}")))?;
        let minted = mint_ports(&m.host, m.port, m.ip, m.ibip_port, &date)
            .map_err(|e| AdminError::new(format!("cannot mint from [minting]: {e}")))?;
        if rep_dirs(col, &minted.rep).is_empty() {
            return Ok((minted.rep, minted.ibip));
        }
    }
    Err(AdminError::new(format!(
        "cannot mint: the last {MAX_TAKEN_DATES} dates the distributor gave are all taken by items in col/"
    )))
}

/// Brings `var/col-prefixes` up to date after a change to `col/` (waiting for a new
/// prefix's directories to settle, at most 10 s): an Archive managed with these commands
/// never has the service list `col/`. What could not be done, as notes.
pub(crate) fn refresh_prefixes(root: &Path, clock: &dyn Clock) -> Vec<String> {
    use crate::col_prefixes::FileState;
    let (_, state) = Store::remember_prefixes(root, std::time::Duration::from_secs(10), clock);
    let fix = "run ibi-archive prefixes once it can";
    match state {
        FileState::Held => Vec::new(),
        FileState::Unsettled => vec![format!(
            "col/ kept changing: var/col-prefixes was not brought up to date ({fix})"
        )],
        FileState::Unwritable => vec![format!(
            "var/col-prefixes could not be written: the service lists col/ until it is ({fix})"
        )],
    }
}

fn check_translation_slot(x: &Ibi, item: &Item, lang: &Lang) -> Result<(), AdminError> {
    check_not_deleted(x, item)?;
    if let Some((_, other)) = item.translations.iter().find(|(l, _)| l == lang) {
        return Err(AdminError::new(format!(
            "{x} already has a translation in {lang}: {other}"
        )));
    }
    if item.language.as_ref() == Some(lang) {
        return Err(AdminError::new(format!(
            "{x} is itself in {lang}: a translation must be in another language"
        )));
    }
    Ok(())
}

fn check_not_deleted(x: &Ibi, item: &Item) -> Result<(), AdminError> {
    if item.state == State::Deleted {
        return Err(AdminError::new(format!(
            "{x} is Deleted: its item.toml is a tombstone and takes no new relations"
        )));
    }
    Ok(())
}

fn check_edition_slot(x: &Ibi, item: &Item) -> Result<(), AdminError> {
    check_not_deleted(x, item)?;
    match &item.nextedition {
        Some(next) => Err(AdminError::new(format!(
            "{x} already has a next edition: {next}"
        ))),
        None => Ok(()),
    }
}

fn refuse_existing(col: &Path, rep: &Rep) -> Result<(), AdminError> {
    match rep_dirs(col, rep).first() {
        Some(dir) => Err(AdminError::new(format!(
            "an item {rep} already exists: {}",
            dir.display()
        ))),
        None => Ok(()),
    }
}

/// Builds the item in a temporary directory beside it and renames it to `col/<rep>`.
pub(crate) fn install(
    col: &Path,
    rep: &Rep,
    draft: &Draft,
    fill: impl FnOnce(&Path) -> Result<(), AdminError>,
) -> Result<PathBuf, AdminError> {
    let parent = col
        .join(rep.subdomain())
        .join(rep.word_port())
        .join(rep.year());
    let dir = parent.join(rep.day_time());
    let text = draft.render();
    Item::parse(&text, &dir, rep.clone()).map_err(|e| {
        AdminError::new(format!(
            "the new item.toml of {rep} would not be valid: {e}"
        ))
    })?;
    fs::create_dir_all(&parent).map_err(|e| io_err("cannot create", &parent, e))?;
    let tmp = parent.join(temp_name("new"));
    let build = || -> Result<(), AdminError> {
        fs::create_dir(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
        let doc = tmp.join("doc");
        fs::create_dir(&doc).map_err(|e| io_err("cannot create", &doc, e))?;
        fill(&doc)?;
        write_new(&tmp.join("item.toml"), text.as_bytes())?;
        sync_tree_dirs(&doc);
        sync_dir(&tmp);
        refuse_existing(col, rep)?;
        // rename(2) would replace an empty directory: the check above refuses one first.
        fs::rename(&tmp, &dir).map_err(|e| io_err("cannot move the new item to", &dir, e))?;
        // The new entry, and any directory made for its prefix or year, made durable.
        for d in parent.ancestors().take_while(|d| d.starts_with(col)) {
            sync_dir(d);
        }
        Ok(())
    };
    match build() {
        Ok(()) => Ok(dir),
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

/// Creates `path` (it must not exist) with `bytes`, synced. A file of the temporary
/// directory an item is built in: the item is whole or absent by the rename of that
/// directory (see [`install`]), so the file needs no temporary of its own.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), AdminError> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io_err("cannot create", path, e))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| io_err("cannot write", path, e))
}

/// Syncs every directory under `dir` (deepest first), then `dir`.
fn sync_tree_dirs(dir: &Path) {
    for e in walkdir::WalkDir::new(dir)
        .contents_first(true)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
    {
        sync_dir(e.path());
    }
}

/// Where each given file goes under doc/: a file by its name, a directory's files under
/// the directory's name.
fn plan_files(files: &[PathBuf]) -> Result<Vec<Planned>, AdminError> {
    if files.is_empty() {
        return Err(AdminError::new(
            "no FILE given: an item needs at least one file for its doc/",
        ));
    }
    let mut plan = Vec::new();
    let mut seen = BTreeSet::new();
    for src in files {
        let meta = fs::metadata(src).map_err(|e| io_err("cannot read", src, e))?;
        let name = name_in_doc(src)?;
        if meta.is_file() {
            plan.push(Planned {
                src: src.clone(),
                beneath: None,
                rel: name,
            });
        } else if meta.is_dir() {
            plan.extend(plan_directory(src, &name)?);
        } else {
            return Err(AdminError::new(format!(
                "{} is not a regular file or a directory",
                src.display()
            )));
        }
    }
    for p in &plan {
        if !seen.insert(p.rel.clone()) {
            return Err(AdminError::new(format!(
                "two files would be doc/{}: give files with distinct names",
                p.rel.display()
            )));
        }
    }
    if plan.is_empty() {
        return Err(AdminError::new(
            "the directories given hold no files: an item needs at least one file",
        ));
    }
    Ok(plan)
}

/// The name a file or directory given gets in doc/: its own, or for a path without one
/// (`.`, `..`) that of the directory it leads to.
fn name_in_doc(src: &Path) -> Result<PathBuf, AdminError> {
    match src.file_name() {
        Some(n) if n != ".." => Ok(PathBuf::from(n)),
        _ => {
            let real = fs::canonicalize(src).map_err(|e| io_err("cannot read", src, e))?;
            Ok(PathBuf::from(real.file_name().ok_or_else(|| {
                AdminError::new(format!("{} has no name to give it in doc/", src.display()))
            })?))
        }
    }
}

/// The files below directory `src`, to go under `doc/<name>/`, each to be opened from the
/// directory; refused when it holds a link (symbolic or hard) or a file that is not a
/// regular file.
fn plan_directory(src: &Path, name: &Path) -> Result<Vec<Planned>, AdminError> {
    let dir = crate::layout::open_named_dir(src).map_err(|e| io_err("cannot read", src, e))?;
    let dir = Arc::new(dir);
    let mut plan = Vec::new();
    let mut links = Vec::new();
    for e in walkdir::WalkDir::new(src)
        .follow_links(false)
        .sort_by_file_name()
    {
        let e = e.map_err(|e| AdminError::new(format!("cannot read {}: {e}", src.display())))?;
        if e.file_type().is_symlink() {
            links.push(e.path().display().to_string());
            continue;
        }
        // A second link could be any file of the same file system, archive.toml
        // among them: refused like a symbolic link.
        let hard_linked = e.file_type().is_file()
            && e.metadata().is_ok_and(|m| {
                use std::os::unix::fs::MetadataExt;
                m.nlink() > 1
            });
        if hard_linked {
            links.push(format!("{} (hard link)", e.path().display()));
            continue;
        }
        if e.file_type().is_dir() {
            continue;
        }
        if !e.file_type().is_file() {
            return Err(AdminError::new(format!(
                "{} is not a regular file",
                e.path().display()
            )));
        }
        let rel = e.path().strip_prefix(src).expect("walked under src");
        plan.push(Planned {
            src: e.path().to_path_buf(),
            beneath: Some((dir.clone(), rel.to_path_buf())),
            rel: name.join(rel),
        });
    }
    if !links.is_empty() {
        return Err(AdminError::new(format!(
            "{} holds links, which are never copied into an item (a link could lead to any file, such as archive.toml); replace them with the files: {}",
            src.display(),
            links.join(", ")
        )));
    }
    Ok(plan)
}

/// The target written in item.toml: the one given (it must be one of the files), else
/// the only file, else index.html when given; else the administrator must say.
fn choose_target(plan: &[Planned], given: Option<&str>) -> Result<Option<String>, AdminError> {
    let names = || {
        plan.iter()
            .map(|p| p.rel.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(t) = given {
        check_relative_file(t).map_err(|e| AdminError::new(format!("--target: {e}")))?;
        if !plan
            .iter()
            .any(|p| p.rel.as_os_str().as_bytes() == t.as_bytes())
        {
            return Err(AdminError::new(format!(
                "--target {t:?} is not one of the files given (in doc/ they are: {})",
                names()
            )));
        }
        return Ok(Some(t.to_string()));
    }
    if let [only] = plan {
        // A name that is not UTF-8 cannot be written in item.toml; the service's default
        // rule (the only file in doc/) finds it.
        return Ok(only.rel.to_str().map(str::to_string));
    }
    if plan.iter().any(|p| p.rel.as_os_str() == "index.html") {
        return Ok(Some("index.html".into()));
    }
    Err(AdminError::new(format!(
        "several files and no index.html: say which is the item's default file with --target (one of: {})",
        names()
    )))
}

fn copy_planned(plan: &[Planned], doc: &Path) -> Result<(), AdminError> {
    for p in plan {
        let to = doc.join(&p.rel);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err("cannot create", parent, e))?;
        }
        // A file inside a directory given is opened from that directory following no
        // link, so that one swapped for a link since it was planned is refused.
        let mut from = match &p.beneath {
            Some((dir, rel)) => {
                crate::layout::open_file_beneath(dir.as_fd(), rel.as_os_str().as_bytes())
                    .map_err(|e| AdminError::new(format!("cannot copy {}: {e}", p.src.display())))?
            }
            None => File::open(&p.src).map_err(|e| io_err("cannot read", &p.src, e))?,
        };
        let mut out = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&to)
            .map_err(|e| io_err("cannot create", &to, e))?;
        std::io::copy(&mut from, &mut out)
            .and_then(|_| out.sync_all())
            .map_err(|e| io_err("cannot copy", &p.src, e))?;
    }
    Ok(())
}
