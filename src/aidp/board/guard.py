"""Who may talk to the board (docs/security.md, "The board"): every request carries the
board's secret token in its URL (in the path, `/t/TOKEN/…`, or in the query,
`?token=TOKEN`) — never in a cookie, which a browser would also send to every other
server on 127.0.0.1, whatever its port; its `Host` is the server's own address
(a DNS-rebinding page names its own host); an `Origin` or `Sec-Fetch-Site` of another
site is refused (CSRF); a write is a POST of JSON. Pure checks of a request's parts,
answered with the one line a refusal says (None: allowed).
"""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import parse_qs

LOOPBACK_NAMES = ("127.0.0.1", "localhost")
WRITE_METHODS = ("POST",)
READ_METHODS = ("GET", "HEAD")


class Guard:
    """The rules of one running board: its token, port and the host names it answers
    to (`host`: the --host given, None: 127.0.0.1 only)."""

    def __init__(self, token: str, port: int, host: str | None = None) -> None:
        self.token = token
        self.port = port
        names = {*LOOPBACK_NAMES}
        if host is not None:
            names.add(_bracketed(host))
        self.names = names
        # --host 0.0.0.0 or ::: the machine's every address, so any IP literal it has.
        self.any_address = host is not None and _unspecified(host)

    def host_allowed(self, host: str | None) -> bool:
        """`Host` names this server: one of its names, with its port."""
        if not host:
            return False
        name, sep, port = host.rpartition(":")
        if not sep or port != str(self.port):
            return False
        name = name.lower()
        if name in self.names:
            return True
        return self.any_address and _ip_literal(name)

    def origin_allowed(self, origin: str | None) -> bool:
        """No `Origin` (a plain client, a same-origin GET), or this server's own."""
        if origin is None:
            return True
        scheme, sep, rest = origin.partition("://")
        return bool(sep) and scheme == "http" and self.host_allowed(rest)

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def split_path(self, path: str) -> tuple[str | None, str]:
        """(the token a `/t/TOKEN/…` path carries, the path after it)."""
        if path.startswith("/t/"):
            token, _sep, rest = path[3:].partition("/")
            return token, "/" + rest
        return None, path

    def refusal(self, method: str, headers: dict[str, str], path_token: str | None,
                query: str) -> tuple[int, str] | None:
        """(HTTP status, the one line saying why) for a request this board refuses."""
        if not self.host_allowed(headers.get("host")):
            return 421, ("Refused: the Host header does not name this board's address "
                         f"(127.0.0.1:{self.port}); open the URL aidp board printed")
        if not self.origin_allowed(headers.get("origin")):
            return 403, "Refused: a request from another site (Origin)"
        if headers.get("sec-fetch-site") == "cross-site" and not _opened(method, headers):
            return 403, "Refused: a request from another site (Sec-Fetch-Site)"
        if method not in READ_METHODS + WRITE_METHODS:
            return 405, f"Refused: method {method} (GET reads, POST writes)"
        given = path_token
        if given is None:
            given = next(iter(parse_qs(query).get("token") or ()), None)
        if not self.token_ok(given):
            return 403, ("Refused: no valid token; open the URL aidp board printed (it "
                         "carries the token)")
        if method in WRITE_METHODS:
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                return 415, "Refused: a write is a POST of application/json"
        return None


def _opened(method: str, headers: dict[str, str]) -> bool:
    """A page opened in a window of its own (a link followed, the file `aidp board`
    opens the browser on): a read that still needs the token, never a write, and
    nothing another site can read (every GET only reads)."""
    return (method in READ_METHODS and headers.get("sec-fetch-mode") == "navigate"
            and headers.get("sec-fetch-dest") == "document")


def _bracketed(host: str) -> str:
    host = host.lower()
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def _ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False
