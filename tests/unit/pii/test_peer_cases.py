"""The peers' own test cases, kept as data in `tests/peer_cases/`, run against the scrubber and the aligner.

Each case carries the peer's answer (`peer`), the project's (`expected`) and where they differ on purpose a
one-line reason (`differs`); `known_miss` marks a case the project still gets wrong (expected to fail).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extraction_assets.lib.extraction import ground
from extraction_assets.lib.pii import detect

CASES = Path(__file__).resolve().parent.parent.parent / "peer_cases"


def _load(pattern: str) -> list[Any]:
    params = []
    for path in sorted(CASES.glob(pattern)):
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            marks = [pytest.mark.xfail(reason=case["known_miss"], strict=True)] if "known_miss" in case else []
            params.append(pytest.param(case, id=case["id"], marks=marks))
    return params


def test_every_case_names_its_source_and_every_difference_its_reason() -> None:
    for path in CASES.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            assert {"repo", "path", "commit", "case"} <= case["source"].keys(), case["id"]
            assert len(case["source"]["commit"]) == 40, case["id"]
            if _where(case["expected"]) != _where(case["peer"]):
                assert case.get("differs") or case.get("known_miss") or case["peer"] is None, case["id"]


def _where(answer: Any) -> Any:
    """What an answer locates: PII spans, or a grounding's span (LangExtract's "exact" covers case-folded too)."""
    return answer.get("span") if isinstance(answer, dict) else answer


@pytest.mark.parametrize("case", _load("*_pii.jsonl"))
def test_pii_peer_case(case: dict[str, Any]) -> None:
    found = [[d.start, d.end] for d in detect(case["text"], region=case["region"]) if d.kind == case["kind"]]
    if case["expected"] is None:  # the peer gave only a count
        assert len(found) == case["expected_count"]
    else:
        assert found == case["expected"]


@pytest.mark.parametrize("case", _load("*_grounding.jsonl"))
def test_grounding_peer_case(case: dict[str, Any]) -> None:
    g = ground(case["quote"], case["text"])
    found = None if g is None else {"span": [g.start, g.end], "match_kind": g.match_kind}
    assert found == case["expected"]
