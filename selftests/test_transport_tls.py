"""The transport through proxies (an HTTP target through a forward proxy, an HTTPS one through a CONNECT
tunnel) and with mutual TLS, against loopback peers and a private CA made here.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from types import SimpleNamespace

import pytest
import trustme

from netpeers import ForwardProxy, PeerServer
from petstore_contract.transport import (
    TargetProblem,
)
from petstore_contract.transport.raw import RawRequest, RawSender
from transportkit import KEY, one_line

ROOT = Path(__file__).resolve().parents[1]


# -- proxies --------------------------------------------------------------------------------------


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def test_http_target_through_the_proxy(server: PeerServer, make_transport, no_proxy_env) -> None:
    with ForwardProxy({"petstore.test": server.port}) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        transport = make_transport("http://petstore.test/v1")
        assert transport.request("GET", "/pets").json() == []
        assert [(s.method, s.target) for s in proxy.seen] == [("GET", "http://petstore.test/v1/pets")]
        assert server.requests[0].headers["host"] == "petstore.test"

        no_proxy_env.setenv("NO_PROXY", "petstore.test")
        with pytest.raises(TargetProblem, match="host name not found"):
            make_transport("http://petstore.test/v1").request("GET", "/pets")
        no_proxy_env.delenv("NO_PROXY")
        with pytest.raises(TargetProblem, match="host name not found"):
            make_transport("http://petstore.test/v1", use_proxy_env=False).request("GET", "/pets")
        loopback = make_transport(server.base_url)  # a loopback target never uses the proxy
        assert loopback.session().proxies == {}
        assert loopback.request("GET", "/pets").status == 200
        assert len(proxy.seen) == 1 and len(server.requests) == 2


# -- TLS ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    ca = trustme.CA()
    where = tmp_path_factory.mktemp("pki")
    client = ca.issue_cert("contract-suite@petstore.test")
    ca.cert_pem.write_to_path(str(where / "ca.pem"))
    client.cert_chain_pems[0].write_to_path(str(where / "client.pem"))
    client.private_key_pem.write_to_path(str(where / "client.key"))
    return SimpleNamespace(
        ca=ca,
        server=ca.issue_cert("127.0.0.1", "petstore.test"),
        ca_path=str(where / "ca.pem"),
        cert=str(where / "client.pem"),
        key=str(where / "client.key"),
    )


def tls_context(pki: SimpleNamespace, *, client_certificate: bool) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    pki.server.configure_cert(context)
    if client_certificate:
        context.verify_mode = ssl.CERT_REQUIRED
        pki.ca.configure_trust(context)
    return context


def test_https_target_through_a_connect_tunnel(pki: SimpleNamespace, make_transport, no_proxy_env) -> None:
    with (
        PeerServer(tls=tls_context(pki, client_certificate=False)) as server,
        ForwardProxy({"petstore.test": server.port}) as proxy,
    ):
        no_proxy_env.setenv("HTTPS_PROXY", proxy.url)
        transport = make_transport("https://petstore.test/v1", verify=pki.ca_path)
        assert transport.request("GET", "/pets").status == 200
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key reached the target
        assert [(s.method, s.target) for s in proxy.seen] == [("CONNECT", "petstore.test:443")]
        assert "authorization" not in proxy.seen[0].headers
        assert proxy.tunnelled and KEY.encode() not in proxy.tunnelled  # only ciphertext passed the proxy


def test_mutual_tls(pki: SimpleNamespace, make_transport) -> None:
    with PeerServer(tls=tls_context(pki, client_certificate=True)) as server:
        with_cert = make_transport(server.base_url, verify=pki.ca_path, client_cert=pki.cert, client_key=pki.key)
        assert with_cert.request("GET", "/pets").status == 200
        # Schemathesis passes verify=True to every call: the transport's CA bundle and certificate still apply.
        assert with_cert.session().get(server.base_url + "/pets", verify=True, timeout=2).status_code == 200

        without = make_transport(server.base_url, verify=pki.ca_path)
        with pytest.raises(TargetProblem) as caught:
            without.request("GET", "/pets")
        assert caught.value.kind == "target"
        # TLS 1.3: the server's alert, or (racing it) the connection closed as the request went out.
        assert one_line(caught.value) in (
            f"TLS error talking to https://127.0.0.1:{server.port}: "
            "the target requires a client certificate (--contract-client-cert)",
            f"TLS error talking to https://127.0.0.1:{server.port}: the target closed the connection "
            "during the TLS handshake (does it require a client certificate? --contract-client-cert)",
        )

        untrusted = make_transport(server.base_url, client_cert=pki.cert, client_key=pki.key)
        with pytest.raises(TargetProblem) as caught:
            untrusted.request("GET", "/pets")
        assert one_line(caught.value) == (
            f"TLS error talking to https://127.0.0.1:{server.port}: "
            "certificate verification failed (see --contract-ca-bundle)"
        )
        assert len(server.requests) == 2


def test_the_trust_store_is_read_once_a_run_not_at_every_new_connection(
    pki: SimpleNamespace, make_transport, tmp_path: Path
) -> None:
    """Every write has a new connection, and each HTTP-layer request: the CA bundle (certifi's by default,
    some 140 certificates, ten times a handshake's CPU to parse) is read into the run's TLS context once
    (``transport/tls.py``).  Shown by the bundle's file holding another CA after the first request: the
    writes' new connections and a raw request still verify the target against the bundle as it was read;
    a run that reads it now fails."""
    bundle, other = tmp_path / "bundle.pem", trustme.CA()
    bundle.write_bytes(Path(pki.ca_path).read_bytes())
    with PeerServer(tls=tls_context(pki, client_certificate=True)) as server:
        transport = make_transport(server.base_url, verify=str(bundle), client_cert=pki.cert, client_key=pki.key)
        assert transport.request("GET", "/pets").status == 200
        other.cert_pem.write_to_path(str(bundle))
        created = [transport.request("POST", "/pets", body=b'{"name": "x", "categoryId": 1}') for _ in range(3)]
        assert [a.status for a in created] == [200] * 3  # the peer answers 200 to anything
        assert RawSender(transport.adapter).send(RawRequest("GET", "/pets")).status == 200
        later = make_transport(server.base_url, verify=str(bundle), client_cert=pki.cert, client_key=pki.key)
        with pytest.raises(TargetProblem, match="certificate verification failed") as caught:
            later.request("POST", "/pets", body=b"{}")
        # Refused at the handshake, the write never left: nothing was applied, nothing is lost.
        assert "answer was lost" not in str(caught.value), caught.value
