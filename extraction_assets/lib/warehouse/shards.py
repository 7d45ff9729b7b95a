"""Each writer's share of the documents: shard `index` of `count` holds the documents whose doc_id hashes to it.

The hash is of the doc_id (itself a content hash), so a document belongs to the same shard in every run, on every
machine, and shards never overlap: each shard run writes only its documents.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Shard:
    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index} of {self.count}: expected 0 <= index < count")

    def holds(self, doc_id: str) -> bool:
        return self.count == 1 or shard_of(doc_id, self.count) == self.index

    def take(self, doc_ids: Sequence[str]) -> list[str]:
        """The documents of this shard, in their order."""
        return list(doc_ids) if self.count == 1 else [d for d in doc_ids if self.holds(d)]


ALL_DOCUMENTS = Shard()


def shard_of(doc_id: str, count: int) -> int:
    return int.from_bytes(hashlib.sha256(doc_id.encode("utf-8")).digest()[:8], "big") % count
