//! Tokens of the gateway's own authorization server bound to a host's key (DPoP, RFC 9449): a
//! host that sends a proof with its token request gets tokens only that key can use.

use super::*;

#[tokio::test]
async fn a_hosts_proof_binds_the_tokens_it_gets_to_its_key() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let gw = start_at(&config(&super::sqlite_url(&dir), port, ""), port, &[]).await;
    let meta = gw.get_json("/.well-known/oauth-authorization-server").await;
    assert_eq!(meta["dpop_signing_alg_values_supported"], json!(["ES256"]));

    // alice signs in on the gateway's pages; her host redeems the code with a proof of its key
    // (tests/idp/dpop_client.mjs, node's crypto), then calls and refreshes.
    let pat = gw.token_for("alice", &["reader"]).await;
    let id = register(&gw, "http://127.0.0.1:9/cb", "DPoP host").await;
    let (verifier, challenge) = pkce();
    let query = auth_query(&id, &challenge, port);
    let mut w = Walk::new(&gw);
    let code = param(&location(&w.through(&as_pairs(&query), &pat).await), "code").unwrap();
    let form = json!({"grant_type": "authorization_code", "code": code,
                      "code_verifier": verifier, "client_id": id,
                      "redirect_uri": "http://127.0.0.1:9/cb"});
    let mut host = node("idp/dpop_client.mjs");
    host.arg(format!("{}/oauth/token", gw.base))
        .arg(&id)
        .arg("-")
        .arg("")
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .arg(form.to_string());
    let seen = last_json_line(host, "the DPoP host").await;
    assert!(seen["failure"].is_null(), "{seen}\n{}", gw.log());
    assert_eq!(seen["tokenType"], "DPoP", "{seen}");
    assert!(seen["bound"].is_string(), "the token names its key: {seen}");
    assert_eq!(
        seen["bearer"], 401,
        "a copied token without the key: {seen}"
    );
    assert_eq!(seen["dpop"], 200, "{seen}");
    assert_eq!(seen["replayed"], 401, "{seen}");
    assert_eq!(seen["otherKey"], 401, "{seen}");
    // The refresh token is bound too, and a refusal does not spend it.
    assert_eq!(seen["refreshNoProof"], 400, "{seen}");
    assert_eq!(seen["refreshOtherKey"], 400, "{seen}");
    assert_eq!(seen["refreshed"], 200, "{seen}");
    assert_eq!(seen["refreshedType"], "DPoP", "{seen}");
}
