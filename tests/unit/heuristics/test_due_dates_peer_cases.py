"""dateparser's relative and absolute date tests, copied as data, run against ``parse_due_date``."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from dateutil.relativedelta import relativedelta

from extraction_assets.lib.heuristics.due_dates import parse_due_date

CASES_PATH = Path(__file__).resolve().parents[2] / "peer_cases" / "due_dates" / "cases.jsonl"
CASES: list[dict[str, Any]] = [json.loads(line) for line in CASES_PATH.read_text(encoding="utf-8").splitlines()]


def _expected(case: dict[str, Any]) -> date | None:
    return date.fromisoformat(case["expected"]) if case["expected"] else None


def _peer_date(case: dict[str, Any]) -> date | None:
    """The peer's answer as a day: its offset from the reference, or the date it names."""
    peer, reference = case["peer"], date.fromisoformat(case["reference"])
    if "in_future" in peer:
        return reference + relativedelta(**peer["in_future"])
    return date.fromisoformat(peer["date"]) if "date" in peer else None


def _param(case: dict[str, Any]) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason="known miss")] if case.get("known_miss") else []
    return pytest.param(case, id=case["id"], marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_peer_case(case: dict[str, Any]) -> None:
    assert parse_due_date(case["text"], date.fromisoformat(case["reference"])) == _expected(case)


@pytest.mark.parametrize(
    "case", [c for c in CASES if "differs" not in c and "weekday" not in c["peer"]], ids=lambda case: case["id"]
)
def test_the_project_agrees_with_the_peer_unless_it_says_why(case: dict[str, Any]) -> None:
    assert _peer_date(case) == _expected(case)


def test_every_case_names_its_source_and_a_difference_its_reason() -> None:
    for case in CASES:
        assert set(case["source"]) == {"repo", "path", "commit", "case"}, case["id"]
        assert len(case["source"]["commit"]) == 40, case["id"]
        assert case.get("differs", "x").strip() and "\n" not in case.get("differs", ""), case["id"]
    assert len({case["id"] for case in CASES}) == len(CASES)
