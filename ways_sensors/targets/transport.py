"""The HTTP transport every HTTP target shares (http, otlp): one POST under a total
deadline, headers from `${ENV}` references, Retry-After, and a per-thread event loop.

The deadline is total, not per read: the request runs under `asyncio.wait_for` on the
calling thread's own event loop, so a server that accepts and then trickles a byte a
second is cut at the rule timeout and its connection closed. A fresh client per request:
a cancelled request must not poison a pooled connection. At most BODY_CAP bytes of a
response body are read (raw, never decompressed; a target that reads the body asks for
`Accept-Encoding: identity`), the rest is discarded with the connection: a consumer
answering gigabytes costs nothing. Redirects are never followed.

What `send` answers: an `Answer` (status, Retry-After, the capped body) for the target
to classify, or the Outcome of a request that got no answer: the deadline passing
(retryable timeout), a request that can never be sent (permanent error: a bad URL, a
header value HTTP cannot carry), the consumer unreachable (retryable error).

Header values may be `${ENV_NAME}`, read from the environment at each attempt; an unset
variable refuses the attempt for good rather than sending an empty credential
(`headers`); a `headers_helper` adds short-lived ones (headers_helper.py). An https: URL
is verified, and may present a client certificate, as the rule's `tls` says
(tlsconf.py). asyncio and httpx are imported at the first request, not with the registry.
`close` ends the calling thread's loop, for a one-shot caller whose thread then ends
(the Target protocol's `close`).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .base import ERROR, TIMEOUT, Outcome, permanent, retryable

if TYPE_CHECKING:
    import asyncio

    from .headers_helper import HeadersHelper
    from .tlsconf import Tls

BODY_CAP = 64 * 1024
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_local = threading.local()


class MissingEnv(KeyError):
    pass


class Answer(NamedTuple):
    """A response: its status, its Retry-After header, at most BODY_CAP bytes of body."""

    status: int
    retry_after: str | None
    body: bytes


def expand_header(value: str) -> str:
    """`value` with each `${NAME}` replaced from the environment; MissingEnv if unset."""

    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in os.environ:
            raise MissingEnv(m.group(1))
        return os.environ[m.group(1)]

    return _ENV.sub(sub, value)


def headers(
    spec_headers: Mapping[str, str], helper: HeadersHelper | None = None, renew: bool = False
) -> dict[str, str] | Outcome:
    """The spec's headers expanded, and over them the headers_helper's (renewed at once
    with `renew`: a 401); or a retryable Outcome: an unset variable (a variable missing
    from the dispatcher's environment is a fault of the set-up, not the consumer's
    verdict on a record, so the records are held, owed and retried, `ways status` names
    the error, and they go once a dispatcher runs where it is set), or a helper that
    failed."""
    try:
        out = {k: expand_header(v) for k, v in spec_headers.items()}
    except MissingEnv as exc:
        return retryable(ERROR, f"header variable {exc.args[0]} is not set")
    if helper is not None:
        from . import headers_helper

        try:
            out.update(headers_helper.headers(helper, renew))
        except headers_helper.HelperError as exc:
            return retryable(ERROR, str(exc))
    return out


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` value: delay-seconds or an HTTP date (RFC 9110
    10.2.3); None when absent or unreadable. A date in the past is 0."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 850 / asctime forms parse naive; HTTP dates are GMT
        from datetime import timezone

        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def is_loopback_url(url: str) -> bool:
    import ipaddress
    from urllib.parse import urlsplit  # here: spec.py loads this module with every kind's

    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _loop() -> asyncio.AbstractEventLoop:
    import asyncio

    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
    return loop


_tls: dict[bool, Any] = {}  # the TLS contexts, made once: loading the CA bundle is slow
_tls_lock = threading.Lock()


def _verify(url: str) -> Any:
    """httpx's default TLS verification, as one context every client shares. An `http:`
    URL speaks no TLS (and no redirect is followed to an `https:` one): its client gets
    a context that loads no CA bundle, since httpx makes one for every client."""
    import httpx

    secure = url[:5].lower() != "http:"
    with _tls_lock:
        if secure not in _tls:
            make = getattr(httpx, "create_ssl_context", None)
            _tls[secure] = make(verify=secure) if make is not None else secure
        return _tls[secure]


def close() -> None:
    """Close this thread's event loop; the next request makes a new one."""
    loop = getattr(_local, "loop", None)
    if loop is not None and not loop.is_closed():
        loop.close()


async def _post(url: str, hdrs: dict[str, str], body: bytes, tls: Tls | None) -> Answer:
    import httpx

    verify = _verify(url)
    ext: dict[str, Any] = {}
    if tls is not None and url[:6].lower() == "https:":
        from .tlsconf import context

        verify = context(tls)
        if tls.server_name:
            ext["sni_hostname"] = tls.server_name
    async with (
        httpx.AsyncClient(timeout=None, follow_redirects=False, verify=verify) as client,
        client.stream("POST", url, content=body, headers=hdrs, extensions=ext) as resp,
    ):
        got = bytearray()
        async for chunk in resp.aiter_raw():
            got += chunk[: BODY_CAP - len(got)]
            if len(got) >= BODY_CAP:
                break  # leaving the stream closes the connection: the rest is never read
        return Answer(resp.status_code, resp.headers.get("retry-after"), bytes(got))


def send(
    url: str, hdrs: dict[str, str], body: bytes, deadline: float, tls: Tls | None = None
) -> Answer | Outcome:
    """POST `body` to `url`, returning by `deadline` (a time.monotonic() instant): the
    answer, or the Outcome of a request that got none (the module docstring); over the
    TLS `tls` says (tlsconf.py) for an https: URL."""
    import asyncio

    import httpx

    from .tlsconf import TlsFileError

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return retryable(TIMEOUT, "deadline passed before the request")
    try:
        return _loop().run_until_complete(
            asyncio.wait_for(_post(url, hdrs, body, tls), timeout=remaining)
        )
    except TlsFileError as exc:  # retryable: the record waits until the file is there
        return retryable(ERROR, str(exc))
    except asyncio.TimeoutError:
        return retryable(TIMEOUT, "cut at the rule timeout")
    except (httpx.UnsupportedProtocol, httpx.InvalidURL, httpx.LocalProtocolError) as exc:
        return permanent(ERROR, type(exc).__name__)  # the same request can never be sent
    except UnicodeError as exc:  # a header value HTTP cannot carry
        return permanent(ERROR, type(exc).__name__)
    except Exception as exc:  # httpx.TransportError, OSError, ...: the consumer was unreachable
        return retryable(ERROR, type(exc).__name__)
