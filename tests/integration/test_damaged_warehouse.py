"""A damaged warehouse file, five ways, under the real command line: `review list` says in one line which file cannot
be read and what to do (exit 74), never a Python traceback."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.review_seed import seed

BLOCK, FIRST_BLOCK = 256 * 1024, 3 * 4096  # DuckDB's block size, and where its blocks start after the file headers


def _flip_every_block(data: bytes) -> bytes:
    damaged = bytearray(data)
    for at in range(FIRST_BLOCK + 64, len(damaged), BLOCK):
        damaged[at] ^= 0xFF
    return bytes(damaged)


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "cut short": lambda data: data[: len(data) // 2],
    "random bytes": lambda data: random.Random(1).randbytes(len(data)),
    "headers zeroed": lambda data: b"\0" * FIRST_BLOCK + data[FIRST_BLOCK:],
    "a text file": lambda data: b"this is not a database\n",
    "a block's checksum broken": _flip_every_block,
}


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("healthy") / "w.duckdb"
    seed(path)
    return path.read_bytes()


@pytest.mark.parametrize("how", DAMAGE)
def test_review_list_on_a_damaged_warehouse_says_which_file_and_what_to_do(
    tmp_path: Path, healthy: bytes, how: str
) -> None:
    warehouse = tmp_path / "w.duckdb"
    warehouse.write_bytes(DAMAGE[how](healthy))
    command = [str(Path(sys.executable).with_name("extraction-assets")), "review", "list", "--tenant", "acme"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_", "COLUMNS"))}  # whole lines
    done = subprocess.run(
        [*command, "--warehouse", str(warehouse)], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    said = (done.stdout + done.stderr).strip()
    assert "Traceback" not in said, said[-3000:]
    assert done.returncode == 74, said
    assert len(said.splitlines()) == 1 and said.startswith(f"error: the warehouse {warehouse} cannot be read (")
    assert "restore it from a backup" in said
