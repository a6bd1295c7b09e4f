//! Routing of one request: the checks every request passes (method, a resolver asking,
//! the length of its target), then one handler per route — the resolver service at
//! `/<serviceibi>` ([`crate::service`]), the home page at `/`, `/metrics`, `/healthz`, nothing at
//! `/favicon.ico` and `/robots.txt`, an Archive's request refused, and resolution on
//! every other path. Each handler returns an [`Answer`]: the response and the note of the
//! request's log line, one line per request, the registration key never in it.

use ibi::text::cut;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Body as _;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use ibi::escape::{link_target, uri_reference};
use ibi::negotiate::{negotiate, Given, Wanted, JSON_LD};
use ibi::pairs::{PairList, Value};
use ibi::persistent::PersistentUrl;
use ibi::query::Query;
use ibi::relation::Lang;
use ibi::Ibi;

use crate::clients::{ClientBook, Refused};
use crate::config::Config;
use crate::editions;
use crate::labels::{Limit, Resolution};
use crate::lang::{self, PageLang};
use crate::linkset;
use crate::log::say;
use crate::pages;
use crate::resolve::{kept_pairs, persistent_url, Budget, Outcome, Reader, Trace};
use crate::service;
use crate::state::AppState;
use crate::tombstone::Tombstone;

/// The body of every response: the whole of it at once.
pub type Body = Full<Bytes>;

/// The longest path and query read, in bytes.
pub const MAX_TARGET: usize = 8 * 1024;
/// A whole resolution ends within this time.
pub const MAX_RESOLUTION: Duration = Duration::from_secs(60);
/// The longest request shown in a log line (escaped), so that its status and note fit.
pub const MAX_SHOWN: usize = 1024;

/// A handler's answer: the response, and a note for the request's log line.
pub struct Answer {
    pub response: Response<Body>,
    pub note: String,
}

impl Answer {
    fn new(response: Response<Body>, note: impl Into<String>) -> Answer {
        Answer {
            response,
            note: note.into(),
        }
    }

    fn status(mut self, status: StatusCode) -> Answer {
        *self.response.status_mut() = status;
        self
    }

    fn header(mut self, name: HeaderName, value: HeaderValue) -> Answer {
        self.response.headers_mut().insert(name, value);
        self
    }
}

/// Answers one request from `peer` and writes its log line.
pub async fn handle(
    state: Arc<AppState>,
    peer: SocketAddr,
    req: Request<hyper::body::Incoming>,
) -> Response<Body> {
    let (parts, _body) = req.into_parts();
    let ips = client_ips(&state.config, peer.ip(), &parts.headers);
    // Logged when the client goes away before the answer: hyper drops this future then.
    let mut line = LogLine {
        state: state.clone(),
        client: ips.client,
        method: parts.method.clone(),
        shown: shown_request(parts.uri.path(), parts.uri.query()),
        start: Instant::now(),
        answered: false,
    };
    let answer = route(&state, &Received::of(&parts, &ips)).await;
    line.answered = true;
    // A balancer's health checks, every few seconds for as long as it runs, are not
    // events: a check answered 200 has no log line.
    if !(parts.uri.path() == "/healthz" && answer.response.status() == StatusCode::OK) {
        line.write(answer.response.status().as_u16(), &answer.note);
    }
    framed(&parts.method, answer.response)
}

/// `response` with its `Content-Length` (from the body's size, unless set), and without
/// its body for a `HEAD`.
fn framed(method: &Method, mut response: Response<Body>) -> Response<Body> {
    if !response.headers().contains_key(header::CONTENT_LENGTH) {
        if let Some(size) = response.body().size_hint().exact() {
            response
                .headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from(size));
        }
    }
    if method == Method::HEAD {
        *response.body_mut() = Body::default();
    }
    response
}

/// A request as the handlers read it.
struct Received<'a> {
    method: &'a Method,
    headers: &'a HeaderMap,
    path: &'a str,
    query: Option<&'a str>,
    /// The reader, then its proxies ([`client_ips`]).
    ips: &'a [IpAddr],
    /// The client as far as trusted proxies vouch for it ([`client_ips`]): what the
    /// per-client bounds and the networks that may see the metrics go by.
    client: IpAddr,
    /// The reader's `Accept-Language`, parsed.
    languages: Vec<Lang>,
    page_lang: PageLang,
}

impl<'a> Received<'a> {
    fn of(parts: &'a Parts, ips: &'a ClientIps) -> Received<'a> {
        let languages = lang::preferences(
            parts
                .headers
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok()),
        );
        Received {
            method: &parts.method,
            headers: &parts.headers,
            path: parts.uri.path(),
            query: parts.uri.query(),
            ips: &ips.list,
            client: ips.client,
            page_lang: PageLang::of(&languages),
            languages,
        }
    }

    /// The request as a page may show it, cut to [`MAX_SHOWN`].
    fn shown(&self) -> String {
        cut(&shown_request(self.path, self.query), MAX_SHOWN).into_owned()
    }
}

/// Where a request goes.
enum Route {
    /// Neither GET nor HEAD: 405.
    MethodNotAllowed,
    /// Sent by a resolver (its `Via`): 508.
    Loop,
    /// A path and query longer than [`MAX_TARGET`]: 414.
    TooLong { length: usize },
    /// The resolver service, `/<serviceibi>`.
    Service,
    /// The home page, `/`.
    Home,
    /// `/favicon.ico` and `/robots.txt`: 404, empty.
    Nothing,
    /// `/metrics`, for the networks that may see them.
    Metrics,
    /// `/healthz`, for balancers.
    Health,
    /// An Archive's request (a `servicesubject` pair) elsewhere: 400, never resolved.
    ArchiveRequest,
    /// `/timemap/link/<IBI>[path]`: the TimeMap of a persistent URL (Memento).
    TimeMap,
    /// `/timemap/html/<IBI>`: the list of an item's editions, for readers.
    Editions,
    /// Every other path: a persistent URL to resolve, with its query.
    Resolution { query: Option<Query> },
}

impl Route {
    fn of(state: &AppState, req: &Received) -> Route {
        if req.method != Method::GET && req.method != Method::HEAD {
            return Route::MethodNotAllowed;
        }
        if asked_by_a_resolver(req.headers) {
            return Route::Loop;
        }
        let length = req.path.len() + req.query.map_or(0, str::len);
        if length > MAX_TARGET {
            return Route::TooLong { length };
        }
        match req.path {
            p if p.strip_prefix('/') == Some(state.config.serviceibi.as_str()) => Route::Service,
            "/" => Route::Home,
            "/favicon.ico" | "/robots.txt" => Route::Nothing,
            "/metrics" => Route::Metrics,
            "/healthz" => Route::Health,
            p if under(p, editions::TIMEMAP_PATH) => Route::TimeMap,
            p if under(p, editions::EDITIONS_PATH) => Route::Editions,
            _ => {
                let query = req.query.and_then(|q| Query::parse(q.as_bytes()).ok());
                if query
                    .as_ref()
                    .is_some_and(|q| q.get("servicesubject").is_some())
                {
                    Route::ArchiveRequest
                } else {
                    Route::Resolution { query }
                }
            }
        }
    }
}

/// The answer to a request.
async fn route(state: &Arc<AppState>, req: &Received<'_>) -> Answer {
    match Route::of(state, req) {
        Route::MethodNotAllowed => method_not_allowed(),
        Route::Loop => loop_refused(state),
        Route::TooLong { length } => too_long(state, req, length),
        Route::Service => service(state, req).await,
        Route::Home => home(state, req),
        Route::Nothing => Answer::new(text(404, ""), ""),
        Route::Metrics => metrics(state, req),
        Route::Health => health(state, req),
        Route::ArchiveRequest => archive_request(state),
        Route::TimeMap => timemap(state, req).await,
        Route::Editions => editions_page(state, req).await,
        Route::Resolution { query } => resolution(state, req, query.as_ref()).await,
    }
}

fn method_not_allowed() -> Answer {
    Answer::new(text(405, "error {method not allowed}\r\n"), "")
        .header(header::ALLOW, HeaderValue::from_static("GET, HEAD"))
}

/// An Archive's address that leads back to a resolver: asking every Archive again would
/// loop.
fn loop_refused(state: &AppState) -> Answer {
    Answer::new(
        as_a_resolver(state, 508, "a resolver asked this resolver: loop"),
        "loop: asked by a resolver",
    )
}

fn too_long(state: &AppState, req: &Received, length: usize) -> Answer {
    let page = pages::too_long(req.page_lang, &req.shown(), length, MAX_TARGET);
    Answer::new(page_response(state, page), "too long").status(StatusCode::URI_TOO_LONG)
}

async fn service(state: &AppState, req: &Received<'_>) -> Answer {
    let answer = service::answer(state, req.query, req.client).await;
    let mut r = Answer::new(pair_list(answer.status, answer.pairs), answer.note);
    if let Some(seconds) = answer.retry_after {
        r = r.header(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    r
}

/// The home page, or, for `/?ibi=X` (its form), the way to X's persistent URL
/// ([`home_form`]).
fn home(state: &AppState, req: &Received) -> Answer {
    let typed = req
        .query
        .and_then(|q| Query::parse(q.as_bytes()).ok())
        .and_then(|q| {
            q.get("ibi")
                .map(|v| String::from_utf8_lossy(v).into_owned())
        });
    if let Some(typed) = typed {
        return home_form(state, req.page_lang, &typed);
    }
    let archives = state.archives();
    // An item this resolver has resolved, at an Archive still included.
    let example = state
        .engine
        .memory
        .latest(|archive| archives.iter().any(|a| a.key == archive));
    let page = pages::home(
        req.page_lang,
        &state.config.publicurl,
        &state.config.serviceibi,
        archives.len(),
        example.as_deref(),
    );
    Answer::new(page_response(state, page), "")
}

/// What the home page's form sends, `typed`: an IBI (and modifier, file path, query),
/// or a persistent URL of this resolver (`publicurl/…`), spaces around it ignored. A
/// persistent URL path answers 303 to the persistent URL on `publicurl` (never
/// elsewhere), its query as typed; anything else, the 400 page with the form again.
fn home_form(state: &AppState, lang: PageLang, typed: &str) -> Answer {
    let typed = typed.trim();
    let refused = |refusal: Option<&ibi::persistent::Refusal>| {
        Answer::new(
            page_response(state, pages::form_refused(lang, typed, refusal)),
            "the home page's form: not a persistent URL",
        )
    };
    if typed.is_empty() {
        return refused(None);
    }
    let config = &state.config;
    let path = [&config.publicurl, &config.publicurl_with_port]
        .iter()
        .find_map(|base| {
            typed
                .get(..base.len())
                .filter(|start| start.eq_ignore_ascii_case(base))
                .and_then(|_| typed[base.len()..].strip_prefix('/'))
        })
        .unwrap_or(typed);
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    let url = match PersistentUrl::parse(&format!("/{path}"), query) {
        Ok(url) => url,
        Err(e) => return refused(Some(&e.refusal)),
    };
    // The persistent URL on publicurl with its whole query, as if typed in the address
    // bar (`noredirect`, the item's own pairs: `persistent_url` would keep only the
    // resolver's); what a Location may not hold as it is (spaces and controls in the
    // query typed, say) percent-encoded.
    let location = uri_reference(&format!("{}{url}", config.publicurl));
    let Ok(value) = HeaderValue::from_str(&location) else {
        return refused(None);
    };
    Answer::new(
        page_response(state, pages::see_other(lang, &location)),
        "the home page's form",
    )
    .header(header::LOCATION, value)
}

fn metrics(state: &AppState, req: &Received) -> Answer {
    if !state.config.may_see_metrics(req.client) {
        return Answer::new(text(404, ""), "metrics refused");
    }
    let r = Response::new(Body::from(state.engine.metrics.render()));
    Answer::new(r, "").header(
        header::CONTENT_TYPE,
        HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
    )
}

/// Whether this resolver can resolve, for a balancer: `200` and `ready…` when the
/// registry answered its last read, and when it did not either, as resolutions go on
/// with the included Archives and the memory held. What the registry's state is, and
/// why it does not answer, only to those who run the resolver ([`may_see_reason`]):
/// the reason is the database driver's text, which may name the database's host, port,
/// user and database; everyone else gets the bare `ready` a balancer looks for.
fn health(state: &AppState, req: &Received) -> Answer {
    if !may_see_reason(&state.config, req) {
        return Answer::new(text(200, "ready\n"), "");
    }
    let body = match state.reachable() {
        crate::state::Reachable::Yes => "ready: the registry answers\n".to_string(),
        crate::state::Reachable::No { since, reason } => {
            let n = state.archives().len();
            format!(
                "ready: resolving with the {n} included Archive{} held; the registry has not answered since {since}: {}\n",
                if n == 1 { "" } else { "s" },
                cut(&reason, 500)
            )
        }
    };
    Answer::new(text(200, &body), "")
}

/// Whether `req` comes from this machine (loopback) or from a trusted proxy asking for
/// itself, and from no one it forwards: those see what `/healthz` says of the registry.
/// Not the `[metrics] networks`: they are opened to scrapers of numbers, not of the
/// database's error text. A request that an untrusted proxy forwarded (it connects from
/// an address no trusted proxy is, with `X-Forwarded-For` or `Forwarded`) is someone
/// else's, even from loopback: a proxy on this machine left out of `trustedproxies`
/// would otherwise make every reader loopback.
fn may_see_reason(config: &Config, req: &Received) -> bool {
    let peer = req.ips.last().copied().unwrap_or(req.client);
    let forwarded_untrusted = !config.is_trusted_proxy(peer)
        && (req.headers.contains_key("x-forwarded-for")
            || req.headers.contains_key(header::FORWARDED));
    (req.client.is_loopback() || config.is_trusted_proxy(req.client)) && !forwarded_untrusted
}

/// An Archive's request (or a resolver taking this one for an Archive): answered as what
/// this is, a resolver, and never resolved.
fn archive_request(state: &AppState) -> Answer {
    Answer::new(
        as_a_resolver(state, 400, "this is an IBI resolver, not an Archive"),
        "an Archive's request",
    )
}

/// A path to resolve: the persistent URL read, then resolved ([`resolve`]).
async fn resolution(state: &Arc<AppState>, req: &Received<'_>, query: Option<&Query>) -> Answer {
    let service = &state.config.serviceibi;
    let misspelt = || {
        let mut pairs = PairList::new();
        pairs.push(
            "error",
            words(&format!("the resolver service is at /{service}")),
        );
        Answer::new(pair_list(400, pairs), "the service path misspelt")
    };
    let url = match PersistentUrl::parse(req.path, req.query) {
        // The resolver's own IBI spelt otherwise (another case, escaped, a trailing `/`):
        // refused rather than resolved, since such a request carries a registration key.
        Ok(u) if u.ibi() == service => return misspelt(),
        Ok(u) => u,
        Err(_) if names_the_service(req.path, service) => return misspelt(),
        Err(e) => {
            // The reason quotes the path: not when it holds a key.
            let (note, refusal) = if names_a_key(req.path) {
                ("the path is not a persistent URL".to_string(), None)
            } else {
                (e.to_string(), Some(&e.refusal))
            };
            state
                .engine
                .metrics
                .resolution(Resolution::BadRequest, Duration::ZERO);
            let page = pages::bad_request(req.page_lang, &req.shown(), refusal);
            return Answer::new(page_response(state, page), note);
        }
    };
    let inspect = query.is_some_and(|q| q.get("noredirect").is_some());
    let reader = Reader {
        ips: req.ips.to_vec(),
        languages: req.languages.clone(),
    };
    // The persistent URL as asked is what the answer cites, whatever `Accept` makes of
    // it; the inspection view shows the resolution of the URL itself.
    let cite_as = persistent_url(&state.config.publicurl, &url);
    let wanted = if inspect {
        Wanted::Default
    } else {
        let accept = req
            .headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        // A `format=` in the query asks what an `Accept` asks (a link's way), and wins.
        query
            .and_then(|q| q.get_str("format").ok().flatten())
            .and_then(Wanted::by_query_name)
            .unwrap_or_else(|| negotiate(accept, Given::Item))
    };
    let negotiated = url.negotiated(wanted);
    let asked = Asked {
        inspect,
        head: req.method == Method::HEAD,
        // What it answers depends on Accept-Datetime, whatever is asked now.
        timegate: editions::is_timegate(&url),
        wanted,
        cite_as: &cite_as,
    };
    if let (None, false, true) = (&negotiated, inspect, asked.timegate) {
        if let Some(value) = req.headers.get("accept-datetime") {
            let text = String::from_utf8_lossy(value.as_bytes());
            let Ok(at) = editions::accept_datetime(&text) else {
                let page = pages::bad_datetime(req.page_lang, &req.shown(), &text);
                let note = editions::BadDatetime(text.into_owned()).to_string();
                return Answer::new(page_response(state, page), note);
            };
            return timegate(state, &url, (reader, req.client), at, &asked).await;
        }
    }
    resolve(
        state,
        negotiated.as_ref().unwrap_or(&url),
        (reader, req.client),
        &asked,
        req.headers,
    )
    .await
}

/// What the reader asked of a persistent URL, besides the URL resolved.
struct Asked<'a> {
    /// The inspection view (`noredirect`).
    inspect: bool,
    /// A `HEAD`: no acknowledgment.
    head: bool,
    /// The persistent URL asked is a TimeGate ([`editions::is_timegate`]): what it
    /// answers varies with Accept-Datetime.
    timegate: bool,
    /// What its `Accept` (or `format=`) negotiated.
    wanted: Wanted,
    /// The persistent URL as asked, which the answer cites.
    cite_as: &'a str,
}

/// The Signposting link (RFC 8288) that cites `url`, a persistent URL:
/// `<url>; rel="cite-as"`, with what may not stand between `<` and `>` %-escaped.
fn cite_as_link(url: &str) -> String {
    format!("<{}>; rel=\"cite-as\"", link_target(url))
}

/// What a resolution holds while under way: its share of the reader's network and of
/// the resolver's.
struct Admitted<'a> {
    _mine: crate::clients::Held,
    _resolving: tokio::sync::SemaphorePermit<'a>,
}

/// Whether a resolution of `url` asked by `client` may start now: not while an Archive
/// asked about its IBI asks for it in turn (a loop), nor past the per-client bounds or
/// the resolver's; the answer when not.
async fn admitted<'a>(
    state: &'a Arc<AppState>,
    url: &PersistentUrl,
    client: IpAddr,
    page_lang: PageLang,
) -> Result<Admitted<'a>, Answer> {
    // An Archive asked about this IBI right now asks for it in turn: answered before any
    // Archive is asked again (crate::loops; three quarters of the timeout tell it from a
    // reader at the Archive's address, whose Archive answers, and leave the Archive time
    // to answer once the relay is answered).
    let patience = state.engine.timeout * 3 / 4;
    if state
        .engine
        .underway
        .relayed(&url.ibi().key(), client, patience)
        .await
    {
        state.engine.metrics.relayed();
        return Err(Answer::new(
            as_a_resolver(
                state,
                508,
                "an Archive asked about this IBI asked for it in turn: loop",
            ),
            "loop: a resolution asked by an Archive being asked about its IBI",
        ));
    }
    let mine = match state.clients.resolution(client) {
        Ok(held) => held,
        Err(refused) => return Err(throttled(state, page_lang, refused)),
    };
    let Ok(resolving) = state.resolutions.try_acquire() else {
        state.engine.metrics.overloaded();
        return Err(Answer::new(
            page_response(state, pages::overloaded(page_lang)),
            format!(
                "overloaded: {} resolutions under way",
                state.config.limits.resolutions
            ),
        )
        .header(header::RETRY_AFTER, HeaderValue::from_static("1")));
    };
    Ok(Admitted {
        _mine: mine,
        _resolving: resolving,
    })
}

/// `work` within [`MAX_RESOLUTION`]; the 504 when it takes longer.
async fn bounded<T>(
    state: &AppState,
    work: impl std::future::Future<Output = T>,
) -> Result<T, Answer> {
    tokio::time::timeout(MAX_RESOLUTION, work)
        .await
        .map_err(|_| {
            state
                .engine
                .metrics
                .resolution(Resolution::TimedOut, MAX_RESOLUTION);
            let r = text(504, "resolution took too long\n");
            Answer::new(r, "resolution took too long")
        })
}

/// Resolves `url` for `reader` within the per-client bounds and the resolver's, and
/// answers: the redirect (with the acknowledgment, but for HEAD and the inspection
/// view), the inspection view, or the outcome's page (`url` may be what the persistent
/// URL asked negotiated).
async fn resolve(
    state: &Arc<AppState>,
    url: &PersistentUrl,
    (reader, client): (Reader, IpAddr),
    asked: &Asked<'_>,
    headers: &HeaderMap,
) -> Answer {
    let page_lang = PageLang::of(&reader.languages);
    let _admitted = match admitted(state, url, client, page_lang).await {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    // Each round that asks every Archive spends one of the client network's misses.
    let budget = Misses {
        clients: &state.clients,
        client,
    };
    let archives = state.archives();
    let work = async {
        let trace = state
            .engine
            .resolve(archives, url, &reader, !asked.inspect, &budget)
            .await;
        let tombstone = match asked.inspect {
            true => None,
            false => tombstone_of(state, &trace, url).await,
        };
        (trace, tombstone)
    };
    let (trace, tombstone) = match bounded(state, work).await {
        Ok(t) => t,
        Err(answer) => return answer,
    };
    if let Some(answer) = counted(state, &trace, page_lang) {
        return answer;
    }
    if asked.inspect {
        let json = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("application/json"));
        return Answer::new(
            page_response(
                state,
                pages::inspection(
                    page_lang,
                    &trace,
                    json,
                    url.ibi().as_str(),
                    &persistent_url(&state.config.publicurl, url),
                ),
            ),
            summary(&trace),
        );
    }
    // The persistent URL of an item or a file of it is its own TimeGate: it says so.
    let links = if editions::is_timegate(url) {
        editions::timegate_of(&state.config.publicurl, url)
    } else {
        Vec::new()
    };
    answered(state, url, &reader, &trace, asked, (links, tombstone))
}

/// The tombstone of what `trace` found removed, from the Archive that keeps it
/// ([`Tombstone::fetch`]), within the Archives' timeout; none for anything else.
async fn tombstone_of(state: &AppState, trace: &Trace, url: &PersistentUrl) -> Option<Tombstone> {
    let Outcome::Deleted {
        keeper: Some((address, service)),
        ..
    } = &trace.outcome
    else {
        return None;
    };
    let ibi = kept_ibi(trace, url);
    let timeout = state.engine.timeout;
    Some(
        Tombstone::fetch(
            &state.engine.client,
            (address, service),
            ibi.as_str(),
            timeout,
        )
        .await,
    )
}

/// The resolution counted in the metrics; the 429 when the reader's network could not
/// ask every Archive (the inspection view too: it asks every Archive as a redirect does).
fn counted(state: &AppState, trace: &Trace, page_lang: PageLang) -> Option<Answer> {
    state.engine.metrics.resolution(
        trace.outcome.label(),
        Duration::from_secs_f64(trace.ms / 1e3),
    );
    if let Outcome::Throttled { retry_after } = trace.outcome {
        return Some(throttled(
            state,
            page_lang,
            Refused {
                limit: Limit::Misses,
                retry_after,
            },
        ));
    }
    None
}

/// The answer of a resolution of `url`: the redirect (and its acknowledgment, but for
/// HEAD) or the outcome's page; an item found or removed with the Signposting and `links`
/// (more `Link` values: Memento's); for a persistent URL that is a TimeGate, with `Vary:
/// Accept-Datetime`. An item removed keeps its identity: its tombstone, read from the
/// Archive that keeps it, on the page or, when JSON-LD was asked, as JSON-LD.
fn answered(
    state: &Arc<AppState>,
    url: &PersistentUrl,
    reader: &Reader,
    trace: &Trace,
    asked: &Asked<'_>,
    (mut links, tombstone): (Vec<String>, Option<Tombstone>),
) -> Answer {
    let page_lang = PageLang::of(&reader.languages);
    let page = match &trace.outcome {
        Outcome::Deleted { date, .. } => {
            let tombstone = tombstone.unwrap_or_default();
            let ibi = kept_ibi(trace, url);
            if asked.wanted == Wanted::JsonLd {
                let mut t = tombstone;
                t.removed = t.removed.or_else(|| Some(date.clone()));
                pages::Page::plain(410, JSON_LD, t.json_ld(asked.cite_as))
            } else {
                let citation = tombstone.citation(asked.cite_as, ibi.as_str());
                pages::tombstone(
                    page_lang,
                    (ibi.as_str(), date),
                    &tombstone,
                    (&citation, asked.cite_as),
                )
            }
        }
        _ => pages::outcome(page_lang, trace, url.ibi().as_str()),
    };
    let mut r = page_response(state, page);
    *r.status_mut() =
        StatusCode::from_u16(pages::status_of(&trace.outcome)).unwrap_or(StatusCode::NOT_FOUND);
    // Signposting: the redirect to an item, and its tombstone, cite the persistent URL
    // and link the item's linkset.
    let signposts = match &trace.outcome {
        Outcome::Found(_) => Some(linkset::of_item(&state.config.publicurl, url)),
        Outcome::Deleted { keeper, .. } => Some(match keeper {
            Some((address, service)) => {
                linkset::of_tombstone(address, service, &kept_ibi(trace, url))
            }
            None => Vec::new(),
        }),
        _ => None,
    };
    // No item, no links: Memento's neither.
    match signposts {
        Some(signposts) => {
            let mut first = vec![cite_as_link(asked.cite_as)];
            first.extend(signposts);
            links.splice(0..0, first);
        }
        None => links.clear(),
    }
    if !links.is_empty() {
        if let Ok(v) = HeaderValue::from_str(&links.join(", ")) {
            r.headers_mut().insert(header::LINK, v);
        }
    }
    if asked.timegate {
        r.headers_mut().insert(
            header::VARY,
            HeaderValue::from_static("Accept-Language, Accept, Accept-Datetime"),
        );
    }
    match &trace.outcome {
        Outcome::Found(found) => {
            // A HEAD is no access to the item: no acknowledgment is sent.
            if !asked.head {
                if let Some(ack) = state.engine.acknowledgment(trace, reader) {
                    state
                        .acknowledgments
                        .send(&found.archive, &found.address, ack);
                }
            }
            // usable_location() let only visible ASCII through, and location() encodes
            // what the reader's pairs add: always a valid header.
            let location = trace.location.as_deref().unwrap_or(&found.url);
            if let Ok(v) = HeaderValue::from_str(location) {
                r.headers_mut().insert(header::LOCATION, v);
            }
        }
        Outcome::Unverifiable { .. } | Outcome::Unavailable { .. } => {
            r.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(state.config.archives.probe.as_secs().max(1)),
            );
        }
        _ => {}
    }
    Answer::new(r, summary(trace))
}

/// The IBI of what a resolution found, or found removed: the last round's (a related
/// item's, when the verbs asked for one), else the one asked.
fn kept_ibi(trace: &Trace, url: &PersistentUrl) -> Ibi {
    trace
        .rounds
        .last()
        .and_then(|r| Ibi::parse(&r.ibi).ok())
        .unwrap_or_else(|| url.ibi().clone())
}

/// The TimeGate (Memento, RFC 7089 §4.1.1): `url`'s editions walked ([`editions`]) and
/// the reader sent to the one current at `at`, its file path kept.
async fn timegate(
    state: &Arc<AppState>,
    url: &PersistentUrl,
    (reader, client): (Reader, IpAddr),
    at: i64,
    asked: &Asked<'_>,
) -> Answer {
    let page_lang = PageLang::of(&reader.languages);
    let _admitted = match admitted(state, url, client, page_lang).await {
        Ok(a) => a,
        Err(answer) => return answer,
    };
    let budget = Misses {
        clients: &state.clients,
        client,
    };
    let base = &state.config.publicurl;
    let work = async {
        let archives = state.archives();
        let editions = match state
            .engine
            .editions(archives.clone(), url, &reader, &budget)
            .await
        {
            Ok(editions) => editions,
            Err(trace) => {
                let tombstone = tombstone_of(state, &trace, url).await;
                return (*trace, None, tombstone);
            }
        };
        let chosen = editions::current_at(&editions, at);
        let times = editions::Times::of(base, url, &editions);
        let edition = &editions[chosen];
        // The edition's own resolution is the redirect, unless a file of it is asked.
        let trace = if url.filepath().is_some() {
            let asked = url.with_ibi(edition.ibi.clone());
            state
                .engine
                .resolve(archives, &asked, &reader, true, &budget)
                .await
        } else {
            edition.trace.clone()
        };
        (trace, Some((times, chosen)), None)
    };
    let (mut trace, times, tombstone) = match bounded(state, work).await {
        Ok(t) => t,
        Err(answer) => return answer,
    };
    if let Some(answer) = counted(state, &trace, page_lang) {
        return answer;
    }
    // The reader's own query pairs follow the URL found, as for any redirect.
    if let Outcome::Found(found) = &trace.outcome {
        trace.location = Some(crate::resolve::location(&found.url, url));
    }
    let links = match (&times, &trace.location) {
        (Some((times, chosen)), Some(location)) => times.timegate_links(*chosen, location),
        _ => editions::timegate_of(base, url),
    };
    let mut answer = answered(state, url, &reader, &trace, asked, (links, tombstone));
    answer.note = format!("timegate at {}: {}", ibi::time::iso8601(at), answer.note);
    answer
}

/// Whether `path` is `prefix` followed by a path of its own (`/…`).
fn under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// The editions of the persistent URL `req`'s path names after `prefix` (the TimeMap's
/// path or the list's), walked ([`editions`]) within the per-client bounds, the misses
/// counted, and within [`MAX_RESOLUTION`]; `item_only`: a file path is refused too. The
/// answer instead when the path names no item (`400`), the walk is refused or takes too
/// long, or the item itself is not found (the page of its resolution, as the persistent
/// URL would answer but never a redirect: a `404` for an item found without a
/// timestamp). `what` names the request in the log.
async fn walked(
    state: &Arc<AppState>,
    req: &Received<'_>,
    prefix: &str,
    item_only: bool,
    what: &str,
) -> Result<(PersistentUrl, Vec<editions::Edition>), Answer> {
    let rest = req.path.strip_prefix(prefix).unwrap_or("");
    let refused = |refusal: Option<&ibi::persistent::Refusal>, note: String| {
        let page = pages::bad_request(req.page_lang, &req.shown(), refusal);
        Answer::new(page_response(state, page), note)
    };
    let url = match PersistentUrl::parse(rest, None) {
        // The resolver service is no item.
        Ok(url) if url.ibi() == &state.config.serviceibi => {
            return Err(refused(None, format!("{what} of the resolver service")));
        }
        Ok(url) if !editions::is_timegate(&url) => {
            return Err(refused(None, format!("{what} of a modifier")));
        }
        Ok(url) if item_only && url.filepath().is_some() => {
            return Err(refused(None, format!("{what} of a file")));
        }
        Ok(url) => url,
        Err(e) => return Err(refused(Some(&e.refusal), e.to_string())),
    };
    let reader = Reader {
        ips: req.ips.to_vec(),
        languages: req.languages.clone(),
    };
    let _admitted = admitted(state, &url, req.client, req.page_lang).await?;
    let budget = Misses {
        clients: &state.clients,
        client: req.client,
    };
    let work = state
        .engine
        .editions(state.archives(), &url, &reader, &budget);
    match bounded(state, work).await? {
        Ok(editions) => Ok((url, editions)),
        Err(trace) => {
            if let Some(answer) = counted(state, &trace, req.page_lang) {
                return Err(answer);
            }
            let mut r = page_response(
                state,
                pages::outcome(req.page_lang, &trace, url.ibi().as_str()),
            );
            // Editions of an item found are listed; of anything else, its page.
            *r.status_mut() = match pages::status_of(&trace.outcome) {
                302 => StatusCode::NOT_FOUND,
                s => StatusCode::from_u16(s).unwrap_or(StatusCode::NOT_FOUND),
            };
            r.headers_mut().remove(header::LOCATION);
            Err(Answer::new(r, format!("{what}: {}", summary(&trace))))
        }
    }
}

/// The TimeMap of the persistent URL `path` names after `/timemap/link`
/// (`application/link-format`, RFC 7089 §5): its editions walked ([`walked`]); the
/// page of its resolution when the item itself is not found.
async fn timemap(state: &Arc<AppState>, req: &Received<'_>) -> Answer {
    let (url, editions) = match walked(state, req, editions::TIMEMAP_PATH, false, "timemap").await {
        Ok(walked) => walked,
        Err(answer) => return answer,
    };
    let times = editions::Times::of(&state.config.publicurl, &url, &editions);
    let mut r = Response::new(Body::from(times.timemap()));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(editions::LINK_FORMAT),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Answer::new(r, format!("timemap: {} editions", editions.len()))
}

/// The list of the editions of the item `path` names after `/timemap/html`, for readers:
/// the TimeMap's editions as an HTML page of the resolver's frame ([`pages::editions`]),
/// with the links to the original and to the TimeMap in its `Link` header too.
async fn editions_page(state: &Arc<AppState>, req: &Received<'_>) -> Answer {
    let (url, editions) = match walked(state, req, editions::EDITIONS_PATH, true, "editions").await
    {
        Ok(walked) => walked,
        Err(answer) => return answer,
    };
    let base = &state.config.publicurl;
    let times = editions::Times::of(base, &url, &editions);
    let listed = editions::listed(base, &url, &editions);
    let capped = (editions.len() == editions::MAX_EDITIONS).then_some(editions::MAX_EDITIONS);
    let page = pages::editions(
        req.page_lang,
        url.ibi().as_str(),
        (&times.original, &times.timemap),
        &listed,
        capped,
    );
    let mut r = page_response(state, page);
    if let Ok(v) = HeaderValue::from_str(&times.original_and_timemap().join(", ")) {
        r.headers_mut().insert(header::LINK, v);
    }
    Answer::new(r, format!("editions: {}", editions.len()))
}

/// The misses of the reader's client network, as a resolution spends them.
struct Misses<'a> {
    clients: &'a ClientBook,
    client: IpAddr,
}

impl Budget for Misses<'_> {
    fn fan_out(&self) -> Result<(), u64> {
        self.clients.miss(self.client).map_err(|r| r.retry_after)
    }
}

/// `status` with the resolver's identity pairs and `error {text}`: what an Archive's
/// request gets here, so that whoever sent it can tell it reached a resolver
/// ([`crate::client::Confirmation::AsResolver`]).
fn as_a_resolver(state: &AppState, status: u16, text: &str) -> Response<Body> {
    let mut answer = service::identity(state).pairs;
    answer.push("error", words(text));
    pair_list(status, answer)
}

/// A pair-list value of the words of `text`.
fn words(text: &str) -> Value {
    Value::words(text.split(' ').map(|w| w.as_bytes().to_vec()))
}

/// The `429` of a per-client bound.
fn throttled(state: &AppState, lang: PageLang, refused: Refused) -> Answer {
    state.engine.metrics.throttled(refused.limit);
    Answer::new(
        page_response(state, pages::too_many(lang)),
        format!(
            "beyond the client network's {} bound",
            refused.limit.label()
        ),
    )
    .header(header::RETRY_AFTER, HeaderValue::from(refused.retry_after))
}

/// Whether the request comes from an IBI resolver (its `Via` says so,
/// [`crate::client::VIA`]).
fn asked_by_a_resolver(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::VIA)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("ibi-resolver"))
}

/// Whether `path`, which is no persistent URL, is the resolver service's path spelt
/// otherwise (with `//` or `/.`).
fn names_the_service(path: &str, service: &Ibi) -> bool {
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let segments: Vec<&str> = decoded
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    Ibi::parse(&segments.join("/")).is_ok_and(|ibi| ibi.key() == service.key())
}

/// The outcome in a few words, for the log.
fn summary(trace: &Trace) -> String {
    let rounds = trace.rounds.len();
    match &trace.outcome {
        Outcome::Found(f) => format!("found at {} in {rounds} round(s)", f.address),
        Outcome::NotFound {
            asked,
            missing,
            unasked,
        } => {
            let silent = if unasked.is_empty() {
                String::new()
            } else {
                format!(": {}", unasked.join(", "))
            };
            let missing = missing
                .as_ref()
                .map(|m| format!("; an Archive has the item, {m}"))
                .unwrap_or_default();
            format!(
                "not found ({asked} asked, {} did not answer{silent}){missing}",
                unasked.len()
            )
        }
        Outcome::Unavailable {
            archives,
            asked,
            unasked,
        } => format!(
            "not found ({asked} asked, {} did not answer: {})",
            archives.len() + unasked.len(),
            archives
                .iter()
                .chain(unasked)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Outcome::NoTranslation { language } => format!("no translation in {language}"),
        Outcome::Deleted { date, .. } => format!("deleted on {date}"),
        Outcome::Suspicion { archives } => format!("suspicion: {}", archives.join(", ")),
        Outcome::NoOriginal { copies, .. } => format!(
            "no original, copies at {}",
            copies
                .iter()
                .map(|f| format!("{} ({})", f.address, f.archive))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Outcome::Unverifiable { archives, .. } => {
            format!(
                "the Original cannot be checked: no answer from {}",
                archives.join(", ")
            )
        }
        Outcome::Chain { detail } => format!("endless related items: {detail}"),
        Outcome::Throttled { .. } => "beyond the client network's misses".into(),
    }
}

/// Who sent a request: `clientinformation.ipaddress` (Table 8.10), and the client the
/// resolver's bounds go by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientIps {
    /// The reader, then its successive proxies (Example 10.1: `172.16.44.200
    /// 150.163.68.1`): the connection's address, after the X-Forwarded-For chain when the
    /// connection comes from a trusted proxy, as far as it reads as addresses.
    pub list: Vec<IpAddr>,
    /// The first address of the chain, from the right, that is not a trusted proxy: the
    /// one address of the list no one but a trusted proxy wrote. The per-client bounds,
    /// the key checks' slowdown and the networks that may see the metrics go by it;
    /// what lies left of it is passed on to the Archives as the proxies said it.
    pub client: IpAddr,
}

/// Who sent a request from `peer` with `headers` ([`ClientIps`]): at most 16 addresses of
/// X-Forwarded-For are read, from the right, and the chain ends at the first entry that is
/// not an address.
pub fn client_ips(config: &Config, peer: IpAddr, headers: &HeaderMap) -> ClientIps {
    let peer = match peer {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
        v4 => v4,
    };
    let mut list = vec![peer];
    let mut client = peer;
    if !config.is_trusted_proxy(peer) {
        return ClientIps { list, client };
    }
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut vouched = true;
    for entry in forwarded.iter().rev().take(16) {
        let Ok(ip) = entry.parse::<IpAddr>() else {
            break;
        };
        list.insert(0, ip);
        if vouched {
            client = ip;
            vouched = config.is_trusted_proxy(ip);
        }
    }
    ClientIps { list, client }
}

/// The log line of one request: written once it is answered, or, if the client closed
/// its connection first, with status 499 (and counted).
struct LogLine {
    state: Arc<AppState>,
    client: IpAddr,
    method: Method,
    /// The request as the log may show it ([`shown_request`]).
    shown: String,
    start: Instant,
    answered: bool,
}

impl LogLine {
    fn write(&self, status: u16, note: &str) {
        say(&format!(
            "{} \"{} {}\" {status} {:.1}ms {note}",
            self.client,
            self.method,
            cut(&self.shown, MAX_SHOWN),
            self.start.elapsed().as_secs_f64() * 1e3,
        ));
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        if !self.answered {
            self.state.engine.metrics.abandoned();
            self.write(499, "abandoned by the client");
        }
    }
}

/// Query pairs a log line or a page may show with their values; every other pair is
/// left out (`&…`), so that no registration key, whatever the request's method, length
/// or path, reaches the log: it goes only in the query of the resolver service. Pairs
/// joined by `;` are shown only when each is one of these ([`kept_pairs`]).
const SHOWN_PAIRS: [&str; 4] = [
    "ibiurl.verblist",
    "ibiurl.requireditemstatus",
    "noredirect",
    "servicesubject",
];

/// The request target as a log line or a page may show it: the path (unless it names
/// a registration key, when a query was sent escaped into it), and of the query only the
/// pairs of [`SHOWN_PAIRS`].
pub fn shown_request(path: &str, query: Option<&str>) -> String {
    let mut shown = if names_a_key(path) {
        "/…".to_string()
    } else {
        path.to_string()
    };
    let Some(query) = query else {
        return shown;
    };
    let (mut kept, left_out) = kept_pairs(query, |name| SHOWN_PAIRS.contains(&name));
    if left_out {
        kept.push("…");
    }
    if !kept.is_empty() || query.is_empty() {
        shown.push('?');
        shown.push_str(&kept.join("&"));
    }
    shown
}

/// Whether `path`, decoded, names a registration key (a query sent escaped into it).
fn names_a_key(path: &str) -> bool {
    percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .to_ascii_lowercase()
        .contains("registrationkey")
}

/// A pair list (Table 6.2), one pair per line.
fn pair_list(status: u16, pairs: PairList) -> Response<Body> {
    let mut body = pairs.to_text();
    if !body.is_empty() {
        body.push_str("\r\n");
    }
    text(status, &body)
}

fn text(status: u16, body: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    r
}

fn page_response(state: &AppState, page: pages::Page) -> Response<Body> {
    let page = page.with_site(&state.config.site);
    let mut r = Response::new(Body::from(page.body));
    *r.status_mut() =
        StatusCode::from_u16(page.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(page.content_type),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::VARY,
        HeaderValue::from_static("Accept-Language, Accept"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_for_is_passed_on_reader_first_and_believed_only_from_trusted_proxies() {
        let config = Config::parse(
            "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://r\"\ntrustedproxies = [\"127.0.0.1/32\", \"150.163.68.1\"]\n",
            std::path::Path::new("."),
        )
        .unwrap();
        let ips = |peer: &str, forwarded: &'static str| -> (Vec<String>, String) {
            let mut h = HeaderMap::new();
            if !forwarded.is_empty() {
                h.insert("x-forwarded-for", HeaderValue::from_static(forwarded));
            }
            let got = client_ips(&config, peer.parse().unwrap(), &h);
            (
                got.list.iter().map(|i| i.to_string()).collect(),
                got.client.to_string(),
            )
        };
        let owned = |list: &[&str], client: &str| {
            (
                list.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                client.to_string(),
            )
        };
        // Example 10.1 behind this resolver's own proxy: the reader 172.16.44.200 behind
        // its institution's proxy 150.163.68.1, which this resolver does not trust: the
        // list is the reader first, then the proxies; the bounds go by 150.163.68.1, the
        // address the trusted proxy saw.
        let untrusting = Config::parse(
            "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://r\"\ntrustedproxies = [\"127.0.0.1/32\"]\n",
            std::path::Path::new("."),
        )
        .unwrap();
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("172.16.44.200, 150.163.68.1"),
        );
        let got = client_ips(&untrusting, "127.0.0.1".parse().unwrap(), &h);
        assert_eq!(
            ip_list_text(&got.list),
            "172.16.44.200 150.163.68.1 127.0.0.1"
        );
        assert_eq!(got.client.to_string(), "150.163.68.1");
        // When 150.163.68.1 is trusted too, 172.16.44.200 is the client; what the reader
        // itself wrote (6.6.6.6) is passed on, and the bounds do not go by it.
        assert_eq!(
            ips("127.0.0.1", "6.6.6.6, 172.16.44.200, 150.163.68.1"),
            owned(
                &["6.6.6.6", "172.16.44.200", "150.163.68.1", "127.0.0.1"],
                "172.16.44.200"
            )
        );
        // From anyone else the header is ignored.
        assert_eq!(
            ips("203.0.113.9", "6.6.6.6, 172.16.44.200, 150.163.68.1"),
            owned(&["203.0.113.9"], "203.0.113.9")
        );
        // The chain ends at the first entry that is not an address.
        assert_eq!(
            ips("127.0.0.1", "6.6.6.6, garbage, 172.16.44.200"),
            owned(&["172.16.44.200", "127.0.0.1"], "172.16.44.200")
        );
        assert_eq!(
            ips("127.0.0.1", "garbage"),
            owned(&["127.0.0.1"], "127.0.0.1")
        );
    }

    #[test]
    fn the_registry_s_fault_is_for_this_machine_and_trusted_proxies_asking_for_themselves() {
        let config = Config::parse(
            "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://r\"\ntrustedproxies = [\"10.0.0.2\"]\n[metrics]\nnetworks = [\"0.0.0.0/0\", \"::/0\"]\n",
            std::path::Path::new("."),
        )
        .unwrap();
        let sees = |peer: &str, headers: &[(&'static str, &'static str)]| {
            let mut request = Request::builder().uri("/healthz");
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let (parts, ()) = request.body(()).unwrap().into_parts();
            let ips = client_ips(&config, peer.parse().unwrap(), &parts.headers);
            may_see_reason(&config, &Received::of(&parts, &ips))
        };
        assert!(sees("127.0.0.1", &[]));
        assert!(sees("::1", &[]));
        assert!(sees("10.0.0.2", &[]));
        // Inside the metrics networks is not enough.
        assert!(!sees("203.0.113.9", &[]));
        // A reader behind the trusted proxy, whatever it claims to be.
        assert!(!sees("10.0.0.2", &[("x-forwarded-for", "203.0.113.9")]));
        assert!(!sees(
            "10.0.0.2",
            &[("x-forwarded-for", "127.0.0.1, 203.0.113.9")]
        ));
        // The trusted proxy naming only itself, and on behalf of this machine.
        assert!(sees("10.0.0.2", &[("x-forwarded-for", "10.0.0.2")]));
        assert!(sees("10.0.0.2", &[("x-forwarded-for", "127.0.0.1")]));
        // A proxy on this machine the resolver does not trust forwards someone else.
        assert!(!sees("127.0.0.1", &[("x-forwarded-for", "203.0.113.9")]));
        assert!(!sees("127.0.0.1", &[("forwarded", "for=203.0.113.9")]));
    }

    #[test]
    fn a_query_is_shown_by_the_pairs_read_whether_separated_by_ampersands_or_semicolons() {
        let service = "/J8LNKB5R7W/3FUQHC5";
        let item = "/LK47B6W/362SFKH";
        for (path, query, shown) in [
            (
                service,
                "servicesubject=inclusionRequest&registrationkey=1234567890",
                "/J8LNKB5R7W/3FUQHC5?servicesubject=inclusionRequest&…",
            ),
            (
                service,
                "servicesubject=inclusionRequest;registrationkey=1234567890",
                "/J8LNKB5R7W/3FUQHC5?…",
            ),
            (
                service,
                "servicesubject=inclusionRequest%3Bregistrationkey%3D1234567890",
                "/J8LNKB5R7W/3FUQHC5?…",
            ),
            (
                service,
                "servicesubject=inclusionRequest&Registration%4Bey=1234567890",
                "/J8LNKB5R7W/3FUQHC5?servicesubject=inclusionRequest&…",
            ),
            (
                item,
                "noredirect;ibiurl.verblist=GetMetadata",
                "/LK47B6W/362SFKH?noredirect;ibiurl.verblist=GetMetadata",
            ),
            (
                item,
                "ibiurl.verblist=GetMetadata;x=1&noredirect",
                "/LK47B6W/362SFKH?noredirect&…",
            ),
        ] {
            assert_eq!(shown_request(path, Some(query)), shown, "{query}");
        }
        // What is sent on to an Archive (url.persistent) leaves a key out too.
        let not_the_key = |name: &str| name != "registrationkey";
        assert_eq!(
            kept_pairs("a=1;registrationkey=2&b=3;c=4", not_the_key),
            (vec!["b=3;c=4"], true)
        );
        assert_eq!(
            kept_pairs("a=registrationkey%3D2&b=3", not_the_key),
            (vec!["b=3"], true)
        );
    }

    /// The addresses as `clientinformation.ipaddress` carries them.
    fn ip_list_text(ips: &[IpAddr]) -> String {
        ips.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }
}
