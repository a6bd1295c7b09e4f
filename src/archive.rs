//! One Archive, opened for one request ([`Archive`]): its root, its configuration and
//! its store, the items a request looks up (each once, however it is named, and no more
//! than [`MAX_ITEMS_PER_ANSWER`]), their timestamps and the URLs of their files, its
//! secret, the lines for the log, and what the request has cost ([`Work`]). The pair-list
//! service (`crate::service`), the landing pages (`crate::filelist`) and the OAI-PMH
//! provider (`crate::oai`) all answer through it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::config::Config;
use crate::item::Item;
use crate::layout::{self, Refusal, MAX_TIMESTAMP_ENTRIES};
use crate::store::{LogLines, Lookup, Store};
use crate::urlkey::UrlKeys;
use ::ibi::Ibi;

/// Most items looked up for one answer (an item.toml may name thousands of
/// translations; each answer stays bounded whatever the Archive holds). Each item found
/// holds its directory's descriptor for the answer, so this also bounds those.
pub const MAX_ITEMS_PER_ANSWER: usize = 128;

/// Most entries walked for the default timestamps of one answer (each item's walk is
/// also bounded by `layout::MAX_TIMESTAMP_ENTRIES`).
pub const MAX_TIMESTAMP_ENTRIES_PER_ANSWER: usize = 16_384;

/// What one request has cost, for the bounds above (and the tests that hold them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// Items looked up (each once, whatever the number of relations that lead to it).
    pub items_looked_up: usize,
    /// Items whose default timestamp was worked out by walking their directory.
    pub timestamps_walked: usize,
    /// Entries those walks looked at.
    pub entries_walked: usize,
}

/// One Archive, opened for one request.
pub struct Archive {
    pub(crate) root: PathBuf,
    pub(crate) config: Config,
    pub(crate) store: Store,
    /// Items looked up in this request, by [`Ibi::key`] (an item found by its IBIp is
    /// kept under its rep's key too), so that an item is loaded, and its default
    /// timestamp worked out, once however it is named (a BTreeMap: a HashMap's random
    /// keys would cost a getrandom call per CGI run).
    pub(crate) items: std::cell::RefCell<BTreeMap<String, Option<Rc<Item>>>>,
    /// What this request has cost so far.
    pub(crate) work: std::cell::Cell<Work>,
    /// The lines for the log not yet handed out with an answer.
    pub(crate) log: std::cell::RefCell<LogLines>,
    pub(crate) keys: std::cell::OnceCell<UrlKeys>,
    /// Whether the secret could not be read or made (keys of this process alone).
    pub(crate) keys_ephemeral: std::cell::Cell<bool>,
}

impl Archive {
    pub fn new(root: &Path, config: Config) -> Archive {
        Archive {
            root: root.to_path_buf(),
            store: Store::with_memo(root),
            config,
            items: Default::default(),
            work: Default::default(),
            log: Default::default(),
            keys: Default::default(),
            keys_ephemeral: Default::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The Archive's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn var(&self) -> PathBuf {
        self.root.join("var")
    }

    /// Records a line for the web server's error log (once per request).
    pub(crate) fn warn(&self, line: String) {
        self.log.borrow_mut().push(line);
    }

    /// The lines for the log recorded since the last answer.
    pub(crate) fn take_log(&self) -> Vec<String> {
        self.log.take().into_lines()
    }

    /// The item this Archive holds under `ibi`, loaded once per request; at most
    /// [`MAX_ITEMS_PER_ANSWER`] items are looked up for one answer.
    pub(crate) fn item(&self, ibi: &Ibi) -> Option<Rc<Item>> {
        let key = ibi.key();
        if let Some(found) = self.items.borrow().get(&key) {
            return found.clone();
        }
        let mut work = self.work.get();
        if work.items_looked_up >= MAX_ITEMS_PER_ANSWER {
            self.warn(format!(
                "more than {MAX_ITEMS_PER_ANSWER} items to look up for one answer; the others are treated as absent"
            ));
            return None;
        }
        work.items_looked_up += 1;
        self.work.set(work);
        let Lookup { item, log } = self.store.find(ibi);
        self.log.borrow_mut().extend(log);
        let found = item.map(Rc::new);
        let mut items = self.items.borrow_mut();
        // The same item already loaded under its other form: one item, one value.
        let found = match &found {
            Some(item) => {
                // The key of its rep (what `Ibi::key` gives a rep).
                let by_rep = item.rep.canonical().to_string();
                let known = items.get(&by_rep).cloned().flatten();
                let item = known.unwrap_or_else(|| item.clone());
                items.insert(by_rep, Some(item.clone()));
                Some(item)
            }
            None => None,
        };
        items.insert(key, found.clone());
        found
    }

    /// What this request has cost so far (items looked up, entries walked).
    pub fn work(&self) -> Work {
        self.work.get()
    }

    /// The URL of the item's content: its `url`, the service's own address for the
    /// Archive service item, or its target file under doc/.
    pub(crate) fn data_url(&self, item: &Item) -> Option<Vec<u8>> {
        if let Some(url) = &item.url {
            return Some(url.as_bytes().to_vec());
        }
        if self.is_service_item(item) {
            return Some(self.config.service_url().into_bytes());
        }
        match &item.target {
            Some(t) => self.named_file_url(item, t.as_bytes()),
            None => {
                let target = item.handle.as_ref()?.default_target().ok()?;
                self.named_file_url(item, &target)
            }
        }
    }

    pub(crate) fn is_service_item(&self, item: &Item) -> bool {
        match &self.config.service {
            Ibi::Rep(r) => *r == item.rep,
            Ibi::Ibip(p) => item.ibip.as_ref() == Some(p),
        }
    }

    /// The URL of `file` of the item's doc/ (`<baseurl>/col/<rep>/doc/<file>`, see
    /// `layout`) when it names a file that may be served (a name given as UTF-8 also
    /// finds the same name stored as Latin-1).
    pub fn doc_url(&self, item: &Item, file: &[u8]) -> Option<Vec<u8>> {
        self.checked_doc_url(item, file).ok()
    }

    /// [`Archive::doc_url`] for a file item.toml names (its target, a format): a link, a
    /// hard link or a pipe there is a fault of the Archive, and the log says so.
    pub(crate) fn named_file_url(&self, item: &Item, file: &[u8]) -> Option<Vec<u8>> {
        match self.checked_doc_url(item, file) {
            Ok(url) => Some(url),
            Err(e) => {
                if e.is_fault() {
                    self.warn(format!(
                        "{}/{}: {e}",
                        item.doc().display(),
                        String::from_utf8_lossy(file)
                    ));
                }
                None
            }
        }
    }

    fn checked_doc_url(&self, item: &Item, file: &[u8]) -> Result<Vec<u8>, Refusal> {
        let dir = item.handle.as_ref().ok_or(Refusal::Absent)?;
        let stored = dir.stored_doc_name(file)?;
        let mut url = self.config.baseurl.clone();
        layout::push_doc_url_path(&mut url, item.rep.as_str(), &stored);
        Ok(url.into_bytes())
    }

    /// The file-list page this executable serves for an item (GetFileList).
    pub fn file_list_url(&self, item: &Item) -> Vec<u8> {
        self.config.landing_url(item.rep.as_str()).into_bytes()
    }

    /// The item's timestamp: recorded in item.toml, else the newest modification in it,
    /// worked out once per request and item, over at most [`MAX_TIMESTAMP_ENTRIES`]
    /// entries, and [`MAX_TIMESTAMP_ENTRIES_PER_ANSWER`] for all the items of an answer
    /// (an item with more is given item.toml's own modification time, and the log says
    /// to record a timestamp).
    pub(crate) fn timestamp(&self, item: &Item) -> i64 {
        if let Some(t) = item.timestamp {
            return t;
        }
        *item.default_timestamp.get_or_init(|| {
            let Some(dir) = &item.handle else {
                return 0;
            };
            let mut work = self.work.get();
            let budget = MAX_TIMESTAMP_ENTRIES
                .min(MAX_TIMESTAMP_ENTRIES_PER_ANSWER.saturating_sub(work.entries_walked));
            let (newest, walked) = dir.newest_mtime(budget);
            work.timestamps_walked += 1;
            work.entries_walked += walked;
            self.work.set(work);
            newest.unwrap_or_else(|| {
                self.warn(format!(
                    "{}: no timestamp, and more than {budget} entries in the item to look at for this answer; its item.toml's modification time is given (record a timestamp)",
                    item.dir.join(layout::ITEM_TOML).display()
                ));
                dir.item_toml_mtime().unwrap_or(0)
            })
        })
    }

    /// The Archive's secret (var/urlkey.secret, made on first use), as the HMAC state it
    /// keys: for urlkeys, and for the OAI-PMH provider's resumption tokens. When it can
    /// be neither read nor made, one of this process alone (the log says so once).
    pub(crate) fn url_keys(&self) -> &UrlKeys {
        self.keys.get_or_init(|| {
            let (keys, warning) = UrlKeys::load_or_create(&self.var());
            if let Some(w) = warning {
                self.warn(w);
                self.keys_ephemeral.set(true);
            }
            keys
        })
    }
}
