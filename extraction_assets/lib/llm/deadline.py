"""Every model call's total deadline, kept where the bytes move.

openai's timeout bounds each read of the socket, not the request: an endpoint that sends one byte every 2 s never
trips a 5 s timeout, and one call hung a run for good (its threads, its step, the signal that should have stopped it).
So the client's connections run over a network backend whose every connect, read and write is bounded by what is left
of two deadlines kept per thread:

- the call's: a logical request, its transport retries and validation re-asks included, within
  `EXTRACTION_LLM_TIMEOUT`; past it `CallOutlived` ends the call at once, and the client leaves its document pending;
- the attempt's: one HTTP request from its start to its answer's last byte within the request's own timeout (what
  bounds the requests made outside a call, such as a batch's files); past it the read fails as a timeout.

Reads wait in slices of `READ_SLICE_S`, so a run that stops (`abandon_calls`) ends the calls in flight within one.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

READ_SLICE_S = 0.25  # how long a read waits before it looks at the deadlines and the run's stop again

_state = threading.local()  # per thread: `call` and `attempt`, monotonic times (inf: none)
_abandoned = threading.Event()


class CallOutlived(BaseException):
    """A call past its deadline, or given up because its run stops. Like asyncio's CancelledError it is no
    `Exception`: the layers between the socket and the client (openai's retries, instructor's re-asks) would take an
    `Exception` for a failure to try again, and this call is over."""


@contextmanager
def call_deadline(seconds: float | None) -> Iterator[None]:
    """The calling thread's requests, retries included, end within `seconds` (None: no bound of the call's own)."""
    previous = getattr(_state, "call", math.inf)
    _state.call = min(previous, time.monotonic() + seconds) if seconds is not None else previous
    try:
        yield
    finally:
        _state.call = previous


@contextmanager
def attempt(seconds: float | None) -> Iterator[None]:
    """One HTTP request of the calling thread, its answer read whole, within `seconds` (None: unbounded)."""
    previous = getattr(_state, "attempt", math.inf)
    _state.attempt = time.monotonic() + seconds if seconds is not None else math.inf
    try:
        yield
    finally:
        _state.attempt = previous


def abandon_calls() -> None:
    """The run stops: every call in flight, in every thread, ends at its next read slice."""
    _abandoned.set()


def resume_calls() -> None:
    """Calls may run again (the stopped calls have all ended)."""
    _abandoned.clear()


def _left(timeout: float | None, core: Any, phase: str) -> float:
    """Seconds this operation may take: its own timeout, bounded by the attempt's and the call's deadlines; raises
    when none is left (the attempt's end as the phase's timeout, which openai retries; the call's as CallOutlived)."""
    if _abandoned.is_set():
        raise CallOutlived("the run is stopping: the call was given up")
    now = time.monotonic()
    if getattr(_state, "call", math.inf) <= now:
        raise CallOutlived("the call ran past its deadline")
    if getattr(_state, "attempt", math.inf) <= now:
        raise getattr(core, f"{phase}Timeout")(f"the request ran past its timeout ({phase.lower()})")
    bound = min(getattr(_state, "call", math.inf), getattr(_state, "attempt", math.inf)) - now
    return min(math.inf if timeout is None else timeout, bound)


def _timeout(timeout: float | None, core: Any, phase: str) -> float | None:
    """`_left` as a socket takes it: None for no bound (a socket refuses an infinite timeout)."""
    left = _left(timeout, core, phase)
    return None if math.isinf(left) else left


class _Stream:
    """A connection whose operations end by the thread's deadlines (see the module's docstring)."""

    def __init__(self, inner: Any, core: Any) -> None:
        self._inner = inner
        self._core = core

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        until = time.monotonic() + (math.inf if timeout is None else timeout)
        while True:
            left = min(_left(None, self._core, "Read"), until - time.monotonic())
            if left <= 0:
                raise self._core.ReadTimeout("the endpoint sent nothing within the read timeout")
            try:
                return self._inner.read(max_bytes, min(left, READ_SLICE_S))
            except self._core.ReadTimeout:
                continue  # a slice ended with nothing received: look at the deadlines again

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _timeout(timeout, self._core, "Write"))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> _Stream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _timeout(timeout, self._core, "Connect"))
        return _Stream(inner, self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    """The connection pool's network backend, its connections bounded by the thread's deadlines."""

    def __init__(self, inner: Any, core: Any) -> None:
        self._inner = inner
        self._core = core

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _Stream:
        left = _timeout(timeout, self._core, "Connect")
        stream = self._inner.connect_tcp(host, port, left, local_address, socket_options)
        return _Stream(stream, self._core)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> _Stream:
        stream = self._inner.connect_unix_socket(path, _timeout(timeout, self._core, "Connect"), socket_options)
        return _Stream(stream, self._core)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bound_connections(transport: Any) -> None:
    """Put the deadlines under an HTTP transport's connection pool (httpx's `HTTPTransport`, over httpcore): its
    network backend is wrapped before any connection is made. httpx offers no argument for it, so this reaches its
    pool's backend by name and says so if that ever changes, rather than leaving calls unbounded."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        raise RuntimeError("the HTTP transport has no network backend to bound model calls with (httpx changed?)")
    core = sys.modules[type(backend).__module__.partition(".")[0]]  # httpcore, or the httpcore2 that httpx2 uses
    pool._network_backend = _Backend(backend, core)  # type: ignore[union-attr]
