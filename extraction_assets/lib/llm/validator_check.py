"""instructor's refusal of asynchronous validators, decided once per response model class instead of per request.

instructor 1.17 refuses a response model that carries its asynchronous validators (its synchronous runtime would not
run them) by walking the model's classes, their members and their fields' annotations, five times on every request:
28% of a call's client CPU (a profile of 300 pulse calls: 0.48 of 1.72 s), and 16 calls in flight share one
interpreter. The walk's verdict belongs to the class, which does not change after it is built, so a class that passed
is not walked again; one that fails is refused every time, as before. instructor looks the function up in its module
at each call, so replacing it there is enough (a unit test reads the installed call sites).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

_LOCK = threading.Lock()
_MARK = "_extraction_assets_once"  # set on the replacement, so it is installed once per process


def once_per_class(check: Callable[[Any], None]) -> Callable[[Any], None]:
    """`check`, skipped for a class that passed it before (weakly held: a class that goes away is forgotten)."""
    passed: weakref.WeakSet[type] = weakref.WeakSet()

    def checked(response_model: Any) -> None:
        if isinstance(response_model, type) and response_model in passed:
            return
        check(response_model)
        if isinstance(response_model, type):
            passed.add(response_model)

    setattr(checked, _MARK, True)
    checked.__wrapped__ = check  # type: ignore[attr-defined]
    return checked


def install() -> None:
    """Replace instructor's check by its once-per-class form (idempotent, thread-safe)."""
    from instructor.v2.validation import async_validators  # instructor loads with the first call

    with _LOCK:
        if not getattr(async_validators.reject_async_validators, _MARK, False):
            checked = once_per_class(async_validators.reject_async_validators)
            async_validators.reject_async_validators = checked  # type: ignore[assignment]  # same signature
