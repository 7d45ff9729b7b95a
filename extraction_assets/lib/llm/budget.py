"""What a run may spend on the model, what it cost, and the request that must wait for a later run.

Before a request is sent it reserves an estimate of its tokens (`estimate_tokens`); once sent, the reservation is
settled with the real usage (prompt plus completion, failed attempts and validation re-asks included). A request
starts only while the tokens spent and those reserved by requests in flight stay under the budget, so concurrent
requests never start on the same unspent tokens: a run overshoots by at most its last request plus what the
estimates of the requests in flight missed, whatever the concurrency. A request deferred to a batch keeps its
reservation for the rest of the run (a run submits no more than its budget allows), and a later run that stores
the batch's answers spends their real usage. A request that may not start raises `Deferred`: its document stays
pending (never failed, never half-stored) and the next run continues from the cached answers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

DeferReason = Literal["budget", "batch", "deadline", "endpoint_stuck"]
BYTES_PER_TOKEN = 3  # UTF-8 bytes: an over-estimate for English (about 4 characters a token), close for CJK
COMPLETION_RESERVE = 512  # tokens reserved for an answer when the endpoint sets no `max_tokens`


class Deferred(RuntimeError):
    """The request gets no answer in this run: the token budget is spent (`budget`), it waits in a batch (`batch`), it
    ran past its deadline (`deadline`), or the endpoint is stuck and it was not sent (`endpoint_stuck`)."""

    def __init__(self, reason: DeferReason) -> None:
        super().__init__(f"deferred: {reason}")
        self.reason: DeferReason = reason
        self.stats: dict[str, float] = {}  # what the document's requests before this one cost
        self.cost: Any = None  # a CallStats: what this request cost when it was sent and ran out of time


class Prices(BaseModel):
    """The endpoint's prices per million tokens, as its price list states them."""

    per_mtok_in: float = Field(ge=0)
    per_mtok_out: float = Field(ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return round((prompt_tokens * self.per_mtok_in + completion_tokens * self.per_mtok_out) / 1_000_000, 6)


def estimated_cost(prices: Prices | None, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The cost of the tokens at the configured prices; None when no price is configured."""
    return prices.cost(prompt_tokens, completion_tokens) if prices else None


def estimate_tokens(texts: Sequence[str], max_tokens: int | None) -> int:
    """A request's tokens before it is sent: its prompt texts (messages and response schema) by their UTF-8 size,
    and the answer's bound (or `COMPLETION_RESERVE`)."""
    prompt = sum(len(t.encode("utf-8")) for t in texts) // BYTES_PER_TOKEN
    return prompt + (max_tokens or COMPLETION_RESERVE)


class TokenBudget:
    """Tokens spent and reserved by one run's requests, shared by its threads; `limit` None means no cap."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.spent = 0
        self.reserved = 0  # estimates of requests in flight, and of requests deferred to a batch
        self._lock = threading.Lock()

    def reserve(self, estimate: int) -> None:
        """Before a request is sent: hold its estimate, or raise `Deferred("budget")` once the tokens spent and
        reserved reach the budget."""
        with self._lock:
            if self.limit is not None and self.spent + self.reserved >= self.limit:
                raise Deferred("budget")
            self.reserved += estimate

    def settle(self, estimate: int, tokens: int) -> None:
        """A reserved request got its answer (or failed): its real usage replaces its estimate."""
        with self._lock:
            self.reserved -= estimate
            self.spent += tokens

    def spend(self, tokens: int) -> None:
        """Tokens spent without a reservation in this run: the answers of a batch an earlier run submitted."""
        with self._lock:
            self.spent += tokens
