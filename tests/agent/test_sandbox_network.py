"""`tools.shell_network`: real bubblewrap commands reach public hosts through the egress proxy, nothing else.

The "public" host is a server on 127.0.0.1 named `public.example` by the tests' resolver and exempted by
the allow-list (`tools.web_allow_hosts`), exactly as web_fetch's tests do; every other name and address
goes through the production rules. `/secret` on the same server stands for the dashboard or a local
database: no test may ever see it requested.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from bot.agent.approvals import Approvals
from bot.agent.tools import egress, sandbox, shell
from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.httpkit import netguard
from tests.fakes.serve import serve_local
from tests.fakes.tls import self_signed

DNS = {"public.example": "127.0.0.1", "loopback.example": "127.0.0.1", "intranet.example": "10.0.0.5"}


async def table_lookup(host: str, port: int) -> list[netguard.AddrInfo]:
    """The tests' resolver: a fixed table, so no test asks a real DNS server."""
    if host == "slow.example":
        await asyncio.sleep(60)  # a resolver that never answers in time
    if host == "empty.example":
        return []  # a resolver that answers with nothing: never connected to by name
    if host not in DNS:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (DNS[host], port))]


POLICY = egress.Policy(netguard.allow_list(["public.example"]), table_lookup)


@dataclass
class Site:
    port: int = 0
    hits: list[tuple[str, str]] = field(default_factory=list)  # (path, Host header)


@pytest_asyncio.fixture
async def site() -> AsyncIterator[Site]:
    state = Site()

    async def handle(request: web.Request) -> web.StreamResponse:
        state.hits.append((request.path, request.headers.get("Host", "")))
        if request.path == "/page":
            return web.Response(text="a public page")
        if request.path == "/to-loopback":
            raise web.HTTPFound(f"http://127.0.0.1:{state.port}/secret")
        if request.path == "/to-name":
            raise web.HTTPFound(f"http://loopback.example:{state.port}/secret")
        if request.path == "/echo":
            return web.Response(text=(await request.read()).decode())
        return web.Response(text="SECRET dashboard data")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner, state.port = await serve_local(app)
    yield state
    await runner.cleanup()


async def run(ctx: ToolContext, command: str) -> str:
    return await shell.run_command(command, ctx, 30, network=POLICY)


async def test_curl_and_python_reach_a_public_host(ctx: ToolContext, site: Site) -> None:
    url = f"http://public.example:{site.port}/page"
    plain = await run(ctx, f"curl -sS {url}")
    tunnel = await run(ctx, f"curl -sS --proxytunnel {url}")  # CONNECT, as for https
    python = await run(ctx, f"python3 -c 'import urllib.request; print(urllib.request.urlopen(\"{url}\").read())'")
    posted = await run(ctx, f"curl -sS -d 'a body' http://public.example:{site.port}/echo")
    assert plain == tunnel == "exit code 0\na public page"
    assert python == "exit code 0\nb'a public page'"
    assert posted == "exit code 0\na body"
    assert site.hits[0] == ("/page", f"public.example:{site.port}")
    assert [path for path, _ in site.hits] == ["/page", "/page", "/page", "/echo"]


async def test_https_goes_through_the_tunnel(ctx: ToolContext, tmp_path: Path) -> None:
    """TLS end to end: the proxy sees only CONNECT public.example:port, curl checks the server's certificate."""
    context, cert = self_signed(tmp_path, ("public.example",))

    async def hello(request: web.Request) -> web.Response:
        return web.Response(text=f"tls {request.secure}")

    app = web.Application()
    app.router.add_get("/", hello)
    runner, port = await serve_local(app, ssl_context=context)
    try:
        ctx.workdir.mkdir()
        (ctx.workdir / "ca.pem").write_bytes(cert.read_bytes())
        out = await run(ctx, f"curl -sS --cacert ca.pem https://public.example:{port}/")
        loopback = await run(ctx, f"curl -sS --cacert ca.pem https://localhost:{port}/ 2>&1")
    finally:
        await runner.cleanup()
    assert out == "exit code 0\ntls True"
    assert "CONNECT tunnel failed, response 403" in loopback


@pytest.mark.parametrize("target, reason", [
    ("http://127.0.0.1:{port}/secret", "a loopback address"),
    ("http://[::1]:{port}/secret", "a loopback address"),
    ("http://loopback.example:{port}/secret", "resolves to 127.0.0.1"),
    ("http://intranet.example/", "resolves to 10.0.0.5, a private address"),
    ("http://192.168.1.1/", "a private address"),
    ("http://100.64.0.1/", "not a public address"),
    ("http://169.254.169.254/latest/meta-data/", "a cloud metadata endpoint"),
    ("http://[fd00:ec2::254]/", "a cloud metadata endpoint"),
    ("http://metadata.google.internal/", "a cloud metadata name"),
    ("http://0.0.0.0:{port}/secret", "an unspecified address"),
    ("http://empty.example:{port}/secret", "empty.example resolved to no address"),
])
async def test_internal_addresses_are_refused(ctx: ToolContext, site: Site, target: str, reason: str) -> None:
    url = target.format(port=site.port)
    plain = await run(ctx, f"curl -sS -w ' %{{http_code}}' {url}")
    tunnel = await run(ctx, f"curl -sS --proxytunnel {url}; echo")
    assert plain.startswith("exit code 0\nbothub sandbox proxy: refused:") and reason in plain
    assert plain.endswith(" 403")
    assert "CONNECT tunnel failed, response 403" in tunnel
    assert site.hits == []


async def test_a_redirect_inside_is_refused_at_its_hop(ctx: ToolContext, site: Site) -> None:
    for path in ("/to-loopback", "/to-name"):
        out = await run(ctx, f"curl -sS -L -w ' %{{http_code}}' http://public.example:{site.port}{path}")
        assert "refused:" in out and out.endswith(" 403") and "SECRET" not in out
    assert [p for p, _ in site.hits] == ["/to-loopback", "/to-name"]


async def test_nothing_but_the_proxy_leads_out(ctx: ToolContext, site: Site) -> None:
    raw = await run(ctx, f"(echo x > /dev/tcp/127.0.0.1/{site.port}) 2>&1; "
                         f"curl -sS --noproxy '*' http://127.0.0.1:{site.port}/secret; "
                         "(echo x > /dev/tcp/10.0.0.5/80) 2>&1; getent hosts public.example || echo no-dns; "
                         f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {site.port}), 3)'")
    assert "Connection refused" in raw and "Network is unreachable" in raw and "no-dns" in raw
    assert "ConnectionRefusedError" in raw and "SECRET" not in raw
    assert site.hits == []
    env = await run(ctx, "env | grep -i _proxy=")
    assert sorted(env.splitlines()[1:]) == sorted(f"{name}=http://127.0.0.1:3128" for name in
                                                  ("ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY", "all_proxy",
                                                   "https_proxy", "http_proxy"))


async def test_odd_requests_get_a_polite_answer(ctx: ToolContext, site: Site) -> None:
    ask = ("python3 -c 'import socket, sys; s = socket.create_connection((\"127.0.0.1\", 3128)); "
           "s.sendall(sys.argv[1].encode() + b\"\\r\\n\\r\\n\"); print(s.recv(200).split(b\"\\r\\n\")[0])' ")
    out = await run(ctx, f"{ask}'GET /relative HTTP/1.1'; {ask}'GET https://public.example/ HTTP/1.1'; "
                         f"{ask}'CONNECT public.example HTTP/1.1'; {ask}'nonsense'")
    assert out.splitlines()[1:] == ["b'HTTP/1.1 400 Bad Request'"] * 4
    assert site.hits == []


async def test_connections_end_with_the_command(ctx: ToolContext, site: Site,
                                                caplog: pytest.LogCaptureFixture) -> None:
    """A tunnel kept open, a head never finished and a name still resolving: none outlives the command."""
    opened = (f"(sleep 50 | curl -sS --proxytunnel -m 50 telnet://public.example:{site.port} > /dev/null &); "
              "(exec 3<>/dev/tcp/127.0.0.1/3128; sleep 50) & "
              "(curl -sS -m 50 http://slow.example/ &); sleep 1; echo done")
    started = asyncio.get_running_loop().time()
    with caplog.at_level(logging.ERROR):
        out = await run(ctx, opened)
        await asyncio.sleep(0.2)
    assert out == "exit code 0\ndone" and asyncio.get_running_loop().time() - started < 8
    assert [r.getMessage() for r in caplog.records if r.name in ("asyncio", "bothub.shell")] == []


async def test_without_the_proxy_setup_the_shell_is_not_offered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    sandbox.network_problem.cache_clear()
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the helper that joins the sandbox's namespace fails
    try:
        registry = ToolRegistry()
        with caplog.at_level(logging.ERROR, "bothub.shell"):
            shell.register(registry, Approvals(), timeout=5, enabled=True, network=POLICY)
        assert registry.names == []
        assert "the shell tool is disabled: the sandbox's network cannot be set up here" in caplog.text
        out = await shell.run_command("echo ran", ToolContext(chat="t:1", workdir=tmp_path / "c"), 10, POLICY)
        assert out.startswith("Error: the sandbox's network could not be set up") and "ran" not in out
    finally:
        monkeypatch.undo()
        sandbox.network_problem.cache_clear()
    assert sandbox.network_problem() is None
