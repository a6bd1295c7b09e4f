//! `ibi-resolver migrate-registry --to URI`: the SQLite registry of the settings copied
//! into a PostgreSQL database, for several resolvers to share.

use std::path::PathBuf;

use ibi_resolver::registry::Registry;
use ibi_resolver::store::{Conn, Database, Row, StoreError, REGISTRY_CHANNEL};

use super::{CliError, CliResult};

/// The tables copied, their columns, and the key a row already there is known by.
const TABLES: &[(&str, &str, &str)] = &[
    (
        "archives",
        "serviceibi, spelling, keyhash, email, registered, address, ip, platformversion,
         reportedemail, included, confirmation, changed, lastsuccess, failures, latencyms,
         dormant, ipreached, moves, movedat, movedfrom, movesrefused",
        "serviceibi",
    ),
    ("locations", "ibi, archive, used, verified", "ibi"),
    (
        "conflicts",
        "ibi, holder, claimant, first, last, times",
        "ibi, claimant",
    ),
];

pub fn run(parser: &mut lexopt::Parser, mut config: PathBuf) -> CliResult {
    use lexopt::prelude::*;
    let mut to = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("migrate-registry"),
            Long("config") => config = parser.value()?.into(),
            Long("to") => to = Some(parser.value()?.string()?),
            other => {
                return Err(CliError::unexpected(
                    &super::PROGRAM,
                    "migrate-registry",
                    other,
                ))
            }
        }
    }
    let mut to =
        to.ok_or_else(|| CliError::missing(&super::PROGRAM, "migrate-registry", "--to URI"))?;
    if to == "-" {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| CliError::failed(format!("standard input: {e}")))?;
        to = line.trim_end_matches(['\r', '\n']).to_string();
    }
    if !ibi_resolver::store::is_uri(&to) {
        return Err(CliError::usage(format!(
            "migrate-registry: --to {}: not a PostgreSQL URI (postgresql://USER@HOST/DB)",
            ibi_resolver::store::masked(&to)
        )));
    }
    let settings = super::load(&config)?;
    let Database::Sqlite(path) = &settings.database else {
        return Err(CliError::failed(format!(
            "{}: the registry of {} is in PostgreSQL already",
            settings.database,
            config.display()
        )));
    };
    if !path.exists() {
        return Err(CliError::failed(format!(
            "{}: no registry there to copy",
            path.display()
        )));
    }
    let dest = Database::parse(&to, std::path::Path::new(".")).map_err(CliError::failed)?;
    let mut source = super::open(&settings)?;
    let mut target = Registry::open(&dest).map_err(|e| CliError::failed(e.to_string()))?;
    let copied = copy(source.conn(), target.conn())
        .map_err(|e| CliError::failed(format!("{dest}: nothing copied: {e}")))?;
    let counts: Vec<String> = TABLES
        .iter()
        .zip(&copied)
        .map(|((table, _, _), (read, new))| format!("{table} {new} new of {read}"))
        .collect();
    super::print_text(&format!(
        "copied {} into {dest}: {}\nnow set database to that URI in the settings of every resolver that shares it, and restart them\n",
        settings.database,
        counts.join(", ")
    ))
}

/// Copies every row of [`TABLES`] from `source` into `target`, in one transaction of
/// `target`, rows already there (by key) kept as they are; per table, the rows read and
/// the rows new. The other resolvers of `target` are told when it commits.
fn copy(source: &mut Conn, target: &mut Conn) -> Result<Vec<(usize, u64)>, StoreError> {
    let mut read = Vec::new();
    for (table, columns, _) in TABLES {
        read.push(source.query(&format!("SELECT {columns} FROM {table}"), &[])?);
    }
    target.transaction(|tx| {
        let mut counts = Vec::new();
        for ((table, columns, key), rows) in TABLES.iter().zip(&read) {
            let n = columns.split(',').count();
            let params: Vec<String> = (1..=n).map(|i| format!("?{i}")).collect();
            let sql = format!(
                "INSERT INTO {table} ({columns}) VALUES ({}) ON CONFLICT ({key}) DO NOTHING",
                params.join(", ")
            );
            let mut new = 0;
            for Row(values) in rows {
                new += tx.execute(&sql, values)?;
            }
            counts.push((rows.len(), new));
        }
        tx.notify(REGISTRY_CHANNEL, "")?;
        Ok(counts)
    })
}
