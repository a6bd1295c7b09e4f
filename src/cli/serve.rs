//! `ibi-archive serve`: the routes of an Archive (src/web.rs) over an embedded HTTP
//! server, for trying an Archive and for tests, with no web server installed.

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ibi_archive::cgi::{self, Request};
use ibi_archive::config::Config;
use ibi_archive::web::{self, Route};

use super::{root_flag, CliError, CliResult};

const WORKERS: usize = 4;

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    let mut root: Option<PathBuf> = None;
    let mut listen = String::from("127.0.0.1:8080");
    while let Some(arg) = parser.next()? {
        match arg {
            lexopt::Arg::Long("root") => root = Some(parser.value()?.into()),
            lexopt::Arg::Long("listen") => {
                listen = parser
                    .value()?
                    .into_string()
                    .map_err(|v| CliError::usage(format!("serve: bad --listen {v:?}")))?
            }
            lexopt::Arg::Long("help") => {
                println!("usage: ibi-archive serve [--root DIR] [--listen 127.0.0.1:8080]");
                return Ok(());
            }
            other => {
                return Err(CliError::usage(format!(
                    "serve: unexpected argument {}",
                    super::shown(other)
                )))
            }
        }
    }
    let root = root_flag(root);
    let root = std::fs::canonicalize(&root)
        .map_err(|e| CliError::failed(format!("{}: {e}", root.display())))?;
    let config = Config::load(&root).map_err(|e| CliError::failed(e.to_string()))?;
    let server = tiny_http::Server::http(&listen)
        .map_err(|e| CliError::failed(format!("cannot listen on {listen}: {e}")))?;
    let bound = server
        .server_addr()
        .to_ip()
        .map_or(listen.clone(), |a| a.to_string());

    print_examples(&root, &config, &bound);
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .map_err(|e| CliError::failed(format!("cannot catch Ctrl-C: {e}")))?;
    }
    let server = Arc::new(server);
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (server, stop, root) = (server.clone(), stop.clone(), root.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match server.recv_timeout(Duration::from_millis(200)) {
                        Ok(Some(request)) => answer(&root, request),
                        Ok(None) => {}
                        Err(e) => eprintln!("ibi-archive: {e}"),
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    eprintln!("ibi-archive: stopped");
    Ok(())
}

/// Tells what to try: the service's address and a few requests that answer.
fn print_examples(root: &Path, config: &Config, bound: &str) {
    let base = format!("http://{bound}");
    let service = format!("{base}/{}", config.service);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "ibi-archive: serving the Archive at {} on {base}/ (Ctrl-C stops)",
        root.display()
    );
    if config.baseurl != base && config.baseurl.replace("//localhost:", "//127.0.0.1:") != base {
        let _ = writeln!(
            out,
            "note: archive.toml says baseurl {}; the URLs in answers point there, not here",
            config.baseurl
        );
    }
    let _ = writeln!(out, "try:");
    let _ = writeln!(
        out,
        "  curl '{service}?servicesubject=inclusionConfirmationRequest'"
    );
    for ibi in some_items(root, 2) {
        let _ = writeln!(
            out,
            "  curl '{service}?servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={ibi}'"
        );
    }
    let _ = out.flush();
}

/// Up to `n` items of the Archive, by IBIp when they have one (a bounded look, not a walk).
fn some_items(root: &Path, n: usize) -> Vec<String> {
    walkdir::WalkDir::new(root.join("col"))
        .min_depth(4)
        .max_depth(4)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .take(50)
        .filter_map(|e| {
            let rel = e
                .path()
                .strip_prefix(root.join("col"))
                .ok()?
                .to_str()?
                .to_string();
            let rep = ibi_archive::ibi::Rep::parse(&rel).ok()?;
            let item = ibi_archive::item::Item::load(e.path(), rep).ok()?;
            (item.state != ibi_archive::item::State::Deleted && item.url.is_none())
                .then(|| item.ibip.map_or(rel, |p| p.to_string()))
        })
        .take(n)
        .collect()
}

fn answer(root: &Path, request: tiny_http::Request) {
    let method = request.method().as_str().to_string();
    let url = request.url().to_string();
    let remote: Option<IpAddr> = request.remote_addr().map(|a| a.ip());
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let config = Config::load(root);
    let route = match &config {
        Ok(c) => web::route(c, root, path),
        Err(_) => Route::Service {
            path_info: String::new(),
        },
    };
    let (status, bytes) = match route {
        Route::Service { path_info } => {
            let req = Request {
                method: method.clone(),
                query: query.as_bytes().to_vec(),
                path_info,
                remote_addr: remote,
                root: Some(root.to_path_buf()),
            };
            let a = cgi::handle(&req, chrono::Utc::now().timestamp());
            for line in &a.log {
                eprintln!("ibi-archive: {line}");
            }
            let mut response =
                tiny_http::Response::from_data(a.body.clone()).with_status_code(a.status);
            response.add_header(header("Content-Type", a.content_type));
            for (n, v) in &a.headers {
                response.add_header(header(n, v));
            }
            let len = a.body.len();
            (respond(request, response), len)
        }
        Route::Static(file) if method == "GET" || method == "HEAD" => {
            match std::fs::File::open(&file) {
                Ok(f) => {
                    let len = f.metadata().map(|m| m.len() as usize).unwrap_or(0);
                    let response = tiny_http::Response::from_file(f)
                        .with_header(header("Content-Type", web::content_type(&file)));
                    (respond(request, response), len)
                }
                Err(_) => (respond(request, not_found()), 0),
            }
        }
        Route::Static(_) => {
            let response = tiny_http::Response::from_string("method not allowed\n")
                .with_status_code(405)
                .with_header(header("Allow", "GET, HEAD"));
            (respond(request, response), 0)
        }
        Route::NotFound => (respond(request, not_found()), 0),
    };
    let who = remote.map_or("-".to_string(), |r| r.to_string());
    eprintln!("{who} \"{method} {url}\" {status} {bytes}");
}

fn respond<R: std::io::Read>(request: tiny_http::Request, response: tiny_http::Response<R>) -> u16 {
    let status = response.status_code().0;
    if let Err(e) = request.respond(response) {
        eprintln!("ibi-archive: cannot send the answer: {e}");
    }
    status
}

fn not_found() -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    tiny_http::Response::from_string("not found\n")
        .with_status_code(404)
        .with_header(header("Content-Type", "text/plain"))
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
        .expect("header names and values are ASCII")
}
