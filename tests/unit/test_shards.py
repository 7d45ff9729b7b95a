"""Shards: each document belongs to exactly one shard, always the same; one shard keeps today's partition keys."""

from __future__ import annotations

import hashlib
from collections import Counter

import dagster as dg
import pytest

from extraction_assets.defs.partitions import extraction_partition, extraction_partitions_for, schema_versions
from extraction_assets.lib.models import Document
from extraction_assets.lib.warehouse import ALL_DOCUMENTS, Shard, shard_of

DOC_IDS = [Document.make_id("acme", "text", f"note {n}") for n in range(400)]


def test_shards_split_the_documents_without_overlap_and_evenly() -> None:
    shards = [Shard(i, 4) for i in range(4)]
    taken = [shard.take(DOC_IDS) for shard in shards]
    assert sorted(d for part in taken for d in part) == sorted(DOC_IDS)
    assert all(60 < len(part) < 140 for part in taken), [len(p) for p in taken]
    assert Counter(shard_of(d, 4) for d in DOC_IDS) == Counter({i: len(p) for i, p in enumerate(taken)})


def test_a_document_keeps_its_shard() -> None:
    # the assignment is part of the stored layout: a changed hash would move documents between shards
    expected = int.from_bytes(hashlib.sha256(b"0" * 24).digest()[:8], "big") % 4
    assert shard_of("0" * 24, 4) == expected
    assert Shard(expected, 4).holds("0" * 24)


def test_one_shard_is_every_document_in_order() -> None:
    assert ALL_DOCUMENTS.take(DOC_IDS) == DOC_IDS
    with pytest.raises(ValueError):
        Shard(4, 4)


def test_one_shard_keeps_the_schema_version_keys() -> None:
    assert extraction_partitions_for(1) is schema_versions
    assert extraction_partition("pulse@v1") == ("pulse@v1", ALL_DOCUMENTS)


def test_shards_add_a_static_dimension() -> None:
    partitions = extraction_partitions_for(4)
    assert isinstance(partitions, dg.MultiPartitionsDefinition)
    assert [d.name for d in partitions.partitions_defs] == ["schema_version", "shard"]
    key = dg.MultiPartitionKey({"schema_version": "pulse@v1", "shard": "2"})
    assert str(key) == "pulse@v1|2"
    schema_key, shard = extraction_partition(key, shards=4)
    assert schema_key == "pulse@v1" and shard.index == 2
