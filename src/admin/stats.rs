//! `stats`: access counts from `var/acknowledgments.log` (one line per counted
//! acknowledgment, see [`crate::acklog`]), per item and per month (UTC).
//!
//! Both layouts hold the same rows, sorted: for each item, one row per month with
//! accesses and then its `total`; then the rows of item `*` (all items) per month and in
//! total. Item `-` is what the log records of an access whose item it does not name: an
//! earlier version of the service wrote it for an acknowledgment whose item it could not
//! tell (the URL pointed into no item here and the acknowledgment named none); the
//! service now counts a key only for the item it was issued for, and names it.
//!
//! CSV: header `item,month,count`, then the rows (machine-readable: nothing else). Table:
//! a line saying what is counted ([`TABLE_HEAD`]), the same three columns aligned, and,
//! when there is a row `-`, a last line saying what it is ([`UNNAMED_NOTE`]).
//!
//! Outside an Archive (no archive.toml, or one that does not load) stats fails, saying so.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::AdminError;
use crate::acklog;
use crate::config::Config;
use crate::store::Store;
use ::ibi::Ibi;

/// The item name of the rows that add up every item.
pub const ALL_ITEMS: &str = "*";

/// The item name the log gives an access whose item it does not name.
pub const UNNAMED: &str = "-";

/// The first line of the table: what it counts.
pub const TABLE_HEAD: &str =
    "accesses counted in var/acknowledgments.log, per item and month (UTC); item * is all items";

/// The last line of a table with a row `-`.
pub const UNNAMED_NOTE: &str = "item -: accesses whose log line names no item (written by an earlier version of the service, for acknowledgments whose item it could not tell)";

/// Counts per item per month.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// item (as the log names it) → month `YYYY-MM` → count.
    pub counts: BTreeMap<String, BTreeMap<String, u64>>,
    /// Lines of the log that could not be read.
    pub malformed: usize,
}

/// One output row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub item: String,
    /// `YYYY-MM` or `total`.
    pub month: String,
    pub count: u64,
}

/// Reads the log of the Archive at `root`; with `only`, counts only that item. Items are
/// named as this Archive stores them: whatever form of its IBI the log records (the rep
/// of the URL served, or the IBI the resolver named — an IBIp, another spelling of the
/// rep), an item held here is counted under its rep as stored; other names stay as
/// written.
pub fn compute(root: &Path, only: Option<&Ibi>) -> Result<Stats, AdminError> {
    // An Archive, or nothing to count: a root without archive.toml says so (and what to
    // do) rather than count an empty log.
    Config::load(root).map_err(|e| AdminError::new(e.to_string()))?;
    let var = root.join("var");
    let store = Store::new(root);
    let mut names: HashMap<String, String> = HashMap::new();
    let mut name_of = |written: &str| -> String {
        names
            .entry(written.to_string())
            .or_insert_with(|| {
                Ibi::parse(written)
                    .ok()
                    .and_then(|ibi| store.find(&ibi).item)
                    .map_or_else(|| written.to_string(), |item| item.rep.as_str().to_string())
            })
            .clone()
    };
    let wanted = only.map(|ibi| (ibi, name_of(ibi.as_str())));
    let mut stats = Stats::default();
    // What is counted is first made durable: the lines the service wrote after the last
    // sync, which no acknowledgment came to sync since (see `acklog`). A failure here
    // (a user who may read var/ but not write it) leaves the log to be read as it is.
    let _ = acklog::sync_due(
        &var,
        acklog::Durability::by_wall_clock(std::time::Duration::ZERO),
    );
    // The log is read as a stream: memory grows with the items and months counted, not
    // with the log.
    // The logs logrotate kept, then the log.
    stats.malformed = acklog::for_each_kept(&var, |r| {
        let name = name_of(&r.item);
        if let Some((ibi, wanted_name)) = &wanted {
            let same = name == *wanted_name || Ibi::parse(&r.item).is_ok_and(|i| i == **ibi);
            if !same {
                return;
            }
        }
        let month = chrono::DateTime::from_timestamp(r.time, 0)
            .map_or_else(|| "?".to_string(), |t| t.format("%Y-%m").to_string());
        *stats
            .counts
            .entry(name)
            .or_default()
            .entry(month)
            .or_default() += 1;
    })
    .map_err(|e| AdminError::new(format!("cannot read {}/{e}", var.display())))?;
    Ok(stats)
}

impl Stats {
    /// The rows, in order (see the module header).
    pub fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let mut all: BTreeMap<&str, u64> = BTreeMap::new();
        let mut grand = 0;
        for (item, months) in &self.counts {
            let mut total = 0;
            for (month, &n) in months {
                rows.push(Row {
                    item: item.clone(),
                    month: month.clone(),
                    count: n,
                });
                total += n;
                *all.entry(month).or_default() += n;
            }
            rows.push(Row {
                item: item.clone(),
                month: "total".into(),
                count: total,
            });
            grand += total;
        }
        for (month, n) in all {
            rows.push(Row {
                item: ALL_ITEMS.into(),
                month: month.to_string(),
                count: n,
            });
        }
        rows.push(Row {
            item: ALL_ITEMS.into(),
            month: "total".into(),
            count: grand,
        });
        rows
    }

    /// `item,month,count` and the rows.
    pub fn csv(&self) -> String {
        let mut out = String::from("item,month,count\n");
        for r in self.rows() {
            out.push_str(&format!("{},{},{}\n", csv_field(&r.item), r.month, r.count));
        }
        out
    }

    /// The rows as an aligned table, items left-aligned, counts right-aligned, between
    /// [`TABLE_HEAD`] and, when a row is `-`, [`UNNAMED_NOTE`].
    pub fn table(&self) -> String {
        let rows = self.rows();
        let unnamed = self.counts.contains_key(UNNAMED);
        let w_item = rows.iter().map(|r| r.item.len()).max().unwrap_or(0).max(4);
        let w_month = 7;
        let w_count = rows
            .iter()
            .map(|r| r.count.to_string().len())
            .max()
            .unwrap_or(0)
            .max(5);
        let mut out = format!(
            "{TABLE_HEAD}\n{:<w_item$}  {:<w_month$}  {:>w_count$}\n",
            "item", "month", "count"
        );
        for r in rows {
            out.push_str(&format!(
                "{:<w_item$}  {:<w_month$}  {:>w_count$}\n",
                r.item, r.month, r.count
            ));
        }
        if unnamed {
            out.push_str(UNNAMED_NOTE);
            out.push('\n');
        }
        out
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
