//! Linksets (RFC 9264, Signposting level 2): the resolver's redirect to an item and its
//! tombstone link the item's linkset, which the item's landing page serves
//! (`?format=linkset-json`, `?format=linkset`, as an `Accept` of
//! `application/linkset+json` or `application/linkset` asks). The link of a redirect is
//! itself a persistent URL, `<publicurl>/<IBI>?format=linkset-json`, which the resolver
//! negotiates to the item's landing page (`GetFileList`) and sends the `format` on to, as
//! it sends any pair of the item's own; a tombstone's is its landing page at the Archive
//! that keeps it.

use ibi::escape::link_target;
use ibi::negotiate::LinksetFormat;
use ibi::persistent::PersistentUrl;
use ibi::Ibi;

use crate::resolve::persistent_url;

/// The landing page of the item `ibi` at the Archive at `address` whose service IBI is
/// `service` (`<baseurl>/<archiveserviceibi>/filelist/<IBI>`, where an Archive's service
/// is `http://<archiveaddress>/<archiveserviceibi>`).
pub fn landing_page(address: &str, service: &str, ibi: &str) -> String {
    let mut url = format!("http://{address}/{service}");
    ibi::persistent::push_file_list_path(&mut url, ibi);
    url
}

/// The `Link` values (RFC 8288) to the linkset of `url`'s item, through the resolver at
/// `base`: the persistent URL of the item with the format asked.
pub fn of_item(base: &str, url: &PersistentUrl) -> Vec<String> {
    let item = PersistentUrl::of(url.ibi().clone());
    links(&format!("{}?", persistent_url(base, &item)))
}

/// The `Link` values to the linkset of the tombstone `ibi` kept at `address`
/// (`service`): its landing page there, with the format asked.
pub fn of_tombstone(address: &str, service: &str, ibi: &Ibi) -> Vec<String> {
    links(&format!(
        "{}?",
        landing_page(address, service, ibi.as_str())
    ))
}

/// The links to `target` (a URL ending its path with `?`, to which `format=…` is added)
/// in each format, each target %-escaped where RFC 8288's `<…>` may not hold a
/// character.
fn links(target: &str) -> Vec<String> {
    LinksetFormat::ALL
        .iter()
        .map(|f| {
            format!(
                "<{}>; rel=\"linkset\"; type=\"{}\"",
                link_target(&format!("{target}format={}", f.name())),
                f.media_type()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_s_linkset_is_its_landing_page_s_through_the_resolver() {
        let url = PersistentUrl::parse("/8JMKD3MGP8W/35MME4E/doc/a.pdf", Some("x=1")).unwrap();
        assert_eq!(
            of_item("http://r.example", &url),
            [
                "<http://r.example/8JMKD3MGP8W/35MME4E?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\"",
                "<http://r.example/8JMKD3MGP8W/35MME4E?format=linkset>; rel=\"linkset\"; type=\"application/linkset\"",
            ]
        );
    }

    #[test]
    fn a_tombstone_s_linkset_is_its_landing_page_s_at_its_archive() {
        let ibi = Ibi::parse("a.b/c/2020/01.02.03.04").unwrap();
        assert_eq!(
            of_tombstone("127.0.0.1:8080", "a.b/c/2019/01.01.01.01", &ibi),
            [
                "<http://127.0.0.1:8080/a.b/c/2019/01.01.01.01/filelist/a.b/c/2020/01.02.03.04?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\"",
                "<http://127.0.0.1:8080/a.b/c/2019/01.01.01.01/filelist/a.b/c/2020/01.02.03.04?format=linkset>; rel=\"linkset\"; type=\"application/linkset\"",
            ]
        );
    }
}
