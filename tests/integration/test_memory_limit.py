"""Many tiny rows under a real memory limit: a run of the command line in a process limited to 3 GiB of address space
(`RLIMIT_AS`), an inbox where one tenant dropped an 8 MB CSV of 4 M one-character rows, a 1 M-row workbook and a
JSONL file of 2.7 M lines. Before the readers counted rows, the CSV alone took 6.7 GB to read and runs under a 4 GB
limit were killed with nothing stored for any tenant. The run must survive, store the other tenants' documents, and
make each of those files a dead letter that says why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from evals.hostile_files import tiny_rows
from extraction_assets.lib.settings import SAMPLE_INBOX

resource = pytest.importorskip("resource")  # POSIX only
pytestmark = pytest.mark.long(60)
LIMIT_BYTES = 3 * 1024**3
HOSTILE = {"rows.csv": 4_000_000, "rows.xlsx": 1_000_000, "lines.jsonl": 2_700_000}


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def test_a_file_of_millions_of_tiny_rows_is_a_dead_letter_and_costs_no_other_tenant_its_run(
    tmp_path: Path, prompts: Path
) -> None:
    inbox, warehouse, out = tmp_path / "inbox", tmp_path / "w.duckdb", tmp_path / "run.out"
    for tenant in ("acme", "volga-parts"):
        shutil.copytree(SAMPLE_INBOX / tenant, inbox / tenant)
    for name, rows in HOSTILE.items():
        tiny_rows(inbox / "evil" / name, rows)
    assert all((inbox / "evil" / name).stat().st_size < 8 * 1024 * 1024 for name in HOSTILE), "within the file limit"
    command = [str(Path(sys.executable).with_name("extraction-assets")), "run", "--schema", "pulse@v1"]
    command += ["--inbox", str(inbox), "--prompts", str(prompts), "--warehouse", str(warehouse)]
    (tmp_path / "dagster").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_", "DAGSTER_HOME"))}
    env |= {"DAGSTER_HOME": str(tmp_path / "dagster"), "COLUMNS": "200"}
    with out.open("wb") as sink:
        run = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, env=env, preexec_fn=_limited, timeout=900)
    said = out.read_text(errors="replace")
    assert run.returncode == 0, said[-4000:]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tenants = dict(con.execute("SELECT tenant_id, count(*) FROM raw_documents GROUP BY 1").fetchall())
        letters = dict(con.execute("SELECT source_uri, reason FROM dead_letters WHERE tenant_id = 'evil'").fetchall())
    assert tenants.get("acme", 0) > 10 and tenants.get("volga-parts", 0) > 5 and "evil" not in tenants
    assert set(letters) == {f"evil/{name}" for name in HOSTILE}
    assert all("(one file's limit" in reason for reason in letters.values()), letters
