//! TLS to PostgreSQL, for real: a throwaway cluster (common::pg) with `ssl = on`, a
//! certificate the test makes with openssl (a CA of its own signs the server's, which
//! names `db.example.org` and 127.0.0.1), and a pg_hba.conf that takes connections over
//! TLS only (`hostssl`; `hostnossl … reject`). The resolver's commands and its server
//! connect with `sslmode=require`, and with `verify-full` and `verify-ca` against the CA
//! (`sslrootcert`); another CA is refused, and so is a host name the certificate does not
//! name under `verify-full`; a URI without `sslmode` is refused by the server, which
//! says why.

use std::path::{Path, PathBuf};
use std::process::Command;

use common::pg::Cluster;
use common::resolver::{Resolver, RESOLVER_IBI};

/// The cluster's certificates, made by openssl as the cluster's user in `<cluster>/tls`:
/// `ca.crt` (the CA that signed the server's), `other.crt` (a CA that did not); the server
/// takes TLS only.
fn tls_cluster() -> Option<(Cluster, PathBuf)> {
    let pg = Cluster::start()?;
    let dir = pg.dir().join("tls");
    let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    let script = format!(
        r#"set -e
mkdir "$1/tls" && cd "$1/tls"
for ca in ca other; do
    openssl req -x509 {ec} -keyout $ca.key -out $ca.crt -days 2 -subj /CN=ibi-test-$ca \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
done
openssl req {ec} -keyout server.key -out server.csr -subj /CN=db.example.org 2>/dev/null
printf 'subjectAltName=DNS:db.example.org,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
    -extfile server.ext -out server.crt 2>/dev/null
chmod 600 server.key
printf "ssl = on\nssl_cert_file = '%s'\nssl_key_file = '%s'\n" "$PWD/server.crt" "$PWD/server.key" \
    >> "$1/data/postgresql.conf"
printf 'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n' \
    > "$1/data/pg_hba.conf"
"#
    );
    let out = pg
        .command("sh")
        .args(["-c", &script, "sh"])
        .arg(pg.dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "making the certificates: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    pg.stop();
    pg.restart();
    Some((pg, dir))
}

/// A resolver.toml in `dir` with the registry `database`, listening on `port`.
fn config(dir: &Path, database: &str, port: u16) -> PathBuf {
    let path = dir.join("resolver.toml");
    std::fs::write(
        &path,
        format!("serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1:{port}\"\nlisten = \"127.0.0.1:{port}\"\ndatabase = \"{database}\"\n"),
    )
    .unwrap();
    path
}

/// `ibi-resolver archives --csv` on the registry `database`: (exit code, stderr).
fn archives(dir: &Path, database: &str) -> (i32, String) {
    let config = config(dir, database, 1);
    let (code, _, err) = common::run_with_stdin(
        Command::new(common::ibi_resolver_bin()).args([
            "archives",
            "--csv",
            "--config",
            config.to_str().unwrap(),
        ]),
        "",
    );
    (code, err)
}

#[test]
fn the_registry_is_reached_over_tls_verified_against_its_ca_and_another_ca_is_refused() {
    if !common::required_under_ci(
        Path::new("/usr/bin/openssl").is_file(),
        "openssl (the test's certificates)",
    ) {
        eprintln!("skipping: openssl is not installed");
        return;
    }
    let Some((pg, tls)) = tls_cluster() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let port = pg.port();
    let db = pg.create_database();
    let ca = tls.join("ca.crt");
    let other = tls.join("other.crt");
    let uri =
        |host: &str, params: &str| format!("postgresql://postgres@{host}:{port}/{db}{params}");

    // Without sslmode: in clear, which this server refuses, saying why.
    let plain = uri("127.0.0.1", "");
    assert_eq!(
        archives(work.path(), &plain),
        (
            1,
            format!("ibi-resolver: {plain}: cannot connect: FATAL: pg_hba.conf rejects connection for host \"127.0.0.1\", user \"postgres\", database \"{db}\", no encryption\n")
        )
    );
    // Encrypted, the certificate unverified; verified against the CA, with the host it
    // names (an IP address), or whatever host under verify-ca.
    for database in [
        uri("127.0.0.1", "?sslmode=require"),
        uri(
            "127.0.0.1",
            &format!("?sslmode=verify-full&sslrootcert={}", ca.display()),
        ),
        uri(
            "localhost",
            &format!("?sslmode=verify-ca&sslrootcert={}", ca.display()),
        ),
        uri(
            "127.0.0.1",
            &format!("?sslmode=require&sslrootcert={}", ca.display()),
        ),
    ] {
        assert_eq!(
            archives(work.path(), &database),
            (0, String::new()),
            "{database}"
        );
    }
    // Another CA: refused before a byte of the registry's crosses, with the cause.
    for (database, why) in [
        (
            uri(
                "127.0.0.1",
                &format!("?sslmode=verify-full&sslrootcert={}", other.display()),
            ),
            "invalid peer certificate: UnknownIssuer",
        ),
        (
            uri(
                "127.0.0.1",
                &format!("?sslmode=require&sslrootcert={}", other.display()),
            ),
            "invalid peer certificate: UnknownIssuer",
        ),
        // The CA's certificate, for a host it does not name.
        (
            uri(
                "localhost",
                &format!("?sslmode=verify-full&sslrootcert={}", ca.display()),
            ),
            "invalid peer certificate: certificate not valid for name \"localhost\"; certificate is only valid for DnsName(\"db.example.org\") or IpAddress(127.0.0.1)",
        ),
    ] {
        assert_eq!(
            archives(work.path(), &database),
            (
                1,
                format!("ibi-resolver: {database}: cannot connect: error performing TLS handshake: {why}\n")
            ),
        );
    }
    // verify-full names its CA, and the file must be one.
    let none = uri("127.0.0.1", "?sslmode=verify-full");
    assert_eq!(
        archives(work.path(), &none),
        (1, format!("ibi-resolver: {}: line 4, column 12: database: {none}: not a PostgreSQL connection URI: sslmode=verify-full: needs sslrootcert=FILE, the CA certificate (PEM) that signed the server's\n", work.path().join("resolver.toml").display()))
    );

    // The server: every connection of its (the registry's, the memory's, the
    // notifications') over TLS,
    // verified; it answers that the registry answers.
    let rport = common::free_port();
    let verified = uri(
        "127.0.0.1",
        &format!("?sslmode=verify-full&sslrootcert={}", ca.display()),
    );
    let resolver = Resolver::run(config(work.path(), &verified, rport), rport);
    let health = common::http_get(&format!("http://127.0.0.1:{rport}/healthz"));
    assert_eq!(
        (health.status, health.text()),
        (200, "ready: the registry answers\n".to_string()),
        "{}",
        resolver.log()
    );
    pg.wait_for(
        &db,
        "SELECT string_agg(DISTINCT application_name || ' ' || ssl, ', ') FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE application_name LIKE 'ibi-resolver%'",
        "ibi-resolver listen true, ibi-resolver memory true, ibi-resolver registry true\n",
    );
}
