//! A DPoP proof is good once among all replicas: one copied off the wire, with its token, is
//! refused by every other replica too, not only by the one that took it.

use super::*;

#[tokio::test]
async fn a_dpop_proof_one_replica_took_is_refused_by_the_other() {
    let db = gateway_tests::postgres_database().await;
    let idp = Idp::start(json!([
        {"client_id": "gw", "client_secret": "gw-secret", "scope": "mcp"}
    ]))
    .await;
    // Both replicas are one resource: the URL the proofs name is the first one's.
    let listen = format!("127.0.0.1:{}", gateway_tests::free_port());
    let resource = format!("http://{listen}/mcp");
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\nresource = \"{resource}\"\n\
         required_scopes = [\"mcp\"]\n[[auth.issuers]]\nissuer = \"{}\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"gw\"\nrole = \"ops\"\n",
        fixture_config(&db, ""),
        idp.issuer
    );
    let a = Gateway::start_secured(&config, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    let b = Gateway::start_secured(&config, &[]).await;
    a.wait_up(&["fx"]).await;
    b.wait_up(&["fx"]).await;
    assert_eq!(a.mcp, resource);

    let mut cmd = gateway_tests::node("idp/dpop_client.mjs");
    cmd.arg(format!("{}/token", idp.issuer))
        .arg("gw")
        .arg("gw-secret")
        .arg("mcp")
        .arg(&a.mcp)
        .env("ALSO_AT", &b.mcp);
    let seen = gateway_tests::last_json_line(cmd, "the DPoP host").await;
    assert_eq!(seen["tokenType"], "DPoP", "{seen}");
    assert_eq!(seen["dpop"], 200, "{seen}\n{}", a.log());
    assert_eq!(
        seen["elsewhere"],
        401,
        "the other replica took the proof again: {seen}\n{}",
        b.log()
    );
    assert_eq!(seen["replayed"], 401, "{seen}");
}
