//! The file-list page (GetFileList, resolution standard §9.2 CRIARPARURL): an HTML list
//! of the files of an item's doc/ that may be served, each linked to its URL; at most
//! [`MAX_FILES`], with a note when there are more. Above it, the item's persistent URL
//! (the one to cite: [`crate::config::Config::persistent_url`]).

use std::net::IpAddr;

use crate::ibi::Ibi;
use crate::item::{Access, Item};
use crate::markup::escape_html;
use crate::service::{Answer, Archive};

/// Most files a page lists.
pub const MAX_FILES: usize = 1000;

/// The page for the item named `ibi` (as it appears in the page's URL,
/// `layout::split_file_list_path`), for a browser at `client`, with the lines for the
/// log its lookup wrote.
pub fn page(archive: &Archive, ibi: &[u8], client: Option<IpAddr>) -> Answer {
    let Some(parsed) = std::str::from_utf8(ibi)
        .ok()
        .and_then(|ibi| Ibi::parse(ibi).ok())
    else {
        return html(404, "Not found", "<p>This is not the IBI of an item.</p>");
    };
    let found = archive.store().find(&parsed);
    let mut answer = match &found.item {
        Some(item) => item_page(archive, item, client),
        None => html(
            404,
            "Not found",
            "<p>This Archive holds no item with this IBI.</p>",
        ),
    };
    answer.log = found.log.into_lines();
    answer
}

/// The page of an item found.
fn item_page(archive: &Archive, item: &Item, client: Option<IpAddr>) -> Answer {
    let title = format!("Files of {}", escape_html(item.rep.as_str()));
    // How the item is cited, whatever the page says of its files.
    let persistent = archive
        .config()
        .persistent_url(item.ibip.as_ref().map_or(item.rep.as_str(), |p| p.as_str()));
    let cite = format!(
        "<p>Persistent URL: <a href=\"{url}\">{url}</a></p>\n",
        url = escape_html(&persistent)
    );
    match item.access(archive.config(), client) {
        Access::Granted => {}
        Access::Deleted => {
            return html(
                410,
                &title,
                &format!("{cite}<p>This item has been deleted.</p>"),
            )
        }
        // Footnote 2 of §9.2: the page must say that the list may not be shown.
        Access::Restricted => {
            return html(
                403,
                &title,
                &format!("{cite}<p>Access to the list of files of this item is not permitted.</p>"),
            )
        }
    }
    let listing = item
        .handle
        .as_ref()
        .map(|dir| dir.list_doc(MAX_FILES))
        .unwrap_or_default();
    let mut rows = String::new();
    for (rel, size) in &listing.files {
        let Some(url) = archive.doc_url(item, rel) else {
            continue;
        };
        let url = String::from_utf8_lossy(&url).into_owned();
        rows.push_str(&format!(
            "<li><a href=\"{}\">{}</a> ({size} bytes)</li>\n",
            escape_html(&url),
            escape_html(&display_name(rel))
        ));
    }
    let mut body = if rows.is_empty() {
        format!("{cite}<p>This item has no files.</p>")
    } else {
        format!("{cite}<ul>\n{rows}</ul>")
    };
    if !listing.complete {
        body.push_str(&format!(
            "\n<p>This item holds more files than this page lists ({} are shown).</p>",
            listing.files.len()
        ));
    }
    html(200, &title, &body)
}

/// A file name for people: UTF-8 as it is, anything else read as Latin-1.
fn display_name(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

fn html(status: u16, title: &str, body: &str) -> Answer {
    let text = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\n<body><h1>{title}</h1>\n{body}\n</body></html>\n"
    );
    Answer {
        content_type: "text/html; charset=utf-8",
        ..Answer::text(status, text)
    }
}
