//! The https sites, run for real: `cgi-bin/apache2/ibi-archive-tls.conf` in front of the
//! Archive and `resolver/deploy/apache2-ibi-resolver-tls.conf` in front of the resolver,
//! both included unchanged (their Defines made before them) in Debian's apache2 with
//! mod_ssl, beside the Archive's http routes (cgi-bin/apache2/ibi-archive.conf), with a
//! certificate made here by `openssl req -x509` for localhost and 127.0.0.1, and read by
//! the real curl with `--cacert`.
//!
//! The Archive (a copy of sample-archive/, its archive.toml with `baseurl =
//! "https://localhost:PORT"`) is asked by the resolver over http at its archiveaddress and
//! included over http, as the protocol has it; readers get https everywhere: the service's
//! URLs, the files, and the persistent URLs of the resolver (`publicurl =
//! "https://localhost:PORT"`), whose 302 leads to the Archive's https URL. The reader's
//! address reaches the resolver through the https proxy (X-Forwarded-For, from a trusted
//! proxy): only 127.0.0.1 is licensed for the restricted item, so 127.0.0.2 is sent to its
//! metadata.
//!
//! Under `CI=true` a missing apache2 module, openssl or curl fails the test.

use std::fs;
use std::path::Path;
use std::process::Command;

use common::resolver::{Resolver, KEY, SAMPLE_SERVICE};

/// The modules of the two sites (`a2enmod ssl proxy proxy_http`).
const MODULES: &[&str] = &["mod_ssl.so", "mod_proxy.so", "mod_proxy_http.so"];
/// The sample Archive's document, by its IBIp, and where it is.
const IBIP: &str = "8JMKD3MGP8W/35MME4E";
const FILE: &str = "col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS 643.0-B-1.pdf";
const FILE_URL_PATH: &str =
    "/col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf";
/// The sample Archive's restricted item, and the URL paths of its data and its metadata.
const RESTRICTED: &str = "sid.inpe.br/mtc-m19/2014/05.06.07.08";
const RESTRICTED_DATA: &str = "/col/sid.inpe.br/mtc-m19/2014/05.06.07.08/doc/article.pdf";
const RESTRICTED_METADATA: &str = "/col/sid.inpe.br/mtc-m19/2014/05.06.07.08.09/doc/metadata.html";

/// Whether `program --version` runs (required under `CI=true`).
fn installed(program: &str) -> bool {
    let found = Command::new(program)
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
        || Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    common::required_under_ci(found, program)
}

/// A self-signed certificate for localhost and 127.0.0.1 and its key, in `dir`.
fn certificate(dir: &Path) -> (String, String) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let out = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .args(["-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl req: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = |p: &Path| p.to_str().unwrap().to_string();
    (text(&cert), text(&key))
}

/// `curl --cacert CERT -s ARGS`: its standard output (it must succeed).
fn curl(cert: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new("curl")
        .args(["--cacert", cert, "-sS", "--max-time", "30"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "curl {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The status and Location of a GET of `url` from the local address `from`.
fn redirect(cert: &str, url: &str, from: &str) -> String {
    let out = curl(
        cert,
        &[
            "--interface",
            from,
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{redirect_url}",
            url,
        ],
    );
    String::from_utf8(out).unwrap()
}

/// Replaces `from` (which must be there) by `to` in the file at `path`.
fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn https_in_front_of_the_archive_and_the_resolver() {
    if !common::apache2_available_with_archive(MODULES)
        || !installed("openssl")
        || !installed("curl")
    {
        eprintln!("skipping: apache2 with mod_ssl and mod_proxy_http, openssl and curl are needed");
        return;
    }
    let repo = common::repository();
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    edit(
        &root.join("archive.toml"),
        "networks = [\"150.163.0.0/16\", \"127.0.0.0/8\"]",
        "networks = [\"127.0.0.1/32\"]",
    );
    common::prepare_archive(&root);
    let keys = tempfile::tempdir().unwrap();
    let (cert, key) = certificate(keys.path());

    // The resolver's configuration, its port chosen; the proxy configuration as installed
    // but for the port it proxies to (127.0.0.1:8090 may be taken here).
    let rdir = tempfile::tempdir().unwrap();
    let (config, rport) = Resolver::configure(rdir.path(), "20s", "");
    let proxy = rdir.path().join("ibi-resolver.conf");
    fs::write(
        &proxy,
        fs::read_to_string(repo.join("resolver/deploy/apache2-ibi-resolver.conf"))
            .unwrap()
            .replace("127.0.0.1:8090", &format!("127.0.0.1:{rport}")),
    )
    .unwrap();

    let sites = |ports: &[u16]| {
        format!(
            "LogFormat \"%h %l %u %t \\\"%r\\\" %>s %O \\\"%{{Referer}}i\\\" \\\"%{{User-Agent}}i\\\"\" combined\n\
             Listen 127.0.0.1:{a}\n\
             Listen 127.0.0.1:{r}\n\
             Define IBI_ARCHIVE_TLS_NAME localhost\n\
             Define IBI_ARCHIVE_TLS_PORT {a}\n\
             Define IBI_ARCHIVE_TLS_CERT {cert}\n\
             Define IBI_ARCHIVE_TLS_KEY {key}\n\
             Include \"{archive_tls}\"\n\
             Define IBI_RESOLVER_TLS_NAME localhost\n\
             Define IBI_RESOLVER_TLS_PORT {r}\n\
             Define IBI_RESOLVER_TLS_CERT {cert}\n\
             Define IBI_RESOLVER_TLS_KEY {key}\n\
             Define IBI_RESOLVER_PROXY_CONF {proxy}\n\
             Include \"{resolver_tls}\"\n",
            a = ports[0],
            r = ports[1],
            archive_tls = repo.join("cgi-bin/apache2/ibi-archive-tls.conf").display(),
            resolver_tls = repo
                .join("resolver/deploy/apache2-ibi-resolver-tls.conf")
                .display(),
            proxy = proxy.display(),
        )
    };
    let server = common::start_apache2_with(
        &root,
        &common::ibi_archive_bin(),
        SAMPLE_SERVICE,
        MODULES,
        2,
        &sites,
    );
    let (a, r) = (server.more_ports[0], server.more_ports[1]);
    let archive_https = format!("https://localhost:{a}");
    let resolver_https = format!("https://localhost:{r}");

    // The Archive: asked over http at its address, handing out https URLs.
    common::resolver::configure(
        &root,
        &format!("127.0.0.1:{}", server.port),
        &format!(
            "http://127.0.0.1:{rport}/{}",
            common::resolver::RESOLVER_IBI
        ),
    );
    edit(
        &root.join("archive.toml"),
        "\n[registration]",
        &format!("baseurl = \"{archive_https}\"\n\n[registration]"),
    );
    // The resolver: reached by readers at https, trusting the proxy on loopback.
    edit(
        &config,
        &format!("publicurl = \"http://127.0.0.1:{rport}\""),
        &format!("publicurl = \"{resolver_https}\"\ntrustedproxies = [\"127.0.0.1/32\"]"),
    );
    let resolver = Resolver::run(config, rport);
    resolver.register(SAMPLE_SERVICE, KEY);
    let (code, out, err) = common::resolver::archive_cmd("include", &root);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n"
        ),
        "{err}\n{}",
        server.error_log()
    );

    // The service's answer over https: every URL in it is https.
    let answer = curl(
        &cert,
        &[&format!(
            "{archive_https}/{SAMPLE_SERVICE}?servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={IBIP}"
        )],
    );
    let answer = String::from_utf8(answer).unwrap();
    let urls: Vec<&str> = answer.lines().filter(|l| l.starts_with("url ")).collect();
    assert_eq!(
        urls,
        [format!("url {archive_https}{FILE_URL_PATH}")],
        "{answer}\n{}",
        server.error_log()
    );
    // The file itself.
    let pdf = fs::read(root.join(FILE)).unwrap();
    assert!(curl(&cert, &[&format!("{archive_https}{FILE_URL_PATH}")]) == pdf);

    // A persistent URL through the resolver's https site: a 302 to the Archive's https URL,
    // followed to the same bytes.
    let persistent = format!("{resolver_https}/{IBIP}");
    assert_eq!(
        redirect(&cert, &persistent, "127.0.0.1"),
        format!("302 {archive_https}{FILE_URL_PATH}"),
        "{}\n{}",
        resolver.log(),
        server.error_log()
    );
    assert!(curl(&cert, &["-L", &persistent]) == pdf);
    // The reader's address, through the proxy: the data for 127.0.0.1, the metadata for
    // 127.0.0.2.
    let restricted = format!("{resolver_https}/{RESTRICTED}");
    assert_eq!(
        redirect(&cert, &restricted, "127.0.0.1"),
        format!("302 {archive_https}{RESTRICTED_DATA}")
    );
    assert_eq!(
        redirect(&cert, &restricted, "127.0.0.2"),
        format!("302 {archive_https}{RESTRICTED_METADATA}"),
        "{}",
        resolver.log()
    );
    // The resolver's own pages name its https address: the home page's persistent URLs.
    let home = String::from_utf8(curl(&cert, &[&format!("{resolver_https}/")])).unwrap();
    assert!(home.contains(&resolver_https), "{home}");
    // And the certificate is checked: without --cacert, curl refuses the site.
    let refused = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", &persistent])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(60), "{refused:?}");
}
