"""The model client through an HTTP proxy: a CONNECT tunnel for https (TLS end to end, the proxy sees only the
host and port), the absolute-URI form for plain http. The proxy URL may carry `user:password@` (Basic auth)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True, slots=True)
class Proxy:
    host: str
    port: int
    authorization: str | None  # the Proxy-Authorization header's value

    @classmethod
    def parse(cls, url: str) -> Proxy:
        """ValueError for what the model client cannot use (a socks or https proxy, no host)."""
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the proxy for the model must be an http:// proxy, not {shown(url)!r}")
        auth = None
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            auth = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        return cls(parts.hostname, parts.port or 80, auth)

    def connect_request(self, host: str, port: int) -> bytes:
        """The CONNECT request that opens a tunnel to host:port."""
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        auth = f"Proxy-Authorization: {self.authorization}\r\n" if self.authorization else ""
        return f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{auth}\r\n".encode("latin-1")

    def header_lines(self) -> str:
        """What a plain-http request through the proxy carries besides its own headers."""
        return f"Proxy-Authorization: {self.authorization}\r\n" if self.authorization else ""


def shown(url: str) -> str:
    """A proxy URL without its user and password, for messages and logs."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()
