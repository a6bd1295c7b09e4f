//! Where the registry lives: an SQLite file (the embedded default, no server) or a
//! PostgreSQL database shared by several resolvers ([`Database`]), and the small
//! interface the registry and the location memory do their work through ([`Conn`]):
//! statements with numbered parameters (`?1`, written once for both), rows of
//! [`Value`]s, transactions, and notifications to the other resolvers of the database.
//!
//! A PostgreSQL connection that breaks (a restart, a failover) is made again at the next
//! use: every host of the URI is tried in turn, so with `target_session_attrs=read-write`
//! the next statement goes to whichever is the primary then. Connecting is bounded
//! ([`CONNECT_TIMEOUT`] unless the URI sets `connect_timeout`), and a connection whose
//! peer went silent is found dead by TCP keepalives and a user timeout instead of
//! hanging the work.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use postgres::types::{IsNull, ToSql, Type};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How long a connection to PostgreSQL may take, unless the URI says otherwise.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Unanswered data on a connection to PostgreSQL: the connection is dead after this.
const USER_TIMEOUT: Duration = Duration::from_secs(10);

/// The channel on which a change of the registered or included Archives is announced.
pub const REGISTRY_CHANNEL: &str = "ibi_registry";
/// The channel on which the location memory's changes are announced.
pub const MEMORY_CHANNEL: &str = "ibi_memory";

/// Where the registry is (`database` of resolver.toml).
#[derive(Clone, PartialEq, Eq)]
pub enum Database {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URI (`postgresql://user@host[:port][,host2…]/db?…`).
    Postgres(String),
}

impl Database {
    /// `database` of resolver.toml: a PostgreSQL URI, else a path (relative to `dir`).
    pub fn parse(value: &str, dir: &std::path::Path) -> Result<Database, String> {
        if is_uri(value) {
            postgres_config(value, "registry")?;
            Ok(Database::Postgres(value.to_string()))
        } else {
            Ok(Database::Sqlite(dir.join(value)))
        }
    }

    /// The SQLite file, if the registry is one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Database::Sqlite(p) => Some(p),
            Database::Postgres(_) => None,
        }
    }
}

/// Whether `value` names a PostgreSQL database.
pub fn is_uri(value: &str) -> bool {
    value.starts_with("postgresql://") || value.starts_with("postgres://")
}

/// Shown as an operator may read it: a path, or the URI with any password masked.
impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Database::Sqlite(p) => write!(f, "{}", p.display()),
            Database::Postgres(uri) => f.write_str(&masked(uri)),
        }
    }
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Database({self})")
    }
}

/// `uri` with the password of its user part and of a `password=` parameter replaced.
/// The user part is read as the driver reads it: everything before the first `@` (a
/// password may hold `/`, `?` or `:`).
pub fn masked(uri: &str) -> String {
    let (scheme, rest) = uri.split_once("://").unwrap_or(("", uri));
    let rest = match rest.split_once('@') {
        Some((user, after)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{after}"),
            None => rest.to_string(),
        },
        None => rest.to_string(),
    };
    let masked_params = |query: &str| {
        query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => p.to_string(),
            })
            .collect::<Vec<_>>()
            .join("&")
    };
    let rest = match rest.split_once('?') {
        Some((before, query)) => format!("{before}?{}", masked_params(query)),
        None => rest,
    };
    format!("{scheme}://{rest}")
}

/// What a statement may take on the server, set for every connection of the resolver
/// unless the URI sets `options` itself: a statement, a wait for a lock, a transaction
/// left idle (the registry's work is a few rows; anything longer is a fault).
const SERVER_BOUNDS: &str =
    "-c statement_timeout=5s -c lock_timeout=3s -c idle_in_transaction_session_timeout=30s";

/// The driver's settings of `uri` for the connection that does `role` (its
/// `application_name`, `ibi-resolver registry` say, unless the URI names one), with the
/// bounds this module sets where it sets none, and the TLS connector its `sslmode` and
/// `sslrootcert` ask for ([`crate::pg_tls`]).
pub fn postgres_config(
    uri: &str,
    role: &str,
) -> Result<(tokio_postgres::Config, MakeRustlsConnect), String> {
    let not_a_uri =
        |e: &dyn fmt::Display| format!("{}: not a PostgreSQL connection URI: {e}", masked(uri));
    let (rest, tls) = crate::pg_tls::split(uri).map_err(|e| not_a_uri(&e))?;
    let connector = tls
        .connector()
        .map_err(|e| format!("{}: {e}", masked(uri)))?;
    let mut config: tokio_postgres::Config = rest.parse().map_err(|e| not_a_uri(&e))?;
    config.ssl_mode(tls.ssl_mode());
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name(format!("ibi-resolver {role}"));
    }
    if config.get_options().is_none() {
        config.options(SERVER_BOUNDS);
    }
    config
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(5))
        .keepalives_interval(Duration::from_secs(2))
        .keepalives_retries(3)
        .tcp_user_timeout(USER_TIMEOUT);
    Ok((config, connector))
}

/// Whether a fault of PostgreSQL's client means the database is out of reach (the
/// connection lost or refused, the server starting, stopping, full or read-only after a
/// failover) rather than a statement wrong.
pub fn is_unreachable(e: &tokio_postgres::Error) -> bool {
    use tokio_postgres::error::SqlState;
    if e.is_closed() {
        return true;
    }
    match e.as_db_error() {
        Some(db) => {
            let code = db.code().code();
            code.starts_with("08")
                || code.starts_with("57P")
                || *db.code() == SqlState::TOO_MANY_CONNECTIONS
                || *db.code() == SqlState::READ_ONLY_SQL_TRANSACTION
                || *db.code() == SqlState::QUERY_CANCELED
                || matches!(db.severity(), "FATAL" | "PANIC")
        }
        // No answer of the server's: an I/O error, a timeout, a refused connection; a
        // value the driver could not convert has no I/O error behind it.
        None => {
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                if s.is::<std::io::Error>() {
                    return true;
                }
                source = s.source();
            }
            let text = e.to_string();
            text.starts_with("error connecting")
                || text.starts_with("timeout")
                || text.contains("connection closed")
        }
    }
}

/// What PostgreSQL's client says of a fault, with the server's own message when it sent
/// one (the driver's display of it is only "db error"), else with its cause: the driver
/// says "error connecting to server" or "error performing TLS handshake" alone, and why
/// (the connection refused, the certificate not trusted, a timeout) is its source's text.
pub fn pg_error_text(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let said = s.to_string();
        // A cause whose text repeats its own cause's is said once.
        if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = s.source();
    }
    text
}

/// One value of a parameter or a column.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(v.clone())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// The parameters of a statement, each converted to a [`Value`].
#[macro_export]
macro_rules! values {
    ($($v:expr),* $(,)?) => { &[$($crate::store::Value::from($v)),*][..] };
}

/// A statement's fault: what the database said, and whether the connection (or the
/// server) is gone rather than the statement wrong.
#[derive(Debug)]
pub struct StoreError {
    pub message: String,
    pub kind: StoreErrorKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// The database cannot be reached (PostgreSQL down, the connection lost).
    Unreachable,
    /// SQLite refused to write for want of permission.
    ReadOnly,
    /// A unique key already taken.
    Duplicate,
    /// Another transaction's work in the way (a deadlock): to be tried again.
    Conflict,
    /// Any other fault.
    Other,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        let kind = match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ReadOnly) => StoreErrorKind::ReadOnly,
            Some(rusqlite::ErrorCode::ConstraintViolation) => StoreErrorKind::Duplicate,
            _ => StoreErrorKind::Other,
        };
        StoreError {
            message: e.to_string(),
            kind,
        }
    }
}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> StoreError {
        use postgres::error::SqlState;
        let kind = if is_unreachable(&e) {
            StoreErrorKind::Unreachable
        } else if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
            StoreErrorKind::Duplicate
        } else if e.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED)
            || e.code() == Some(&SqlState::T_R_SERIALIZATION_FAILURE)
        {
            StoreErrorKind::Conflict
        } else {
            StoreErrorKind::Other
        };
        StoreError {
            message: pg_error_text(&e),
            kind,
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// A row read: its columns' values in the order of the statement's.
#[derive(Clone, Debug, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn at(&self, i: usize) -> StoreResult<&Value> {
        self.0.get(i).ok_or_else(|| StoreError {
            message: format!("no column {i}"),
            kind: StoreErrorKind::Other,
        })
    }

    fn wrong(i: usize, want: &str, got: &Value) -> StoreError {
        StoreError {
            message: format!("column {i}: {want} expected, {got:?} found"),
            kind: StoreErrorKind::Other,
        }
    }

    pub fn text(&self, i: usize) -> StoreResult<String> {
        match self.at(i)? {
            Value::Text(s) => Ok(s.clone()),
            other => Err(Row::wrong(i, "text", other)),
        }
    }

    pub fn opt_text(&self, i: usize) -> StoreResult<Option<String>> {
        match self.at(i)? {
            Value::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    pub fn int(&self, i: usize) -> StoreResult<i64> {
        match self.at(i)? {
            Value::Int(n) => Ok(*n),
            other => Err(Row::wrong(i, "an integer", other)),
        }
    }

    pub fn opt_real(&self, i: usize) -> StoreResult<Option<f64>> {
        match self.at(i)? {
            Value::Null => Ok(None),
            Value::Real(r) => Ok(Some(*r)),
            // SQLite keeps a whole number of a REAL column as an integer.
            Value::Int(n) => Ok(Some(*n as f64)),
            other => Err(Row::wrong(i, "a number", other)),
        }
    }
}

/// A connection to the registry's database.
pub enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<PgConn>),
}

/// A connection to PostgreSQL, made again when it breaks, its statements prepared once.
pub struct PgConn {
    config: postgres::Config,
    /// TLS as the URI asks (none, as it was, without `sslmode`).
    tls: MakeRustlsConnect,
    client: Option<postgres::Client>,
    statements: HashMap<String, postgres::Statement>,
    /// Whether a transaction is open (a broken connection ends it).
    in_transaction: bool,
}

impl PgConn {
    /// A connection to `uri` for `role` ([`postgres_config`]), made now.
    pub fn connect(uri: &str, role: &str) -> StoreResult<PgConn> {
        let (config, tls) = postgres_config(uri, role).map_err(|message| StoreError {
            message,
            kind: StoreErrorKind::Other,
        })?;
        let mut conn = PgConn {
            config: config.into(),
            tls,
            client: None,
            statements: HashMap::new(),
            in_transaction: false,
        };
        conn.client()?;
        Ok(conn)
    }

    /// The client, connected again if the connection is gone.
    pub fn client(&mut self) -> StoreResult<&mut postgres::Client> {
        if self.client.as_ref().is_some_and(|c| c.is_closed()) {
            self.client = None;
        }
        if self.client.is_none() {
            // A transaction's statements go on its own session or nowhere: never on a new
            // one, where they would each commit on their own.
            if self.in_transaction {
                return Err(StoreError {
                    message: "the connection was lost within a transaction".into(),
                    kind: StoreErrorKind::Unreachable,
                });
            }
            self.statements.clear();
            self.client = Some(self.config.connect(self.tls.clone())?);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    fn statement(&mut self, sql: &str) -> StoreResult<postgres::Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let text = numbered(sql);
        let statement = self.client()?.prepare(&text)?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Runs `work`; a broken connection is dropped so that the next use connects again.
    fn run<T>(&mut self, work: impl FnOnce(&mut PgConn) -> StoreResult<T>) -> StoreResult<T> {
        let done = work(self);
        if let Err(e) = &done {
            if e.kind == StoreErrorKind::Unreachable {
                self.client = None;
            }
        }
        done
    }
}

/// The blocking client closes its connection on its own runtime, which cannot run on a
/// thread of another (the server's, when it drops its state at a stop): there it is
/// closed on a thread of its own.
impl Drop for PgConn {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                let _ = std::thread::Builder::new()
                    .name("registry-close".into())
                    .spawn(move || drop(client));
            }
        }
    }
}

/// `sql` with `?N` written `$N`, as PostgreSQL numbers its parameters (no statement of
/// this crate has a `?` elsewhere).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let wrong = || format!("{self:?} for a parameter of type {ty}").into();
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(n) => match *ty {
                Type::INT8 => n.to_sql(ty, out),
                Type::INT4 => i32::try_from(*n)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*n)?.to_sql(ty, out),
                Type::FLOAT8 => (*n as f64).to_sql(ty, out),
                Type::BOOL => (*n != 0).to_sql(ty, out),
                _ => Err(wrong()),
            },
            Value::Real(r) => match *ty {
                Type::FLOAT8 => r.to_sql(ty, out),
                Type::FLOAT4 => (*r as f32).to_sql(ty, out),
                // SQLite keeps whatever a column is given: a whole number is taken for
                // an integer column, anything else refused.
                Type::INT8 if r.fract() == 0.0 && r.abs() < 9.0e15 => (*r as i64).to_sql(ty, out),
                _ => Err(wrong()),
            },
            Value::Text(t) => match *ty {
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    t.to_sql(ty, out)
                }
                _ => Err(wrong()),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// A column of a PostgreSQL row, as a [`Value`].
fn pg_value(row: &postgres::Row, i: usize) -> StoreResult<Value> {
    let ty = row.columns()[i].type_().clone();
    let v = match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Value::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map(|n| Value::Int(n.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map(|n| Value::Int(n.into())),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map(|b| Value::Int(b.into())),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map(Value::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map(|r| Value::Real(r.into())),
        _ => row.try_get::<_, Option<String>>(i)?.map(Value::Text),
    };
    Ok(v.unwrap_or(Value::Null))
}

/// A column of an SQLite row, as a [`Value`].
fn sqlite_value(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::Int(n),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) | ValueRef::Blob(t) => Value::Text(String::from_utf8_lossy(t).into()),
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(n) => ToSqlOutput::Borrowed(ValueRef::Integer(*n)),
            Value::Real(r) => ToSqlOutput::Borrowed(ValueRef::Real(*r)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

impl Conn {
    /// A connection to `database`: an SQLite file opened as it is (the registry checks
    /// and prepares it), or PostgreSQL connected.
    pub fn open(database: &Database, role: &str) -> StoreResult<Conn> {
        match database {
            Database::Sqlite(path) => Ok(Conn::Sqlite(rusqlite::Connection::open(path)?)),
            Database::Postgres(uri) => Ok(Conn::Postgres(Box::new(PgConn::connect(uri, role)?))),
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Conn::Postgres(_))
    }

    /// Runs one statement; the number of rows it changed.
    pub fn execute(&mut self, sql: &str, params: &[Value]) -> StoreResult<u64> {
        match self {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                Ok(stmt.execute(rusqlite::params_from_iter(params))? as u64)
            }
            Conn::Postgres(p) => p.run(|p| {
                let stmt = p.statement(sql)?;
                let params: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                Ok(p.client()?.execute(&stmt, &params)?)
            }),
        }
    }

    /// Runs one query; its rows.
    pub fn query(&mut self, sql: &str, params: &[Value]) -> StoreResult<Vec<Row>> {
        match self {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let n = stmt.column_count();
                let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
                    (0..n)
                        .map(|i| r.get_ref(i).map(sqlite_value))
                        .collect::<rusqlite::Result<Vec<_>>>()
                        .map(Row)
                })?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            }
            Conn::Postgres(p) => p.run(|p| {
                let stmt = p.statement(sql)?;
                let params: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                let rows = p.client()?.query(&stmt, &params)?;
                rows.iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| pg_value(r, i))
                            .collect::<StoreResult<_>>()
                            .map(Row)
                    })
                    .collect()
            }),
        }
    }

    /// The first row of a query, if any.
    pub fn query_one(&mut self, sql: &str, params: &[Value]) -> StoreResult<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Runs `work` in one transaction (SQLite's holding the write lock from its start),
    /// committed when it returns `Ok`, rolled back otherwise.
    pub fn transaction<T, E: From<StoreError>>(
        &mut self,
        work: impl FnOnce(&mut Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        let begin = match self {
            Conn::Sqlite(_) => "BEGIN IMMEDIATE",
            Conn::Postgres(_) => "BEGIN",
        };
        self.batch(begin)?;
        if let Conn::Postgres(p) = self {
            p.in_transaction = true;
        }
        let done = work(self);
        let ended = match &done {
            Ok(_) => self.batch("COMMIT"),
            Err(_) => self.batch("ROLLBACK"),
        };
        if ended.is_err() {
            // A commit refused (SQLite busy, say) leaves the transaction open: end it.
            // Where the connection is gone, the server ended it.
            let _ = self.batch("ROLLBACK");
        }
        if let Conn::Postgres(p) = self {
            p.in_transaction = false;
        }
        match (done, ended) {
            (Ok(v), Ok(())) => Ok(v),
            (Ok(_), Err(e)) => Err(e.into()),
            (Err(e), _) => Err(e),
        }
    }

    /// Runs statements given as one text, without parameters.
    pub fn batch(&mut self, sql: &str) -> StoreResult<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Postgres(p) => p.run(|p| Ok(p.client()?.batch_execute(sql)?)),
        }
    }

    /// Tells the other resolvers of a PostgreSQL database `payload` on `channel` (within
    /// a transaction: when it commits); nothing on SQLite, whose readers look again
    /// every few seconds.
    pub fn notify(&mut self, channel: &str, payload: &str) -> StoreResult<()> {
        match self {
            Conn::Sqlite(_) => Ok(()),
            Conn::Postgres(_) => self
                .execute("SELECT pg_notify(?1, ?2)", values![channel, payload])
                .map(|_| ()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_shows() {
        for (uri, shown) in [
            (
                "postgresql://ibi:s3cret@db1:5432,db2:5433/registry?target_session_attrs=read-write",
                "postgresql://ibi:***@db1:5432,db2:5433/registry?target_session_attrs=read-write",
            ),
            (
                "postgres://db/registry?user=ibi&password=s3cret",
                "postgres://db/registry?user=ibi&password=***",
            ),
            ("postgresql://ibi@db/registry", "postgresql://ibi@db/registry"),
            // The driver reads the user part up to the first `@`.
            (
                "postgresql://ibi:ab/cd?e:f@db1/registry",
                "postgresql://ibi:***@db1/registry",
            ),
            ("postgresql:///registry", "postgresql:///registry"),
        ] {
            assert_eq!(masked(uri), shown);
            let db = Database::parse(uri, std::path::Path::new("/etc")).unwrap();
            assert_eq!(db.to_string(), shown);
            assert_eq!(format!("{db:?}"), format!("Database({shown})"));
        }
    }

    #[test]
    fn a_path_is_relative_to_the_settings_and_a_bad_uri_refused() {
        let dir = std::path::Path::new("/etc/ibi-resolver");
        assert_eq!(
            Database::parse("resolver.sqlite", dir).unwrap(),
            Database::Sqlite(dir.join("resolver.sqlite"))
        );
        let e = Database::parse("postgresql://ibi:pw@db:notaport/registry", dir).unwrap_err();
        assert!(
            e.starts_with(
                "postgresql://ibi:***@db:notaport/registry: not a PostgreSQL connection URI"
            ),
            "{e}"
        );
        assert!(!e.contains("pw"), "{e}");
    }

    #[test]
    fn parameters_are_numbered_for_postgresql() {
        assert_eq!(
            numbered("UPDATE a SET b = ?2, c = ?10 WHERE d = ?1"),
            "UPDATE a SET b = $2, c = $10 WHERE d = $1"
        );
    }
}

/// The registries the tests of the registry and of the memory run against: one of each
/// kind of [`Database`], PostgreSQL's in a throwaway cluster of its own.
#[cfg(test)]
pub mod testing {
    use super::Database;

    /// A new registry, its schema made; what holds it goes when this is dropped.
    pub struct TestRegistry {
        pub database: Database,
        _dir: Option<tempfile::TempDir>,
        _cluster: Option<common::pg::Cluster>,
    }

    /// A new SQLite registry.
    pub fn sqlite() -> TestRegistry {
        let dir = tempfile::tempdir().unwrap();
        let database = Database::Sqlite(dir.path().join("r.sqlite"));
        crate::registry::Registry::open(&database).unwrap();
        TestRegistry {
            database,
            _dir: Some(dir),
            _cluster: None,
        }
    }

    /// A new registry in PostgreSQL; None when PostgreSQL is not installed (said on
    /// stderr), unless `CI=true`: then the test fails.
    pub fn postgres() -> Option<TestRegistry> {
        let cluster = common::pg::Cluster::start()?;
        let database = Database::Postgres(cluster.database());
        crate::registry::Registry::open(&database).unwrap();
        Some(TestRegistry {
            database,
            _dir: None,
            _cluster: Some(cluster),
        })
    }

    /// A new registry of each kind.
    pub fn registries() -> Vec<TestRegistry> {
        std::iter::once(sqlite()).chain(postgres()).collect()
    }
}
