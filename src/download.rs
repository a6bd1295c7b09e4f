//! Files answered as a web server answers them, the same from the CGI and from `serve`
//! (RFC 9110): the validators (a strong `ETag`, `Last-Modified`), conditional GET
//! (§13: `If-Match`, else `If-Unmodified-Since` → 412; `If-None-Match`, else
//! `If-Modified-Since` → 304), one byte range (§14: `Range`,
//! `If-Range` → 206, or 416 when it lies past the end), HEAD with the headers of GET.
//!
//! Choices where RFC 9110 leaves one:
//! - A `Range` of several ranges is answered with the whole file (200): a server may
//!   ignore `Range` (§14.2), and a multipart/byteranges body is not worth its cost here.
//! - A `Range` that is not `bytes=…` or does not parse, or whose last position is before
//!   its first, is ignored (200).
//! - A suffix range of an empty file is answered with the (empty) file, 200: no
//!   `Content-Range` can name a part of nothing.
//! - `Range` applies to GET only (§14.2): HEAD answers the headers of the whole file.
//! - An `If-Range` date matches when it is the `Last-Modified` instant (in any of the
//!   three HTTP-date forms); an `If-Range` entity tag only when it is the strong ETag.
//! - An `If-Match` or `If-None-Match` member that does not parse matches nothing (and the
//!   date condition beside it is still not looked at, §13.1.3, §13.1.4); an
//!   `If-Modified-Since` or `If-Unmodified-Since` that does not parse is ignored.
//! - A modification time in the future is sent (and compared) as the time of the answer.
//! - An HTTP-date before 1970 is read as one (negative seconds): `If-Unmodified-Since`
//!   of 1969 fails for any file modified since (412), as any other date would.
//!
//! [`answer`] is called on [`routes::file`](crate::routes::file)'s reply; the service
//! (`urlRequest` and the other subjects) never comes here.

use crate::http::{Answer, Headers, Part, Reply, Request, StaticFile};
use crate::layout::Stamp;
use ::ibi::time::parse_http_date;

/// What a request makes of a file it may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Send(Part),
    /// Its one range starts past the end: 416, `Content-Range: bytes */LEN`.
    Unsatisfiable,
    /// `If-Match` or `If-Unmodified-Since` does not hold: 412.
    PreconditionFailed,
}

/// The strong entity tag (RFC 9110 §8.8.3) of a file's bytes, from its fstat: inode,
/// size, modification and change times to the nanosecond, in hex. Whatever rewrites the
/// file changes one of them (setting the modification time back does not set the change
/// time back); a change of owner or mode changes it too, which costs one download more.
pub fn etag(stamp: &Stamp) -> String {
    format!(
        "\"{:x}-{:x}-{:x}-{:x}\"",
        stamp.inode, stamp.len, stamp.modified_ns, stamp.changed_ns
    )
}

/// `reply` ([`routes::file`](crate::routes::file)'s) with what `req`'s conditions and
/// `Range` make of a file at POSIX second `now`: all of it, a part, 304, or a 416 page.
/// A modification time later than `now` is taken as `now` (§8.8.2.1: `Last-Modified`
/// is never later than `Date`), for the answer's `Last-Modified` and its conditions.
pub fn answer(reply: Reply, req: &Request<'_>, now: i64) -> Reply {
    let Reply::File(mut f) = reply else {
        return reply;
    };
    f.modified = f.modified.min(now);
    let mut page = match decide(req.method, req.headers, &f.etag, f.modified, f.len) {
        Decision::Send(part) => {
            f.part = part;
            return Reply::File(f);
        }
        Decision::Unsatisfiable => unsatisfiable(&f),
        Decision::PreconditionFailed => Answer::text(412, "precondition failed\n"),
    };
    // Told only to a client that may have the file: as private as the file.
    if f.private {
        page.headers
            .extend(crate::http::PRIVATE.map(|(n, v)| (n.to_string(), v.to_string())));
    }
    Reply::Page(page)
}

/// The 416 answer for `f`.
fn unsatisfiable(f: &StaticFile) -> Answer {
    let mut a = Answer::text(416, "range not satisfiable\n");
    a.headers
        .push(("Content-Range".into(), format!("bytes */{}", f.len)));
    a
}

/// What a `method` request with `headers` gets of a file of `len` bytes whose ETag is
/// `etag` and whose last modification was at POSIX second `modified`, in the order of
/// RFC 9110 §13.2.2 (`If-Match` and `If-Unmodified-Since` hold for GET and HEAD too: a
/// client may send them with `Range` to get a part of its version or nothing).
pub fn decide(method: &str, headers: &Headers, etag: &str, modified: i64, len: u64) -> Decision {
    // Step 1, else step 2.
    if let Some(field) = &headers.if_match {
        if !list_matches(field, etag, false) {
            return Decision::PreconditionFailed;
        }
    } else if let Some(since) = headers
        .if_unmodified_since
        .as_deref()
        .and_then(parse_http_date)
    {
        if modified > since {
            return Decision::PreconditionFailed;
        }
    }
    // Step 3, else step 4.
    if let Some(field) = &headers.if_none_match {
        if list_matches(field, etag, true) {
            return Decision::Send(Part::NotModified);
        }
    } else if let Some(since) = headers
        .if_modified_since
        .as_deref()
        .and_then(parse_http_date)
    {
        if modified <= since {
            return Decision::Send(Part::NotModified);
        }
    }
    // Step 5.
    let whole = Decision::Send(Part::Whole);
    if method != "GET" {
        return whole;
    }
    let Some(spec) = headers.range.as_deref().and_then(parse_range) else {
        return whole;
    };
    if let Some(validator) = &headers.if_range {
        if !if_range_holds(validator, etag, modified) {
            return whole;
        }
    }
    match spec {
        Spec::Several => whole,
        Spec::From(first, last) => {
            if first >= len {
                return Decision::Unsatisfiable;
            }
            let end = last.map_or(len - 1, |l| l.min(len - 1));
            Decision::Send(Part::Range {
                start: first,
                len: end - first + 1,
            })
        }
        Spec::Suffix(0) => Decision::Unsatisfiable,
        Spec::Suffix(_) if len == 0 => whole,
        Spec::Suffix(n) => {
            let start = len.saturating_sub(n);
            Decision::Send(Part::Range {
                start,
                len: len - start,
            })
        }
    }
}

/// Whether an `If-None-Match` (`weak` comparison, §8.8.3.2) or `If-Match` field (strong
/// comparison: a weak tag never matches) names `etag`, or is `*` (the file exists). A
/// member that does not parse ends the list.
fn list_matches(field: &str, etag: &str, weak: bool) -> bool {
    let field = field.trim();
    if field == "*" {
        return true;
    }
    let opaque = etag.trim_start_matches("W/");
    let mut rest = field;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return false;
        }
        let tag = rest.strip_prefix("W/").unwrap_or(rest);
        let is_weak = tag.len() < rest.len();
        let Some(after_quote) = tag.strip_prefix('"') else {
            return false;
        };
        let Some(end) = after_quote.find('"') else {
            return false;
        };
        if &tag[..end + 2] == opaque && (weak || !is_weak) {
            return true;
        }
        rest = &after_quote[end + 1..];
    }
}

/// Whether `If-Range` holds (§13.1.5): an entity tag that is `etag` (strong comparison:
/// a weak tag never holds), or an HTTP-date that is the `Last-Modified` instant.
fn if_range_holds(validator: &str, etag: &str, modified: i64) -> bool {
    let validator = validator.trim();
    if validator.starts_with('"') || validator.starts_with("W/") {
        return validator == etag;
    }
    parse_http_date(validator) == Some(modified)
}

/// A `Range` field's ranges, as far as they are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    /// `first-[last]`.
    From(u64, Option<u64>),
    /// `-n`: the last `n` bytes.
    Suffix(u64),
    /// More than one range.
    Several,
}

/// The ranges of a `Range` field (§14.1.2: `bytes=` then a comma-separated list, the
/// unit in any case); `None` when it is not answered: another unit, or malformed.
fn parse_range(field: &str) -> Option<Spec> {
    let (unit, set) = field.trim().split_once('=')?;
    if !unit.trim().eq_ignore_ascii_case("bytes") {
        return None;
    }
    let mut specs = set
        .split(',')
        .map(|s| s.trim_matches([' ', '\t']))
        .filter(|s| !s.is_empty())
        .map(parse_spec);
    let first = specs.next()??;
    let mut several = false;
    for spec in specs {
        spec?;
        several = true;
    }
    Some(if several { Spec::Several } else { first })
}

/// One range-spec: `first-last`, `first-` or `-suffix`.
fn parse_spec(s: &str) -> Option<Spec> {
    let (first, last) = s.split_once('-')?;
    // 1*DIGIT, of any length: one a u64 cannot hold is past the end of any file, and
    // is taken as u64::MAX.
    let number = |t: &str| {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse::<u64>().unwrap_or(u64::MAX))
    };
    if first.is_empty() {
        return number(last).map(Spec::Suffix);
    }
    let first = number(first)?;
    if last.is_empty() {
        return Some(Spec::From(first, None));
    }
    let last = number(last)?;
    (last >= first).then_some(Spec::From(first, Some(last)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9110's example date, `Sun, 06 Nov 1994 08:49:37 GMT`.
    const T: i64 = 784_111_777;
    const TAG: &str = "\"1f-400-2-3\"";

    fn with(fields: &[(&str, &str)]) -> Headers {
        let mut h = Headers::default();
        for (name, value) in fields {
            h.add(name, value);
        }
        h
    }

    fn get(fields: &[(&str, &str)], len: u64) -> Decision {
        decide("GET", &with(fields), TAG, T, len)
    }

    fn range(start: u64, len: u64) -> Decision {
        Decision::Send(Part::Range { start, len })
    }

    const WHOLE: Decision = Decision::Send(Part::Whole);
    const NOT_MODIFIED: Decision = Decision::Send(Part::NotModified);

    #[test]
    fn the_etag_is_strong_and_in_hex() {
        let stamp = Stamp {
            inode: 255,
            len: 1024,
            modified_ns: 1_000_000_001,
            changed_ns: 16,
        };
        assert_eq!(etag(&stamp), "\"ff-400-3b9aca01-10\"");
    }

    #[test]
    fn no_condition_and_no_range_is_the_whole_file() {
        assert_eq!(get(&[], 1024), WHOLE);
        assert_eq!(decide("HEAD", &with(&[]), TAG, T, 1024), WHOLE);
    }

    #[test]
    fn one_range_at_the_edges() {
        let r = |spec: &str| get(&[("Range", spec)], 1000);
        assert_eq!(r("bytes=0-0"), range(0, 1));
        assert_eq!(r("bytes=0-999"), range(0, 1000));
        assert_eq!(r("bytes=100-199"), range(100, 100));
        assert_eq!(r("bytes=999-999"), range(999, 1));
        // A last position past the end stops at the end.
        assert_eq!(r("bytes=990-5000"), range(990, 10));
        assert_eq!(r("bytes=500-"), range(500, 500));
        assert_eq!(r("bytes=0-"), range(0, 1000));
        assert_eq!(r("bytes=999-"), range(999, 1));
        assert_eq!(r("bytes=-1"), range(999, 1));
        assert_eq!(r("bytes=-500"), range(500, 500));
        // A suffix longer than the file is the whole file, as a part.
        assert_eq!(r("bytes=-1000"), range(0, 1000));
        assert_eq!(r("bytes=-5000"), range(0, 1000));
        // The unit in any case, blanks around the list's members.
        assert_eq!(r("Bytes=1-2"), range(1, 2));
        assert_eq!(r("bytes= 1-2 "), range(1, 2));
        assert_eq!(r("bytes=1-2,"), range(1, 2));
    }

    #[test]
    fn a_range_past_the_end_is_unsatisfiable() {
        let r = |spec: &str| get(&[("Range", spec)], 1000);
        assert_eq!(r("bytes=1000-"), Decision::Unsatisfiable);
        assert_eq!(r("bytes=1000-1000"), Decision::Unsatisfiable);
        assert_eq!(r("bytes=5000-6000"), Decision::Unsatisfiable);
        assert_eq!(r("bytes=-0"), Decision::Unsatisfiable);
    }

    /// Positions of any number of digits are valid (§14.1.1): one past what a u64 holds
    /// is past the end of any file, a suffix that long is all of it.
    #[test]
    fn huge_positions() {
        let r = |spec: &str| get(&[("Range", spec)], 1000);
        assert_eq!(r("bytes=18446744073709551615-"), Decision::Unsatisfiable);
        assert_eq!(r("bytes=18446744073709551616-"), Decision::Unsatisfiable);
        assert_eq!(
            r("bytes=99999999999999999999999999999-99999999999999999999999999999"),
            Decision::Unsatisfiable
        );
        assert_eq!(r("bytes=0-18446744073709551616"), range(0, 1000));
        assert_eq!(r("bytes=-18446744073709551616"), range(0, 1000));
        assert_eq!(r("bytes=-18446744073709551615"), range(0, 1000));
    }

    #[test]
    fn an_empty_file() {
        let r = |spec: &str| get(&[("Range", spec)], 0);
        assert_eq!(r("bytes=0-"), Decision::Unsatisfiable);
        assert_eq!(r("bytes=0-0"), Decision::Unsatisfiable);
        assert_eq!(r("bytes=-0"), Decision::Unsatisfiable);
        assert_eq!(r("bytes=-5"), WHOLE);
        assert_eq!(get(&[], 0), WHOLE);
    }

    #[test]
    fn malformed_ranges_and_other_units_are_ignored() {
        for spec in [
            "bytes=",
            "bytes=-",
            "bytes=a-b",
            "bytes=5-4",
            "bytes=1-2-3",
            "bytes=+1-2",
            "bytes=1 -2",
            "bytes=1-2,x",
            "bytes 1-2",
            "items=0-1",
            "",
        ] {
            assert_eq!(get(&[("Range", spec)], 1000), WHOLE, "{spec:?}");
        }
    }

    #[test]
    fn several_ranges_are_the_whole_file() {
        for spec in ["bytes=0-0,-1", "bytes=0-1,2-3", "bytes=5000-,6000-"] {
            assert_eq!(get(&[("Range", spec)], 1000), WHOLE, "{spec:?}");
        }
        // Two Range fields are one list of two ranges.
        assert_eq!(
            get(&[("Range", "bytes=0-1"), ("Range", "bytes=2-3")], 1000),
            WHOLE
        );
    }

    #[test]
    fn range_is_for_get_only() {
        let h = with(&[("Range", "bytes=0-9")]);
        assert_eq!(decide("HEAD", &h, TAG, T, 1000), WHOLE);
        let h = with(&[("Range", "bytes=5000-")]);
        assert_eq!(decide("HEAD", &h, TAG, T, 1000), WHOLE);
    }

    #[test]
    fn if_range_with_an_entity_tag_compares_strongly() {
        let r = |if_range: &str| get(&[("Range", "bytes=10-19"), ("If-Range", if_range)], 100);
        assert_eq!(r(TAG), range(10, 10));
        assert_eq!(r("\"other\""), WHOLE);
        // A weak tag never matches, not even its own.
        assert_eq!(r("W/\"1f-400-2-3\""), WHOLE);
        assert_eq!(r("garbage"), WHOLE);
        // Without Range, If-Range is ignored.
        assert_eq!(get(&[("If-Range", "\"other\"")], 100), WHOLE);
        // A mismatch does not make a range past the end a 416: the whole file.
        assert_eq!(
            get(&[("Range", "bytes=500-"), ("If-Range", "\"other\"")], 100),
            WHOLE
        );
    }

    #[test]
    fn if_range_with_a_date_must_be_last_modified() {
        let r = |if_range: &str| get(&[("Range", "bytes=10-19"), ("If-Range", if_range)], 100);
        assert_eq!(r("Sun, 06 Nov 1994 08:49:37 GMT"), range(10, 10));
        assert_eq!(r("Sunday, 06-Nov-94 08:49:37 GMT"), range(10, 10));
        assert_eq!(r("Sun Nov  6 08:49:37 1994"), range(10, 10));
        // Earlier or later: the file changed since, or the date is not its own.
        assert_eq!(r("Sun, 06 Nov 1994 08:49:36 GMT"), WHOLE);
        assert_eq!(r("Sun, 06 Nov 1994 08:49:38 GMT"), WHOLE);
    }

    #[test]
    fn if_none_match_compares_weakly() {
        let r = |field: &str| get(&[("If-None-Match", field)], 100);
        assert_eq!(r(TAG), NOT_MODIFIED);
        assert_eq!(r("W/\"1f-400-2-3\""), NOT_MODIFIED);
        assert_eq!(r("\"a\", \"1f-400-2-3\""), NOT_MODIFIED);
        assert_eq!(r("\"a\",W/\"1f-400-2-3\""), NOT_MODIFIED);
        assert_eq!(r("*"), NOT_MODIFIED);
        assert_eq!(r(" * "), NOT_MODIFIED);
        // A comma inside a tag is part of it.
        assert_eq!(r("\"1f-400,2-3\""), WHOLE);
        assert_eq!(r("\"other\""), WHOLE);
        assert_eq!(r("\"1f-400-2-3"), WHOLE);
        assert_eq!(r("1f-400-2-3"), WHOLE);
        assert_eq!(r(""), WHOLE);
        // HEAD gets the same 304.
        let h = with(&[("If-None-Match", TAG)]);
        assert_eq!(decide("HEAD", &h, TAG, T, 100), NOT_MODIFIED);
    }

    #[test]
    fn if_modified_since() {
        let r = |field: &str| get(&[("If-Modified-Since", field)], 100);
        // Equal, or later: not modified since.
        assert_eq!(r("Sun, 06 Nov 1994 08:49:37 GMT"), NOT_MODIFIED);
        assert_eq!(r("Sun, 06 Nov 1994 08:49:38 GMT"), NOT_MODIFIED);
        assert_eq!(r("Sunday, 06-Nov-94 08:49:37 GMT"), NOT_MODIFIED);
        assert_eq!(r("Sun Nov  6 08:49:37 1994"), NOT_MODIFIED);
        // Earlier: modified since.
        assert_eq!(r("Sun, 06 Nov 1994 08:49:36 GMT"), WHOLE);
        // Not an HTTP-date, or two of them: ignored.
        assert_eq!(r("yesterday"), WHOLE);
        assert_eq!(r("1994-11-06T08:49:37Z"), WHOLE);
        assert_eq!(
            get(
                &[
                    ("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"),
                    ("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")
                ],
                100
            ),
            WHOLE
        );
        let h = with(&[("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")]);
        assert_eq!(decide("HEAD", &h, TAG, T, 100), NOT_MODIFIED);
    }

    #[test]
    fn if_none_match_takes_precedence_over_if_modified_since() {
        let current = "Sun, 06 Nov 1994 08:49:37 GMT";
        // A tag that does not match: the date is not looked at.
        assert_eq!(
            get(
                &[
                    ("If-None-Match", "\"other\""),
                    ("If-Modified-Since", current)
                ],
                100
            ),
            WHOLE
        );
        assert_eq!(
            get(
                &[
                    ("If-None-Match", TAG),
                    ("If-Modified-Since", "Sun, 06 Nov 1994 08:49:36 GMT")
                ],
                100
            ),
            NOT_MODIFIED
        );
    }

    /// If-Match and If-Unmodified-Since hold for GET and HEAD too (§13.1.1, §13.1.4):
    /// a client that asks for a part of the version it holds gets 412, not a part of
    /// another version.
    #[test]
    fn if_match_compares_strongly() {
        let r = |field: &str| get(&[("If-Match", field), ("Range", "bytes=10-19")], 100);
        assert_eq!(r(TAG), range(10, 10));
        assert_eq!(r("\"a\", \"1f-400-2-3\""), range(10, 10));
        assert_eq!(r("*"), range(10, 10));
        assert_eq!(r("\"other\""), Decision::PreconditionFailed);
        // A weak tag never matches, not even its own.
        assert_eq!(r("W/\"1f-400-2-3\""), Decision::PreconditionFailed);
        assert_eq!(r("garbage"), Decision::PreconditionFailed);
        let h = with(&[("If-Match", "\"other\"")]);
        assert_eq!(
            decide("HEAD", &h, TAG, T, 100),
            Decision::PreconditionFailed
        );
        // It comes before If-None-Match and the range.
        assert_eq!(
            get(&[("If-Match", "\"other\""), ("If-None-Match", TAG)], 100),
            Decision::PreconditionFailed
        );
        assert_eq!(
            get(&[("If-Match", "\"other\""), ("Range", "bytes=500-")], 100),
            Decision::PreconditionFailed
        );
    }

    #[test]
    fn if_unmodified_since() {
        let r = |field: &str| get(&[("If-Unmodified-Since", field)], 100);
        assert_eq!(r("Sun, 06 Nov 1994 08:49:37 GMT"), WHOLE);
        assert_eq!(r("Sun, 06 Nov 1994 08:49:38 GMT"), WHOLE);
        assert_eq!(
            r("Sun, 06 Nov 1994 08:49:36 GMT"),
            Decision::PreconditionFailed
        );
        // Not an HTTP-date: ignored.
        assert_eq!(r("yesterday"), WHOLE);
        // A date before 1970 is a date: the file was modified since (it was ignored, and
        // the whole file sent, when dates were read as unsigned seconds since 1970).
        for before_1970 in [
            "Thu, 01 Jan 1970 00:00:00 GMT",
            "Wed, 31 Dec 1969 23:59:59 GMT",
            "Sun, 06 Nov 1904 08:49:37 GMT",
            "Sat, 01 Jan 0000 00:00:00 GMT",
            "Sun Nov  6 08:49:37 1904",
        ] {
            assert_eq!(
                r(before_1970),
                Decision::PreconditionFailed,
                "{before_1970}"
            );
        }
        // If-Match present: the date is not looked at.
        assert_eq!(
            get(
                &[
                    ("If-Match", TAG),
                    ("If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:36 GMT")
                ],
                100
            ),
            WHOLE
        );
    }

    #[test]
    fn conditions_come_before_the_range() {
        assert_eq!(
            get(&[("If-None-Match", TAG), ("Range", "bytes=0-9")], 100),
            NOT_MODIFIED
        );
        assert_eq!(
            get(&[("If-None-Match", TAG), ("Range", "bytes=500-")], 100),
            NOT_MODIFIED
        );
        assert_eq!(
            get(
                &[("If-None-Match", "\"other\""), ("Range", "bytes=0-9")],
                100
            ),
            range(0, 10)
        );
    }
}
