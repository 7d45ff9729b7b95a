"""The local-model eval harness's logic, against the fake endpoint: every receipt asked, both ways, counted."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from evals.bench_inbox import EVALSETS_ENV
from evals.eval_local_model import evaluate, parser, wait_until_ready
from evals.fake_llm import FakeLLMServer, Faults
from extraction_assets.lib.llm import LLMSettings, document_from_messages

RECEIPTS = [
    (
        f"r{n}",
        f"{name} SDN BHD\n(12345{n}-X)\nNO {n}, JALAN SATU,\n81100 JOHOR BAHRU, JOHOR.\nTEL: 07-123456{n}\n"
        f"DATE: 0{n}/03/2018 10:11\nTOTAL (RM): {total}\nCASH 50.00\nCHANGE {50 - float(total):.2f}\nTHANK YOU\n",
        f"{name} SDN BHD",
        total,
    )
    for n, (name, total) in enumerate((("ACME TRADING", "12.50"), ("MAJU BOOKS", "8.00"), ("MAKAN FOODS", "30.10")), 1)
]


def _evalsets(root: Path) -> Path:
    lines = []
    for record_id, text, company, total in RECEIPTS:
        gold = {"company": {"value": company, "spans": []}, "total": {"value": total, "spans": []}}
        lines.append(json.dumps({"id": record_id, "text": text, "gold": gold}))
    (root / "sroie").mkdir(parents=True)
    (root / "sroie" / "dev.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_every_document_is_asked_once_and_scored_with_and_without_agreement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(EVALSETS_ENV, str(_evalsets(tmp_path / "evalsets")))
    args = parser().parse_args(["--dataset", "sroie", "--limit", "2", "--gguf", "unused.gguf"])
    with FakeLLMServer() as fake:
        settings = LLMSettings(base_url=fake.base_url, model="fake-model", http_retries=0)
        figures = evaluate(args, settings)
        sent = len(fake.requests)
    assert sent == 2 and figures["sroie_requests"] == 2, "model_first: each of the first 2 receipts is asked"
    assert figures["sroie_requests_without_agreement"] == 0, "the second way is answered from the cache"
    assert json.loads(str(figures["sroie_documents_by_outcome"])) == {"model": 2}
    number = {key: value for key, value in figures.items() if not isinstance(value, str)}  # the counts and rates
    assert figures["sroie_documents"] == 2 and number["sroie_calibration_points"] > 0
    assert isinstance(figures["sroie_ece_with_agreement"], float)
    assert (
        number["sroie_items_grounded_with_agreement"] + number["sroie_items_dropped"]
        <= number["sroie_items_proposed"] + 2
    )
    assert number["sroie_seconds"] >= 0 and "model_first" in str(figures["measured_on"])


def test_the_way_without_agreement_never_asks_again_what_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(EVALSETS_ENV, str(_evalsets(tmp_path / "evalsets")))
    args = parser().parse_args(["--dataset", "sroie", "--limit", "2", "--gguf", "unused.gguf"])
    with FakeLLMServer(Faults(schema_violation=True)) as fake:
        settings = LLMSettings(base_url=fake.base_url, model="fake-model", http_retries=0, validation_retries=0)
        figures = evaluate(args, settings)
        sent = len(fake.requests)
    assert sent == 2, "each failed request was sent once: the second way replays the first way's failures"
    assert json.loads(str(figures["sroie_documents_by_outcome"])) == {"fallback_used": 2}
    assert json.loads(str(figures["sroie_model_failures"])) == {"InstructorRetryException": 2}


def test_waiting_for_a_server_that_never_answers_gives_up_with_its_address() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        with pytest.raises(TimeoutError, match=f"127.0.0.1:{port}/v1/models"):
            wait_until_ready(f"http://127.0.0.1:{port}/v1", timeout_s=0.5)


def test_shortest_asks_the_n_shortest_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EVALSETS_ENV, str(_evalsets(tmp_path / "evalsets")))
    args = parser().parse_args(["--dataset", "sroie", "--limit", "2", "--shortest", "--gguf", "unused.gguf"])
    with FakeLLMServer() as fake:
        figures = evaluate(args, LLMSettings(base_url=fake.base_url, model="fake-model", http_retries=0))
        sent = [document_from_messages(body["messages"]) or "" for body in fake.requests]
    assert len(sent) == 2 and not any("ACME TRADING" in text for text in sent), "the longest receipt is left out"
    assert "shortest 2 records" in str(figures["measured_on"])
