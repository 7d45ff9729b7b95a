"""Reply-parsing peers' own cases (talon, email_reply_parser), kept as data in `tests/peer_cases/email_replies/`.

Each case is a body and what of it is the sender's own text: `own` (the whole of it), `has` (phrases in it) or
`lacks` (phrases not in it), compared with whitespace folded. `peer` is the peer's answer, `expected` the
project's; `differs` gives the reason where they part on purpose, `known_miss` marks a case the project still
gets wrong (an expected failure, so fixing it shows).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extraction_assets.lib.readers import body_parts, body_turns

CASES = Path(__file__).resolve().parent.parent.parent / "peer_cases" / "email_replies" / "cases.jsonl"


def _cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines()]


def _params() -> list[Any]:
    return [
        pytest.param(
            case,
            id=case["id"],
            marks=[pytest.mark.xfail(reason=case["known_miss"], strict=True)] if "known_miss" in case else [],
        )
        for case in _cases()
    ]


def _fold(text: str) -> str:
    return " ".join(text.split())


def test_every_case_names_its_source_and_every_difference_its_reason() -> None:
    for case in _cases():
        assert {"repo", "path", "commit", "case"} <= case["source"].keys(), case["id"]
        assert len(case["source"]["commit"]) == 40, case["id"]
        assert case["expected"].keys() <= {"own", "has", "lacks"}, case["id"]
        if case["expected"] != case["peer"]:
            assert case.get("differs"), case["id"]


@pytest.mark.parametrize("case", _params())
def test_email_reply_peer_case(case: dict[str, Any]) -> None:
    text = case["text"]
    turns = body_turns(body_parts(text, 0, forwarded=case["forwarded"]))
    own = _fold(" ".join(text[t.start : t.end] for t in turns))
    expected = case["expected"]
    if "own" in expected:
        assert own == _fold(expected["own"])
    assert all(_fold(phrase) in own for phrase in expected.get("has", []))
    assert not any(_fold(phrase) in own for phrase in expected.get("lacks", []))
