"""The model-response cache backed by the warehouse's `llm_cache` table.

Look-ups open a short read of the warehouse (never held while a model works); new answers wait in
memory and are stored in the same transaction as the batch of documents they served, so a batch
that fails leaves neither items nor half its cache behind.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from extraction_assets.lib.llm import MemoryCache
from extraction_assets.lib.warehouse import cache_entry, open_warehouse


class WarehouseCache(MemoryCache):
    def __init__(self, warehouse: Path | str) -> None:
        super().__init__()
        self.warehouse = Path(warehouse)
        self._read_lock = threading.Lock()

    def get(self, request_hash: str) -> dict[str, Any] | None:
        if (hit := super().get(request_hash)) is not None:
            return hit
        with self._read_lock, open_warehouse(self.warehouse) as con:
            return cache_entry(con, request_hash)
