"""A Streamable HTTP server built with the Python MCP SDK (PyPI `mcp`), served over TLS by
uvicorn with a certificate of a private certificate authority, for the tests.

Usage: tls_server.py PORT DIR [REDIRECT_URI]. It writes DIR/ca.pem (the authority's certificate, which a client
must trust) and DIR/server.pem and DIR/server.key (for `localhost` and 127.0.0.1, signed by
that authority), then serves one tool, `shout`, at https://127.0.0.1:PORT/mcp. `cryptography`
and `uvicorn` come with the SDK (its `pyjwt[crypto]` and server dependencies).

With REDIRECT_URI it also serves a client ID metadata document at
https://localhost:PORT/client.json: a public OAuth client named by that URL, redirecting there.
"""

import datetime
import ipaddress
import pathlib
import sys

import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mcp.server.mcpserver import MCPServer

port, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
now = datetime.datetime.now(datetime.timezone.utc)
valid = (now - datetime.timedelta(hours=1), now + datetime.timedelta(days=1))


def named(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


ca_key = ec.generate_private_key(ec.SECP256R1())
ca = (
    x509.CertificateBuilder()
    .subject_name(named("gateway tests private CA"))
    .issuer_name(named("gateway tests private CA"))
    .public_key(ca_key.public_key())
    .serial_number(x509.random_serial_number())
    .not_valid_before(valid[0])
    .not_valid_after(valid[1])
    .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    .add_extension(
        x509.KeyUsage(
            digital_signature=True,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=True,
            crl_sign=True,
            encipher_only=False,
            decipher_only=False,
        ),
        critical=True,
    )
    .add_extension(
        x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
    )
    .sign(ca_key, hashes.SHA256())
)
key = ec.generate_private_key(ec.SECP256R1())
cert = (
    x509.CertificateBuilder()
    .subject_name(named("localhost"))
    .issuer_name(ca.subject)
    .public_key(key.public_key())
    .serial_number(x509.random_serial_number())
    .not_valid_before(valid[0])
    .not_valid_after(valid[1])
    .add_extension(
        x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        ),
        critical=False,
    )
    .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    .add_extension(
        x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
    )
    .add_extension(
        x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
        critical=False,
    )
    .sign(ca_key, hashes.SHA256())
)
(out / "server.key").write_bytes(
    key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
)
(out / "server.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
# Written last: the test waits for it.
(out / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))

server = MCPServer("tls-server")


@server.tool()
def shout(text: str) -> str:
    """Upper-cases text."""
    return text.upper()


if len(sys.argv) > 3:
    from starlette.responses import JSONResponse

    @server.custom_route("/client.json", methods=["GET"])
    async def client_document(request):
        url = f"https://localhost:{port}/client.json"
        return JSONResponse(
            {
                "client_id": url,
                "client_name": "Document Host",
                "redirect_uris": [sys.argv[3]],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }
        )


uvicorn.run(
    server.streamable_http_app(),
    host="127.0.0.1",
    port=port,
    ssl_certfile=str(out / "server.pem"),
    ssl_keyfile=str(out / "server.key"),
    log_level="warning",
)
