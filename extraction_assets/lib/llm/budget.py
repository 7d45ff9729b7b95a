"""What a run may spend on the model, what it cost, and the request that must wait for a later run.

A request starts only while the run has used fewer tokens than its budget (prompt plus completion, failed
attempts and validation re-asks included); requests already in flight finish, so a run overshoots by at most
the answers of its concurrent requests. A request that may not start raises `Deferred`: its document stays
pending (never failed, never half-stored) and the next run continues from the cached answers.
"""

from __future__ import annotations

import threading
from typing import Literal

from pydantic import BaseModel, Field

DeferReason = Literal["budget", "batch"]


class Deferred(RuntimeError):
    """The request was not sent in this run: the token budget is spent (`budget`) or it waits in a batch (`batch`)."""

    def __init__(self, reason: DeferReason) -> None:
        super().__init__(f"deferred: {reason}")
        self.reason: DeferReason = reason
        self.stats: dict[str, float] = {}  # what the document's requests before this one cost


class Prices(BaseModel):
    """The endpoint's prices per million tokens, as its price list states them."""

    per_mtok_in: float = Field(ge=0)
    per_mtok_out: float = Field(ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return round((prompt_tokens * self.per_mtok_in + completion_tokens * self.per_mtok_out) / 1_000_000, 6)


def estimated_cost(prices: Prices | None, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The cost of the tokens at the configured prices; None when no price is configured."""
    return prices.cost(prompt_tokens, completion_tokens) if prices else None


class TokenBudget:
    """Tokens spent by one run's requests, shared by its threads; `limit` None means no cap."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.spent = 0
        self._lock = threading.Lock()

    def check(self) -> None:
        """Before a request is sent: raise `Deferred("budget")` once the budget is used up."""
        with self._lock:
            if self.limit is not None and self.spent >= self.limit:
                raise Deferred("budget")

    def spend(self, tokens: int) -> None:
        with self._lock:
            self.spent += tokens

    @property
    def exhausted(self) -> bool:
        with self._lock:
            return self.limit is not None and self.spent >= self.limit
