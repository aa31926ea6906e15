//! The official Rust SDK (rmcp) as a host: its own OAuth client (`OAuthState`,
//! `AuthorizationManager`, `AuthClient`), not the TypeScript or Python SDK's.

use rmcp::model::CallToolRequestParams;
use rmcp::transport::auth::{
    AuthClient, AuthorizationManager, AuthorizationRequest, ClientCredentialsConfig, OAuthState,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;

use super::*;

/// rmcp finds the gateway's authorization server from the protected resource, registers
/// itself, and its authorization URL is walked as a browser would; it takes the callback (its
/// `state` and RFC 9207 `iss` checks), lists and calls with the reader's roles, and once its
/// short-lived access token has expired it refreshes by itself and the next call goes through.
#[tokio::test]
async fn the_rust_sdk_signs_in_calls_and_refreshes() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "access_token_ttl_secs = 2");
    let gw = start_at(&cfg, port, &[]).await;
    let pat = gw.token_for("ann", &["reader"]).await;

    let (manager, back) = signed_in(
        &gw,
        &pat,
        AuthorizationRequest::new("http://127.0.0.1:33421/callback")
            .with_client_name("Rust SDK test host"),
    )
    .await;
    assert_eq!(
        param(&back, "iss"),
        Some(format!("http://127.0.0.1:{port}"))
    );
    let client_id = manager.get_credentials().await.unwrap().0;
    assert!(
        client_id.starts_with("mcpgw-"),
        "registered by DCR: {client_id}"
    );

    let host = connected(&gw, manager).await;
    assert_eq!(readers_tools(&host).await, ["fx__echo"]);
    let r = host.call_tool(echo("hello")).await.unwrap();
    assert_eq!(text_of(&r), "hello");

    // Past the access token's 2 s: the host refreshes by itself.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let r = host
        .call_tool(echo("again"))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", gw.log()));
    assert_eq!(text_of(&r), "again");
    let audit = gw.get_json("/admin/v1/audit?limit=100").await;
    assert!(
        audit
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["action"] == "oauth.refresh" && r["outcome"] == "ok"),
        "the host refreshed: {audit}"
    );
    let _ = host.cancel().await;
    assert!(!gateway_tests::has_jwt(&gw.log()), "a JWT in the log");
}

/// rmcp named by its client ID metadata document, with registration off: the gateway reads the
/// document (its redirect URI, its name) and the sign-in goes through as with a registered one.
#[tokio::test]
async fn the_rust_sdk_named_by_its_client_metadata_document_signs_in() {
    let redirect = "http://127.0.0.1:33421/callback";
    let documents = DocumentHost::start(redirect).await;
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, DOCUMENTS_ONLY);
    let gw = start_at(&cfg, port, &[("SSL_CERT_FILE", &documents.ca())]).await;
    let pat = gw.token_for("ann", &["reader"]).await;

    let (manager, _) = signed_in(
        &gw,
        &pat,
        AuthorizationRequest::new(redirect).with_client_metadata_url(documents.url.as_str()),
    )
    .await;
    assert_eq!(manager.get_credentials().await.unwrap().0, documents.url);
    let clients = gw.get_json("/admin/v1/oauth/clients").await;
    assert!(
        clients
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["client_id"] == documents.url.as_str() && c["source"] == "cimd"),
        "the gateway knows the client by its document: {clients}"
    );
    let host = connected(&gw, manager).await;
    assert_eq!(readers_tools(&host).await, ["fx__echo"]);
    let r = host.call_tool(echo("named")).await.unwrap();
    assert_eq!(text_of(&r), "named");
    let _ = host.cancel().await;
}

/// An agent that acts as itself: rmcp's client credentials flow with the client the config
/// gave the reader's roles.
#[tokio::test]
async fn the_rust_sdk_client_credentials_flow_acts_with_the_clients_roles() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        "[[auth.server.clients]]\nclient_id = \"nightly-agent\"\nredirect_uris = []\n\
         client_secret = { env = \"AGENT_SECRET\" }\nroles = [\"reader\"]\n",
    );
    let gw = start_at(&cfg, port, &[("AGENT_SECRET", "agent-secret")]).await;
    let mut state = OAuthState::new(gw.mcp.as_str(), None).await.unwrap();
    state
        .authenticate_client_credentials(ClientCredentialsConfig::ClientSecret {
            client_id: "nightly-agent".into(),
            client_secret: "agent-secret".into(),
            scopes: vec![],
            // rmcp asks its caller for the resource (RFC 8707) here; the spec requires it.
            resource: Some(gw.mcp.clone()),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", gw.log()));
    let manager = state.into_authorization_manager().expect("authorized");
    let host = connected(&gw, manager).await;
    assert_eq!(readers_tools(&host).await, ["fx__echo"]);
    let r = host.call_tool(echo("nightly")).await.unwrap();
    assert_eq!(text_of(&r), "nightly");
    let _ = host.cancel().await;
}

/// rmcp's sign-in with `request`: discovery and the client (registered or named by its
/// document), the authorization URL walked as a browser would with `pat`, the callback taken.
/// Its tokens, and the redirect back.
async fn signed_in(
    gw: &Gateway,
    pat: &str,
    request: AuthorizationRequest,
) -> (AuthorizationManager, url::Url) {
    let mut state = OAuthState::new(gw.mcp.as_str(), None).await.unwrap();
    state
        .start_authorization(request)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", gw.log()));
    let url = url::Url::parse(&state.get_authorization_url().await.unwrap()).unwrap();
    let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let query: Vec<(&str, &str)> = query
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let back = Walk::new(gw).through(&query, pat).await;
    assert_eq!(back.status(), 303, "{}", gw.log());
    let back = location(&back);
    state
        .handle_callback_url(back.as_str())
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", gw.log()));
    let manager = state
        .into_authorization_manager()
        .expect("authorized after the callback");
    (manager, back)
}

/// An MCP session through `manager`'s tokens.
async fn connected(
    gw: &Gateway,
    manager: AuthorizationManager,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let transport = StreamableHttpClientTransport::with_client(
        AuthClient::new(reqwest013::Client::new(), manager),
        StreamableHttpClientTransportConfig::with_uri(gw.mcp.as_str()),
    );
    ().serve(transport)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", gw.log()))
}

/// The fixture's tools the host lists (the reader may use `fx__echo` only).
async fn readers_tools(host: &rmcp::service::RunningService<rmcp::RoleClient, ()>) -> Vec<String> {
    host.list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .filter(|t| t.starts_with("fx__"))
        .collect()
}

fn echo(message: &str) -> CallToolRequestParams {
    let mut call = CallToolRequestParams::new("fx__echo");
    call.arguments = json!({ "message": message }).as_object().cloned();
    call
}

fn text_of(r: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
