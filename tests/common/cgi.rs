//! The executable run as a CGI program, as a web server runs it, and what the tests read
//! in its answers.

use std::path::Path;
use std::process::{Command, Stdio};

use super::commands::{ibi_archive_bin, ibi_archive_cgi_bin, output_or_hang};

/// What a CGI run printed.
#[derive(Debug)]
pub struct CgiOutput {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub stderr: String,
}

impl CgiOutput {
    pub fn header(&self, name: &str) -> Option<&str> {
        super::http::header(&self.headers, name)
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("answer is ASCII")
    }
}

/// A CGI request to the binary.
pub struct Cgi<'a> {
    pub root: &'a Path,
    pub method: &'a str,
    pub query: &'a [u8],
    pub path_info: &'a str,
    pub remote_addr: &'a str,
}

impl<'a> Cgi<'a> {
    pub fn get(root: &'a Path, query: &'a str) -> Cgi<'a> {
        Cgi {
            root,
            method: "GET",
            query: query.as_bytes(),
            path_info: "",
            remote_addr: "127.0.0.1",
        }
    }

    /// The binary with the environment a web server gives it (and nothing else), not yet
    /// run: for requests that must run in parallel.
    pub fn command(&self) -> Command {
        self.command_of(&ibi_archive_bin())
    }

    /// [`Cgi::command`] of the executable `bin` (a copy another user may run).
    pub fn command_of(&self, bin: &std::path::Path) -> Command {
        use std::os::unix::ffi::OsStrExt;
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("GATEWAY_INTERFACE", "CGI/1.1")
            .env("SERVER_PROTOCOL", "HTTP/1.1")
            .env("REQUEST_METHOD", self.method)
            .env("QUERY_STRING", std::ffi::OsStr::from_bytes(self.query))
            .env("PATH_INFO", self.path_info)
            .env("SCRIPT_NAME", "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17")
            .env("REMOTE_ADDR", self.remote_addr)
            .env("IBI_ARCHIVE_ROOT", self.root)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs the binary as a web server would, with a clean environment; a run that does
    /// not end fails the test ([`output_or_hang`]).
    pub fn run(&self) -> CgiOutput {
        self.run_of(&ibi_archive_bin())
    }

    /// [`Cgi::run`] of ibi-archive-cgi, the executable the web servers' configurations
    /// name: it must answer as ibi-archive does.
    pub fn run_cgi_only(&self) -> CgiOutput {
        self.run_of(&ibi_archive_cgi_bin())
    }

    /// [`Cgi::run`] of the executable `bin`.
    fn run_of(&self, bin: &Path) -> CgiOutput {
        let child = self
            .command_of(bin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run ibi-archive");
        let out = output_or_hang(child, "the CGI run");
        assert!(
            out.status.success(),
            "CGI exited with {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        parse_cgi(
            &out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Splits CGI output into status, headers and body.
pub fn parse_cgi(stdout: &[u8], stderr: String) -> CgiOutput {
    let split = stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| {
            panic!(
                "no end of CGI headers in {:?}",
                String::from_utf8_lossy(stdout)
            )
        });
    let head = std::str::from_utf8(&stdout[..split]).unwrap();
    let mut status = 200;
    let mut headers = Vec::new();
    for line in head.split("\r\n") {
        let (name, value) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("bad header line {line:?}"));
        if name == "Status" {
            status = value[..3].parse().unwrap();
        } else {
            headers.push((name.to_string(), value.to_string()));
        }
    }
    CgiOutput {
        status,
        headers,
        body: stdout[split + 4..].to_vec(),
        stderr,
    }
}

/// Rule `chave` of Table 7.1 of the resolution standard: `número ["-" número]`, each
/// number of 10 or more digits.
fn is_chave(key: &str) -> bool {
    let number = |n: &str| n.len() >= 10 && n.bytes().all(|b| b.is_ascii_digit());
    match key.split_once('-') {
        Some((a, b)) => number(a) && number(b),
        None => number(key),
    }
}

/// Replaces the value of the `urlkey` pair by `<urlkey>` after checking its grammar;
/// returns the text and the key.
pub fn mask_urlkey(text: &str) -> (String, Option<String>) {
    let mut key = None;
    let masked: Vec<String> = text
        .split("\r\n")
        .map(|line| match line.strip_prefix("urlkey ") {
            Some(k) => {
                assert!(is_chave(k), "urlkey {k:?} does not follow rule chave");
                key = Some(k.to_string());
                "urlkey <urlkey>".to_string()
            }
            None => line.to_string(),
        })
        .collect();
    (masked.join("\r\n"), key)
}

/// The pairs of a text answer (lines ended by CRLF) or of a command's output (by LF),
/// `(name, value)`, in order.
pub fn pairs_of(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(' ').unwrap();
            (n.to_string(), v.to_string())
        })
        .collect()
}

/// The value of the pair `name` among `pairs` (as [`pairs_of`] gives them); a failure
/// of the test when there is none.
pub fn pair_value<'a>(pairs: &'a [(String, String)], name: &str) -> &'a str {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} in {pairs:?}"))
}

/// The sample Archive's item LK47B6W/362SFKH asked by IBIp, as the resolver asks.
pub const LK47: &str = "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=LK47B6W/362SFKH";

/// Its answer, urlkey masked as `mask_urlkey` does.
pub const LK47_ANSWER: &str = "archiveaddress localhost:8080\r\ncontenttype Data\r\n\
     ibi {rep iconet.com.br/banon/2009/09.09.22.01 ibip LK47B6W/362SFKH}\r\n\
     ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\n\
     ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}\r\nstate Original\r\n\
     timestamp 2009-09-09T22:01:00Z\r\n\
     url http://localhost:8080/col/iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf\r\n\
     urlkey <urlkey>";

/// Items of the sample Archive whose answers carry one URL, asked by rep and by IBIp.
pub const ONE_URL_IBIS: [&str; 6] = [
    "LK47B6W/362SFKH",
    "8JMKD3MGP8W/35MME4E",
    "8JMKD3MGP7W/3EPGUE5",
    "sid.inpe.br/mtc-m18@80/2009/08.25.19.43",
    "urlib.net/www/2014/03.25.23.20",
    "8JMKD3MGP8W/3C9EP6P",
];
