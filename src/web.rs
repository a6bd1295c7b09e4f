//! The routes an Archive answers on the web, as `cgi-bin/` maps them for Apache and
//! lighttpd and as `ibi-archive serve` serves them itself:
//!
//! | path | answer |
//! |---|---|
//! | `/<archiveserviceibi>` | the Archive service (CGI) |
//! | `/<archiveserviceibi>/filelist/<rep>` | an item's file-list page (CGI, PATH_INFO) |
//! | `/col/<rep>/doc/<file>` | a static file of an item's doc/ |
//!
//! Nothing else under `col/` (item.toml, item directories, listings) and nothing of `var/`
//! or `archive.toml` is ever served.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::ibi::Rep;
use crate::service::file_inside;

/// Where a request path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The Archive service, with this PATH_INFO (empty for the service itself).
    Service { path_info: String },
    /// A file inside an item's doc/.
    Static(PathBuf),
    /// Nothing is served here.
    NotFound,
}

/// Routes a request path (`raw`, still %-escaped as it came on the request line).
pub fn route(config: &Config, root: &Path, raw: &str) -> Route {
    let Some(path) = decode_path(raw) else {
        return Route::NotFound;
    };
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
    match path.strip_prefix(b"/col/") {
        Some(rest) => static_file(root, rest).map_or(Route::NotFound, Route::Static),
        None => Route::NotFound,
    }
}

/// `<rep>/doc/<file>` (bytes) → the file, when it is inside that item's doc/.
fn static_file(root: &Path, rest: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut parts = rest.splitn(6, |&b| b == b'/');
    let rep: Vec<&[u8]> = parts.by_ref().take(4).collect();
    if rep.len() != 4 || parts.next()? != b"doc" {
        return None;
    }
    let file = parts.next()?;
    let rep_text = std::str::from_utf8(&rep.join(&b'/')).ok()?.to_string();
    // The directory must be spelled as on disk: the grammar check keeps `..` and the like out.
    Rep::parse(&rep_text).ok()?;
    let doc = root.join("col").join(&rep_text).join("doc");
    let col = std::fs::canonicalize(root.join("col")).ok()?;
    if !std::fs::canonicalize(&doc).ok()?.starts_with(&col) {
        return None;
    }
    let stored = file_inside(&doc, file)?;
    Some(doc.join(std::ffi::OsStr::from_bytes(&stored)))
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

/// The Content-Type of a static file, by its extension.
pub fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("pdf") => "application/pdf",
        Some("html" | "htm") => "text/html",
        Some("xml") => "application/xml",
        Some("txt" | "bib" | "tex" | "csv" | "md") => "text/plain",
        Some("json") => "application/json",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("tif" | "tiff") => "image/tiff",
        Some("zip") => "application/zip",
        Some("gz" | "tgz") => "application/gzip",
        Some("ps") => "application/postscript",
        Some("doc") => "application/msword",
        Some("odt") => "application/vnd.oasis.opendocument.text",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Config, PathBuf) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-archive");
        (Config::load(&root).unwrap(), root)
    }

    #[test]
    fn the_service_and_its_sub_paths() {
        let (c, root) = sample();
        assert_eq!(
            route(&c, &root, "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17"),
            Route::Service {
                path_info: String::new()
            }
        );
        assert_eq!(
            route(&c, &root, "/sid.inpe.br/mtc-m18%4080/2008/03.17.15.17/filelist/iconet.com.br/banon/2009/09.09.22.01"),
            Route::Service { path_info: "/filelist/iconet.com.br/banon/2009/09.09.22.01".into() }
        );
        assert_eq!(
            route(&c, &root, "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17x"),
            Route::NotFound
        );
    }

    #[test]
    fn static_files_only_inside_doc() {
        let (c, root) = sample();
        let latin1 = route(
            &c,
            &root,
            "/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf",
        );
        assert!(
            matches!(latin1, Route::Static(p) if p.ends_with("doc/Relat\u{fffd}rio Final.pdf") || p.is_file())
        );
        for bad in [
            "/col/iconet.com.br/banon/2009/09.09.22.01/item.toml",
            "/col/iconet.com.br/banon/2009/09.09.22.01/doc/",
            "/col/iconet.com.br/banon/2009/09.09.22.01/doc/../item.toml",
            "/col/iconet.com.br/banon/2009/09.09.22.01/doc/%2e%2e/item.toml",
            "/col/iconet.com.br/banon/2009/../../../archive.toml",
            "/col/",
            "/archive.toml",
            "/var/urlkey.secret",
            "/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib%00",
            "/col/iconet.com.br/banon/2009/09.09.22.01/doc/%zz",
        ] {
            assert_eq!(route(&c, &root, bad), Route::NotFound, "{bad}");
        }
        assert!(matches!(
            route(
                &c,
                &root,
                "/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib"
            ),
            Route::Static(_)
        ));
    }
}
