"""The SSRF guard of every outbound request to a URL someone else chose (web_fetch, API callbacks).

`vet` resolves the host off the event loop and refuses it unless every address is public; the
connection then goes to exactly the vetted addresses through a pinned resolver, so a DNS answer that
changes between check and connect (rebinding) cannot lead inside. `allow_hosts` names hosts exempt from
the address rules (tests, or an operator's own intranet service).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

METADATA_IPS = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
BLOCKED_NAMES = {"metadata.google.internal", "metadata", "instance-data"}


class Refused(Exception):
    """The URL must not be reached; the message says why, for whoever gave the URL."""


NAT64 = ipaddress.ip_network("64:ff9b::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address leads to: mapped, 6to4 (2002::/16), Teredo (2001::/32), NAT64."""
    found = [a for a in (ip.ipv4_mapped, ip.sixtofour) if a is not None]
    found += list(ip.teredo or ())
    if ip in NAT64:
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def unsafe_reason(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address):
        for inner in embedded_ipv4(ip):
            if reason := unsafe_reason(inner):
                return f"{reason} (embedded in {ip})"
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
    if ip in METADATA_IPS:
        return "a cloud metadata endpoint"
    checks = [("an unspecified address", ip.is_unspecified), ("a loopback address", ip.is_loopback),
              ("a link-local address", ip.is_link_local), ("a private address", ip.is_private),
              ("a multicast address", ip.is_multicast), ("a reserved address", ip.is_reserved),
              ("not a public address", not ip.is_global)]
    return next((reason for reason, hit in checks if hit), None)


class PinnedResolver(AbstractResolver):
    """Answers only with addresses we vetted for this fetch; anything else fails to connect."""

    def __init__(self) -> None:
        self.pins: dict[str, list[ResolveResult]] = {}

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        if host not in self.pins:
            raise OSError(f"{host} was not checked before connecting")
        return [{**r, "port": port} for r in self.pins[host]]

    async def close(self) -> None:
        return None


AddrInfo = tuple[int, int, int, str, tuple[Any, ...]]  # what getaddrinfo returns per address
Lookup = Callable[[str, int], Awaitable[Sequence[AddrInfo]]]


async def system_lookup(host: str, port: int) -> Sequence[AddrInfo]:
    """The system resolver; loop.getaddrinfo runs in a worker thread, off the event loop."""
    return await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)


def allow_list(hosts: list[str]) -> frozenset[str]:
    """Configured exempt hosts as `vet` compares them: lower case, no brackets around an IPv6 literal."""
    return frozenset(h.lower().strip().strip("[]") for h in hosts if h.strip())


async def vet(url: URL, allow_hosts: Collection[str], resolver: PinnedResolver, lookup: Lookup = system_lookup) -> None:
    """Raise Refused unless `url` is http(s) to public addresses (or an allowed host); pin what was checked."""
    if url.scheme not in ("http", "https"):
        raise Refused(f"only http and https URLs can be fetched, not {url.scheme or 'this'!r}")
    host = (url.host or "").lower().rstrip(".")
    if not host:
        raise Refused("the URL has no host")
    allowed = host in allow_hosts
    if host in BLOCKED_NAMES and not allowed:
        raise Refused(f"{host} is a cloud metadata name")
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        if not allowed and (reason := unsafe_reason(literal)):
            raise Refused(f"{host} is {reason}")
        return  # aiohttp connects to an IP literal directly, without a resolver
    try:
        infos = await lookup(host, url.port or 0)
    except socket.gaierror as e:
        raise Refused(f"could not resolve {host}") from e
    pins: list[ResolveResult] = []
    for family, _, proto, _, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if not allowed and (reason := unsafe_reason(address)):
            raise Refused(f"{host} resolves to {address}, {reason}")
        pins.append({"hostname": host, "host": str(address), "port": 0, "family": family, "proto": proto,
                     "flags": socket.AI_NUMERICHOST})
    for name in {host, url.host, url.raw_host}:  # aiohttp asks with the raw (IDNA) host
        if name:
            resolver.pins[name] = pins


def guarded_session(timeout: aiohttp.ClientTimeout, user_agent: str) -> tuple[aiohttp.ClientSession, PinnedResolver]:
    """A client session that connects only to what `vet` pinned on the returned resolver."""
    resolver = PinnedResolver()
    connector = aiohttp.TCPConnector(resolver=resolver, use_dns_cache=False)
    session = aiohttp.ClientSession(connector=connector, timeout=timeout, headers={"User-Agent": user_agent})
    return session, resolver
