"""The `http` target: POST the record as JSON; any 2xx is acceptance.

Header values may be `${ENV_NAME}`, read from the environment at dispatch time (an
unset variable refuses the dispatch rather than sending an empty credential). The
deadline is total, not per read: the request runs under `asyncio.wait_for` on the
worker's own event loop, so a server that accepts and then trickles a byte a second
is cut at the rule timeout and its connection closed.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time

from . import DELIVERED, ERROR, REFUSED, TIMEOUT, Outcome

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_local = threading.local()


class MissingEnv(KeyError):
    pass


def expand_header(value: str) -> str:
    def sub(m: re.Match) -> str:
        if m.group(1) not in os.environ:
            raise MissingEnv(m.group(1))
        return os.environ[m.group(1)]

    return _ENV.sub(sub, value)


def _loop() -> asyncio.AbstractEventLoop:
    loop = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
    return loop


async def _post(url: str, headers: dict[str, str], body: bytes) -> int:
    import httpx

    # a fresh client per request: a cancelled request must not poison a pooled connection
    async with httpx.AsyncClient(timeout=None, follow_redirects=False) as client:
        resp = await client.post(url, content=body, headers=headers)
        return resp.status_code


def deliver(spec, record, line: bytes, ctx, deadline: float) -> Outcome:
    try:
        headers = {k: expand_header(v) for k, v in spec.headers.items()}
    except MissingEnv as exc:
        return Outcome(ERROR, f"header variable {exc.args[0]} is not set")
    headers.setdefault("content-type", "application/json")
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return Outcome(TIMEOUT, "deadline passed before the request")
    try:
        status = _loop().run_until_complete(
            asyncio.wait_for(_post(spec.url, headers, line), timeout=remaining)
        )
    except asyncio.TimeoutError:
        return Outcome(TIMEOUT, "cut at the rule timeout")
    except Exception as exc:  # httpx.HTTPError, OSError, ...: the consumer was unreachable
        return Outcome(ERROR, type(exc).__name__)
    if 200 <= status < 300:
        return Outcome(DELIVERED, str(status))
    return Outcome(REFUSED, f"HTTP {status}")
