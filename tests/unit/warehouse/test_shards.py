"""Shards: each document belongs to exactly one shard, always the same; one shard keeps today's partition keys."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.defs.partitions import extraction_partition, extraction_partitions_for, schema_versions
from extraction_assets.lib.models import Document
from extraction_assets.lib.warehouse import (
    ALL_DOCUMENTS,
    Shard,
    insert_documents,
    open_warehouse,
    shard_documents,
    shard_of,
)
from extraction_assets.lib.warehouse.shards import in_shard_sql
from extraction_assets.runner import shard_ranges

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


def _mail(tenant: str, message_id: str, text: str) -> Document:
    metadata = {"message_id": message_id} if message_id else {}
    doc_id = Document.make_id(tenant, "email", text, metadata)
    return Document(
        doc_id=doc_id, tenant_id=tenant, source_uri=f"{tenant}/{doc_id}", kind="email", text=text, metadata=metadata
    )


def test_copies_of_one_message_are_in_one_shard_and_other_documents_by_their_id(tmp_path: Path) -> None:
    # a message's records are keyed by tenant and Message-ID: were its copies (a file, a mailbox's message) in two
    # shards, two shard runs on a lake could both insert one item
    copies = [_mail("acme", f"<m{n}@example.org>", f"copy {c} of message {n}") for n in range(40) for c in range(3)]
    elsewhere = [_mail("globex", f"<m{n}@example.org>", f"copy 0 of message {n}") for n in range(40)]
    plain = [_mail("acme", "", f"no message id {n}") for n in range(40)]
    documents = copies + elsewhere + plain
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, documents)
        ids = [d.doc_id for d in documents]
        taken = [shard_documents(con, Shard(i, 4), ids) for i in range(4)]
        assert shard_documents(con, ALL_DOCUMENTS, ids) == ids
    assert sorted(d for part in taken for d in part) == sorted(ids)
    shard_of_doc = {d: i for i, part in enumerate(taken) for d in part}
    for n in range(40):
        assert len({shard_of_doc[d.doc_id] for d in copies[3 * n : 3 * n + 3]}) == 1
    # the same Message-ID in another tenant is another record
    assert len({shard_of_doc[d.doc_id] for d in elsewhere}) == 4
    assert all(shard_of_doc[d.doc_id] == shard_of(d.doc_id, 4) for d in plain)
    assert all(taken[i] == [d for d in ids if d in taken[i]] for i in range(4))  # in their order


def test_the_shard_condition_in_sql_keeps_the_documents_each_shard_takes(tmp_path: Path) -> None:
    # the checks of a shard's run keep its rows in SQL (`in_shard_sql`); the extraction takes them in Python
    copies = [_mail("acme", f"<m{n}@example.org>", f"copy {c} of message {n}") for n in range(30) for c in range(2)]
    plain = [_mail("acme", "", f"no message id {n}") for n in range(60)]
    documents = copies + plain
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, documents)
        ids = [d.doc_id for d in documents]
        for count in (1, 2, 3, 4):
            for index in range(count):
                shard = Shard(index, count)
                kept = con.execute(f"SELECT doc_id FROM raw_documents r WHERE {in_shard_sql(shard, 'r.doc_id')}")
                assert sorted(row[0] for row in kept.fetchall()) == sorted(shard_documents(con, shard, ids))


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


def test_a_run_from_the_first_to_the_last_version_of_a_shard_covers_that_shard_of_each_version_alone() -> None:
    """The runner extracts a shard's every version in one run (`shard_ranges`): Dagster reads a multi-partition
    range dimension by dimension, so `first|s .. last|s` is shard s of every version in between, and nothing else."""
    instance = dg.DagsterInstance.ephemeral()
    versions = ["contract@v1", "email@v1", "pulse@v1"]
    instance.add_dynamic_partitions(schema_versions.name or "", versions)
    [(shard, keys)] = shard_ranges([versions[1:]], [2])
    assert shard == 2 and keys == ["email@v1|2", "pulse@v1|2"]
    partitions = extraction_partitions_for(4)
    assert isinstance(partitions, dg.MultiPartitionsDefinition)
    covered = partitions.get_partition_keys_in_range(
        dg.PartitionKeyRange(keys[0], keys[-1]), dynamic_partitions_store=instance
    )
    assert covered == keys
    assert [(s, [str(k) for k in ks]) for s, ks in shard_ranges([["a@v1"], ["c@v1"]], [0, 1])] == [
        (0, ["a@v1|0"]),
        (0, ["c@v1|0"]),
        (1, ["a@v1|1"]),
        (1, ["c@v1|1"]),
    ]


SHARDED_CODE_LOCATION = """
import datetime
import json
import tempfile
import dagster as dg
from extraction_assets.definitions import build_definitions
from extraction_assets.defs.sensors import schema_version_sensor
from extraction_assets.defs.schedules import nightly_extract_schedule
from extraction_assets.lib.settings import Settings
defs = build_definitions(Settings())
dg.Definitions.validate_loadable(defs)
instance = dg.DagsterInstance.local_temp(tempfile.mkdtemp())
sensor = schema_version_sensor(dg.build_sensor_context(instance=instance, resources=defs.resources))
instance.add_dynamic_partitions("schema_versions", ["pulse@v1"])
at_two = datetime.datetime(2026, 12, 1, 2, tzinfo=datetime.timezone.utc)
context = dg.build_schedule_context(instance=instance, scheduled_execution_time=at_two, resources=defs.resources)
nightly = list(nightly_extract_schedule(context))
review = defs.resolve_assets_def("review_queue")
print(json.dumps({
    "extract_partitions": type(defs.resolve_job_def("extract_job").partitions_def).__name__,
    "jobs": sorted(j.name for j in defs.jobs),
    "sensor_pulse": sorted(r.partition_key for r in sensor.run_requests if r.partition_key.startswith("pulse@v1")),
    "nightly": sorted(r.partition_key for r in nightly),
    "queue_partitions": type(review.partitions_def).__name__,
}))
"""


def test_with_four_shards_the_code_location_loads_and_asks_for_a_run_per_shard(tmp_path: Path) -> None:
    env = {**os.environ, "EXTRACTION_SHARDS": "4", "EXTRACTION_WAREHOUSE": str(tmp_path / "w.duckdb")}
    out = subprocess.run([sys.executable, "-c", SHARDED_CODE_LOCATION], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    per_shard = [f"pulse@v1|{i}" for i in range(4)]
    assert loaded == {
        "extract_partitions": "MultiPartitionsDefinition",
        "jobs": ["challenger_job", "extract_job", "ingest_job", "live_mail_job", "review_job", "session_job"],
        "sensor_pulse": per_shard,
        "nightly": per_shard,
        "queue_partitions": "DynamicPartitionsDefinition",
    }
