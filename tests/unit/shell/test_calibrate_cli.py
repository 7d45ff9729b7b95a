"""`extraction-assets calibrate`: a version without enough labelled data is written as not calibrated, says why, and
keeps today's behaviour; `--check` compares a refit with the committed file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from extraction_assets.cli import main
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS

RECEIPT = """SHOP {n} SDN BHD
NO. {n}, JALAN MAWAR,
43000 KAJANG, SELANGOR
DATE: 0{n}/03/2018
PEN
{n}.30
BOOK
10.00
TOTAL
1{n}.30
"""


def test_a_version_whose_data_judges_nothing_is_said_not_calibrated(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--schema", "pulse@v1", "--check"]) == 0
    said = " ".join(capsys.readouterr().out.split())  # a narrow terminal wraps the lines
    assert "pulse@v1 is not calibrated" in said and "keeps today's confidence and review" in said
    assert "v1.calibration.json is what a refit gives" in said


def test_too_few_labelled_items_are_written_as_not_calibrated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sklearn")
    prompts = tmp_path / "prompts"
    (prompts / "receipt").mkdir(parents=True)
    shutil.copy(DEFAULT_PROMPTS / "receipt" / "v1.md", prompts / "receipt" / "v1.md")
    gold = tmp_path / "receipts" / "dev.jsonl"
    gold.parent.mkdir()
    records = [
        {"id": str(n), "text": RECEIPT.format(n=n), "gold": {"total": {"value": f"1{n}.30"}}} for n in range(1, 6)
    ]
    gold.write_text("".join(json.dumps(r) + "\n" for r in records))
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"datasets:\n  receipts:\n    path: {gold}\n    schema_version: receipt@v1\n    mode: fields\n"
        "    fields:\n      total: {gold: total.value, compare: amount}\n"
    )
    args = ["calibrate", "--schema", "receipt@v1", "--prompts", str(prompts), "--registry", str(registry)]
    assert main(args) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "receipt@v1 is not calibrated: no field has enough labelled items" in said
    schema = load_schema(prompts, "receipt@v1")
    assert schema.calibration is not None and schema.calibration.status == "not_calibrated"
    assert schema.calibration.not_calibrated["total"] == "5 labelled items (at least 30 needed)"
    assert schema.calibration.not_calibrated["company"] == "no labelled items"
    assert main([*args, "--check"]) == 0
