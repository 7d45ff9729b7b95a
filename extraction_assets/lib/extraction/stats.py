"""Counters a materialization reports: outcomes (model, fallback_used, failed, skipped, disabled, pending_budget,
pending_batch, pending_deadline, pending_endpoint_stuck), calls, cache hits, chunks, tokens (failed attempts and
re-asks included) and latency percentiles, so a user sees what a run cost, how often it fell back and how much it
left for the next run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from statistics import quantiles

from extraction_assets.lib.models import ExtractionOutcome


class ExtractionTally:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.latencies_ms: list[float] = []

    def add(self, outcomes: Iterable[ExtractionOutcome], written: Mapping[str, int]) -> None:
        self.counts.update(written)
        for outcome in outcomes:
            self.outcomes[outcome.outcome] += 1
            self.counts["documents"] += 1
            self.counts["proposed"] += outcome.proposed
            self.counts["dropped_ungrounded"] += outcome.dropped
            self.counts["capped"] += outcome.capped
            self.counts["failed"] += outcome.status == "failed"
            self.counts["partial"] += outcome.status == "partial"
            self.counts["pending"] += outcome.status == "pending"
            for key in (
                "calls",
                "cache_hits",
                "remembered_failures",
                "chunks",
                "chunk_retries",
                "prompt_tokens",
                "completion_tokens",
            ):
                self.counts[key] += int(outcome.stats.get(key, 0))
            if outcome.stats.get("calls"):
                self.latencies_ms.append(float(outcome.stats.get("latency_ms", 0.0)))

    def latency_percentiles(self) -> dict[str, float]:
        """Per-document model latency (documents that called the model), in milliseconds."""
        if not self.latencies_ms:
            return {}
        if len(self.latencies_ms) == 1:
            only = round(self.latencies_ms[0], 1)
            return {"p50": only, "p95": only, "max": only}
        cuts = quantiles(self.latencies_ms, n=20, method="inclusive")
        return {"p50": round(cuts[9], 1), "p95": round(cuts[18], 1), "max": round(max(self.latencies_ms), 1)}
