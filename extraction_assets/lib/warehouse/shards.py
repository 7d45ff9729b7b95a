"""Each writer's share of the documents: shard `index` of `count` holds the documents whose shard key hashes to it.

A document's shard key is its doc_id (itself a content hash), or, for a copy of an e-mail, the record its items are
keyed by (tenant and Message-ID): copies of one message, in a mailbox and as a file, share their items (shape
`records`), so one shard extracts all of them and two shards never write one item at once. Either way a document
belongs to the same shard in every run, on every machine, and shards never overlap: each shard run writes only its
documents.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class Shard:
    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index} of {self.count}: expected 0 <= index < count")

    def holds(self, shard_key: str) -> bool:
        return self.count == 1 or shard_of(shard_key, self.count) == self.index

    def take(self, doc_ids: Sequence[str], records: Mapping[str, str] | None = None) -> list[str]:
        """The documents of this shard, in their order; a document in `records` goes with its record."""
        if self.count == 1:
            return list(doc_ids)
        records = records or {}
        return [d for d in doc_ids if self.holds(records.get(d, d))]


ALL_DOCUMENTS = Shard()


def shard_of(shard_key: str, count: int) -> int:
    return int.from_bytes(hashlib.sha256(shard_key.encode("utf-8")).digest()[:8], "big") % count


def in_shard_sql(shard: Shard, doc_id: str) -> str:
    """A condition keeping the rows whose document (the column `doc_id`) belongs to `shard`, computed in SQL as
    `shard_of` computes it on each document's shard key (`_RECORDS`): TRUE for one shard."""
    if shard.count == 1:
        return "TRUE"
    return f"""{doc_id} IN (SELECT doc_id FROM {_RECORDS}
        WHERE CAST('0x' || sha256(coalesce(record, doc_id))[1:16] AS UBIGINT) % {shard.count:d} = {shard.index:d})"""


def shard_documents(con: duckdb.DuckDBPyConnection, shard: Shard, doc_ids: Sequence[str]) -> list[str]:
    """The documents of `shard` among `doc_ids`, each copy of an e-mail with its record (`shared_records`); no query
    for one shard or no documents (an idle run's)."""
    if shard.count == 1 or not doc_ids:
        return list(doc_ids)
    return shard.take(doc_ids, shared_records(con, doc_ids))


def shared_records(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> dict[str, str]:
    """The documents among `doc_ids` that carry a Message-ID, with the record their items are keyed by: the tenant
    and the Message-ID (`ExtractionInput.record_key`, `pipeline._identity`)."""
    return dict(
        con.execute(
            f"SELECT doc_id, record FROM {_RECORDS} WHERE record IS NOT NULL AND doc_id IN (SELECT unnest(?))",
            [list(doc_ids)],
        ).fetchall()
    )


# every document with the record its items are keyed by, where it carries a Message-ID (else NULL): the one SQL form
# of a copy of an e-mail's shard key, read by `shared_records` and `in_shard_sql`
_RECORDS = """(SELECT doc_id, CASE WHEN message_id <> '' THEN tenant_id || chr(31) || message_id END AS record
    FROM (SELECT doc_id, tenant_id, json_extract_string(metadata, '$.message_id') AS message_id FROM raw_documents))"""
