//! How a Streamable HTTP upstream's POSTs go out. An `http://` upstream that no proxy setting
//! covers is posted to over hyper's HTTP/1 connections directly ([`super::h1`]): reqwest's
//! redirect and retry layers and its two URL parses per request were about a tenth of the
//! gateway's instructions per call (callgrind, `scripts/bench-instructions`). Everything else
//! goes through reqwest, which speaks TLS, honours the proxy variables and follows redirects:
//! `https://`, a proxied or credentialed URL, and an upstream once it has answered with a
//! redirect. It follows redirects within the upstream's origin only ([`upstream_client`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Body as _;
use hyper_util::client::proxy::matcher::Matcher;
use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};

/// An answer's body, from either client; read to its end in passing when dropped early
/// ([`super::drain`]).
pub type Body = super::drain::Drained<Either<super::h1::Driven, reqwest::Body>>;
pub type Response = http::Response<Body>;

/// The direct client: one set of connection pools for all upstreams (see [`super::h1`]).
pub type PlainClient = Arc<super::h1::Pools>;

pub fn plain_client() -> PlainClient {
    Arc::default()
}

/// Redirects an upstream's requests follow.
const MAX_REDIRECTS: usize = 10;

/// The client of upstreams' requests that reqwest sends: it follows redirects within the
/// upstream's origin only. Each request carries the upstream's credentials (its configured
/// `headers`, tokens, the session id), and on a redirect to another origin reqwest drops only the
/// standard authorization and cookie headers: an `X-Api-Key` would go to whatever server the
/// upstream, or a page on its host, sends the gateway to.
pub fn upstream_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let from = attempt.previous().first().map(|u| u.origin());
            let to = attempt.url().origin();
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if from.as_ref() != Some(&to) {
                let to = to.ascii_serialization();
                attempt.error(format!(
                    "the upstream redirects to another origin ({to}), where its credentials are \
                     not sent; set its url to that server if it is the one meant"
                ))
            } else {
                attempt.follow()
            }
        }))
        .build()
        .expect("http client")
}

/// A request that got no answer.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SendError {
    /// The connection could not be made (the upstream is down or gone).
    pub connect: bool,
    message: String,
}

impl From<reqwest::Error> for SendError {
    fn from(e: reqwest::Error) -> Self {
        Self {
            connect: e.is_connect(),
            // With its causes: reqwest's own text ("error sending request for url (…)") does not
            // say whether the port was closed or the certificate not trusted.
            message: chain(&e),
        }
    }
}

/// A reqwest answer as the one response type.
pub fn from_reqwest(r: reqwest::Response) -> Response {
    http::Response::from(r).map(|b| super::drain::Drained::new(Either::Right(b)))
}

/// Posts to one upstream URL.
pub struct Poster {
    reqwest: reqwest::Client,
    url: reqwest::Url,
    /// The direct path: the origin's pool and the request target (origin form).
    plain: Option<(Arc<super::h1::Pool>, http::Uri)>,
    /// The upstream answered a direct POST with a redirect: reqwest from then on.
    redirected: AtomicBool,
}

impl Poster {
    pub fn new(reqwest: reqwest::Client, plain: &PlainClient, url: reqwest::Url) -> Self {
        let direct =
            url.scheme() == "http" && url.username().is_empty() && url.password().is_none();
        let plain = direct
            .then(|| url.as_str().parse::<http::Uri>().ok())
            .flatten()
            .filter(|uri| Matcher::from_env().intercept(uri).is_none())
            .and_then(|uri| {
                let target = uri.path_and_query()?.as_str().parse::<http::Uri>().ok()?;
                Some((plain.pool_for(&uri)?, target))
            });
        Self {
            reqwest,
            url,
            plain,
            redirected: AtomicBool::new(false),
        }
    }

    /// The general client, for the other requests (GET streams, DELETE, the subscription
    /// stream).
    pub fn client(&self) -> &reqwest::Client {
        &self.reqwest
    }

    /// The upstream's URL, parsed once.
    pub fn url(&self) -> &reqwest::Url {
        &self.url
    }

    /// Whether POSTs go out through the direct client now.
    #[cfg(test)]
    fn is_direct(&self) -> bool {
        self.plain.is_some() && !self.redirected.load(Ordering::Relaxed)
    }

    /// POSTs `body` (JSON) with the headers `headers` makes; called again for a second try.
    pub async fn post_json(
        &self,
        headers: impl Fn() -> HeaderMap,
        body: Vec<u8>,
    ) -> Result<Response, SendError> {
        let body = Bytes::from(body);
        if let (Some((pool, target)), false) =
            (&self.plain, self.redirected.load(Ordering::Relaxed))
        {
            let mut req = http::Request::new(Full::new(body.clone()));
            *req.method_mut() = http::Method::POST;
            *req.uri_mut() = target.clone();
            *req.headers_mut() = headers();
            req.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            let resp = pool.send(req).await.map_err(|e| {
                let (connect, cause) = match e {
                    super::h1::Error::Connect(m) => (true, m),
                    super::h1::Error::Request(e) => (false, chain(&e)),
                };
                SendError {
                    connect,
                    message: format!("error sending request to {}: {cause}", self.url),
                }
            })?;
            if !is_redirect(resp.status()) {
                return Ok(resp.map(|b| super::drain::Drained::new(Either::Left(b))));
            }
            tracing::info!(url = %crate::config::redact_userinfo(self.url.as_str()), status = %resp.status(), "upstream redirects its POSTs; following with the general client");
            self.redirected.store(true, Ordering::Relaxed);
        }
        let resp = self
            .reqwest
            .post(self.url.clone())
            .headers(headers())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(body)
            .send()
            .await?;
        Ok(from_reqwest(resp))
    }
}

fn is_redirect(status: http::StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// An error with its causes ("client error (Connect): tcp connect error: Connection refused").
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

/// At most `max` bytes of an answer's body.
pub async fn read_body(resp: Response, max: usize) -> Result<Bytes, String> {
    let declared = resp
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(super::limits::too_large(max));
    }
    let mut body = resp.into_body();
    let mut out = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("reading the upstream's answer: {}", chain(&*e)))?;
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        if out.len() + chunk.len() > max {
            return Err(super::limits::too_large(max));
        }
        if out.is_empty() && body.is_end_stream() {
            // The usual case, one chunk: no copy.
            return Ok(chunk);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out.freeze())
}

/// An answer's body as a stream of byte chunks (for SSE).
pub fn bytes_stream(resp: Response) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> {
    use futures::StreamExt;
    http_body_util::BodyDataStream::new(resp.into_body()).map(|r| r.map_err(std::io::Error::other))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poster(url: &str) -> Poster {
        Poster::new(
            reqwest::Client::new(),
            &plain_client(),
            reqwest::Url::parse(url).unwrap(),
        )
    }

    #[tokio::test]
    async fn only_plain_unproxied_urls_go_direct() {
        // The proxy variables are read when a poster is made; none is set in the tests.
        assert!(poster("http://127.0.0.1:9/mcp").is_direct());
        assert!(!poster("https://127.0.0.1:9/mcp").is_direct());
        assert!(!poster("http://user:pw@127.0.0.1:9/mcp").is_direct());
    }

    /// A closed port: a connect error (the lost-session logic depends on it) that says why.
    #[tokio::test]
    async fn a_refused_connection_is_a_connect_error_with_its_cause() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let p = poster(&format!("http://127.0.0.1:{port}/mcp"));
        let e = p
            .post_json(HeaderMap::new, b"{}".to_vec())
            .await
            .unwrap_err();
        assert!(e.connect, "{e}");
        assert!(e.to_string().contains("refused"), "{e}");
        // The same through reqwest (`https://`).
        let p = poster(&format!("https://127.0.0.1:{port}/mcp"));
        let e = p
            .post_json(HeaderMap::new, b"{}".to_vec())
            .await
            .unwrap_err();
        assert!(e.connect && e.to_string().contains("refused"), "{e}");
        assert!(is_redirect(http::StatusCode::TEMPORARY_REDIRECT));
        assert!(!is_redirect(http::StatusCode::NOT_MODIFIED));
    }
}
