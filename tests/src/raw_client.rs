//! A raw Streamable HTTP MCP client that shows the gateway's exact bytes.

use futures::StreamExt;
use serde_json::{json, Value};

/// A raw Streamable HTTP MCP client: it shows the gateway's exact bytes.
pub struct RawClient {
    pub http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
    /// Sent as `Authorization: Bearer` when set.
    pub token: Option<String>,
    /// The `MCP-Protocol-Version` header sent once a session is open.
    pub version: &'static str,
    next: i64,
}

impl RawClient {
    pub fn new(url: &str) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: url.into(),
            session: None,
            token: None,
            version: "2025-11-25",
            next: 1,
        }
    }

    /// A POST of `body` with the headers of this client's state (accept, token, session).
    pub fn post_builder(&self, body: Vec<u8>) -> reqwest::RequestBuilder {
        let mut r = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(t) = &self.token {
            r = r.bearer_auth(t);
        }
        if let Some(s) = &self.session {
            r = r
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", self.version);
        }
        r
    }

    /// Initializes a session declaring `capabilities`.
    pub async fn initialize(url: &str, capabilities: Value) -> Self {
        Self::initialize_as(url, capabilities, None).await
    }

    /// [`initialize`](Self::initialize) with a bearer token.
    pub async fn initialize_as(url: &str, capabilities: Value, token: Option<&str>) -> Self {
        let mut c = Self::new(url);
        c.token = token.map(str::to_string);
        let resp = c
            .post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "raw-test-client", "version": "0"}}}),
            )
            .await;
        assert_eq!(resp.status(), 200);
        c.session = Some(
            resp.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_string(),
        );
        c.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        c
    }

    pub async fn post(&self, msg: &Value) -> reqwest::Response {
        self.post_bytes(serde_json::to_vec(msg).unwrap()).await
    }

    pub async fn post_bytes(&self, body: Vec<u8>) -> reqwest::Response {
        self.post_builder(body).send().await.expect("post")
    }

    /// Sends a request; returns (messages before the response, the response).
    pub async fn request_all(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.request_answering(method, params, |_| None).await
    }

    /// [`request_all`](Self::request_all), answering a request the server makes of the host on
    /// the response's stream with the result `answer` gives for it (one it gives none for is
    /// returned with the other messages).
    pub async fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&Value) -> Option<Value>,
    ) -> (Vec<Value>, Value) {
        let id = self.next;
        self.next += 1;
        let resp = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let ctype = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        if !ctype.starts_with("text/event-stream") {
            return (vec![], resp.json().await.expect("json response"));
        }
        let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
        let mut before = Vec::new();
        while let Some(Ok(ev)) = events.next().await {
            let Some(data) = ev.data.filter(|d| !d.is_empty()) else {
                continue;
            };
            let msg: Value = serde_json::from_str(&data).unwrap();
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return (before, msg);
            }
            if msg.get("method").is_some() && msg.get("id").is_some() {
                if let Some(result) = answer(&msg) {
                    self.post(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
                        .await;
                    continue;
                }
            }
            before.push(msg);
        }
        panic!("stream ended without a response to {method}");
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_all(method, params).await.1
    }

    /// Opens the session's GET stream.
    pub async fn listen(&self) -> impl futures::Stream<Item = Value> {
        let mut req = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", self.session.clone().unwrap());
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200);
        sse_stream::SseStream::from_bytes_stream(resp.bytes_stream()).filter_map(|ev| async move {
            ev.ok()?.data.and_then(|d| serde_json::from_str(&d).ok())
        })
    }
}
