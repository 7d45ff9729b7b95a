"""PII end to end through the real assets: the model never sees a detected value, and a policy change
re-scrubs and re-extracts only the tenant it concerns."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest
from cryptography.fernet import Fernet

from evals.bench_pii import DEFAULT_DATA, load_records
from evals.fake_llm import FakeLLMServer
from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import VAULT_KEY_ENV, load_policy, reveal, scrub
from extraction_assets.lib.readers import read_inbox
from extraction_assets.lib.settings import ModelSettings, Settings
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts
from extraction_assets.runner import run_pipeline
from tests.conftest import read_every_document
from tests.hidden_pii_forms import HIDDEN_FORMS, plain
from tests.one_row import one_row

PULSE = "pulse@v1"
DEV_SET = DEFAULT_DATA
needs_dev_set = pytest.mark.skipif(
    not DEV_SET.exists(), reason=f"the PII dev set is not beside the project ({DEV_SET})"
)


@pytest.fixture
def prompts(prompts: Path) -> Path:
    """The bundled prompts, with pulse@v1 reading every document: each one must go through the model path."""
    read_every_document(prompts / "pulse" / "v1.md")
    return prompts


def _run(settings: Settings) -> dict[str, dict[str, object]]:
    results = run_pipeline(settings, schema_keys=[PULSE], instance=dg.DagsterInstance.ephemeral())
    assert all(r.success and not r.failed_checks for r in results), results
    return next(r for r in results if r.name == "ingest").metadata


def _detected_values(inbox: Path, policy_path: Path | None = None) -> set[str]:
    """Every raw value the scrubber masks in the inbox, each document scrubbed with its tenant's policy."""
    policy = load_policy(policy_path)
    values: set[str] = set()
    for doc in read_inbox(inbox):
        if isinstance(doc, Document):
            tenant = policy.for_tenant(doc.tenant_id)
            values |= {d.value for d in scrub(doc.text, region=tenant.region, kinds=tenant.kinds).detections}
    return values


@needs_dev_set
def test_no_detected_value_reaches_the_model_server(settings: Settings, inbox: Path) -> None:
    """Sample inbox plus the PII dev set as documents, extracted model-first by the fake server.

    Dev-set records in which nothing is detected carry no value that could leak, so only the others are
    sent (keeps the test fast; the assertion still covers every detected value of the set).
    """
    records = [r for r in load_records(DEV_SET) if scrub(r["text"]).detections]
    for record in records:
        target = inbox / "pii-dev" / f"{record['id']}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(record["text"], encoding="utf-8")
    with FakeLLMServer(prompts_dir=settings.prompts_dir) as fake:
        model = settings.model_copy(update={"model": ModelSettings(llm_base_url=fake.base_url, llm_model="fake-model")})
        _run(model)
        sent = json.dumps(fake.requests, ensure_ascii=False)
    with open_warehouse(settings.warehouse) as con:
        documents = int(one_row(con.execute("SELECT count(*) FROM raw_documents"))[0])
    values = _detected_values(inbox)
    assert documents >= len(records) >= 50 and len(values) >= 100
    assert len(fake.requests) >= documents  # every document went to the model
    leaked = sorted(v for v in values if v in sent)
    assert leaked == []
    assert "[EMAIL_1]" in sent and "[PHONE_1]" in sent and "[CREDIT_CARD_1]" in sent


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for inner in value.values() for s in _strings(inner)]
    if isinstance(value, list):
        return [s for inner in value for s in _strings(inner)]
    return []


def test_no_hidden_form_of_a_value_reaches_the_model_server(settings: Settings, inbox: Path) -> None:
    """Twenty values written so their pattern misses them (fullwidth characters, "%252540", a card with dots, a number
    wrapped across quoted lines, an INN after "ID number"), each in a note of its own, extracted model-first by the
    fake server: no request holds one, in any form (compatibility characters, encodings and wraps undone)."""
    notes = inbox / "hidden-forms" / "notes"
    notes.mkdir(parents=True)
    for number, form in enumerate(HIDDEN_FORMS):
        (notes / f"note-{number:02d}.txt").write_text(f"Team note {number}.\n{form.text}\n", encoding="utf-8")
    with FakeLLMServer(prompts_dir=settings.prompts_dir) as fake:
        _run(settings.model_copy(update={"model": ModelSettings(llm_base_url=fake.base_url, llm_model="fake-model")}))
        sent = plain(" ".join(_strings(fake.requests)))
    assert all(f"Team note {number}." in " ".join(_strings(fake.requests)) for number in range(len(HIDDEN_FORMS)))
    leaked = [form.name for form in HIDDEN_FORMS if plain(form.value) in sent]
    assert leaked == []


def _scrub_state(settings: Settings) -> dict[str, dict]:
    with open_warehouse(settings.warehouse) as con:
        rows = rows_as_dicts(
            con,
            """SELECT s.doc_id, s.tenant_id, s.scrubber_version, s.scrubbed_at, s.text, s.policy,
                      e.updated_at AS extracted_at, e.scrubber_version AS extracted_with
               FROM scrubbed_documents s
               LEFT JOIN extraction_status e ON e.doc_id = s.doc_id AND e.schema_version = ?""",
            [PULSE],
        )
    return {r["doc_id"]: r for r in rows}


def test_policy_change_rescrubs_and_reextracts_only_that_tenant(settings: Settings, tmp_path: Path) -> None:
    first = _run(settings)["scrubbed_documents"]
    before = _scrub_state(settings)
    tenants = {r["tenant_id"] for r in before.values()}
    assert {"acme", "saigon-foods"} <= tenants and first["scrubbed_now"] == len(before)
    assert first["vault"] == "off" and "saigon-foods" in str(first["policies"])
    assert json.loads(before[next(iter(before))]["policy"])["fingerprint"]

    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "default:\n  mask: all\ntenants:\n  saigon-foods:\n    region: VN\n    mask: [EMAIL, CREDENTIAL]\n"
    )
    second = _run(settings.model_copy(update={"pii_policy": policy}))["scrubbed_documents"]
    after = _scrub_state(settings)
    saigon = {d for d, r in before.items() if r["tenant_id"] == "saigon-foods"}
    assert second["scrubbed_now"] == len(saigon) and second["skipped_up_to_date"] == len(before) - len(saigon)
    for doc_id, row in after.items():
        old = before[doc_id]
        if doc_id in saigon:
            assert row["scrubber_version"] != old["scrubber_version"]
            assert json.loads(row["policy"])["kinds"] == ["CREDENTIAL", "EMAIL"]
            assert "[PHONE_" not in row["text"]
            assert row["extracted_with"] == row["scrubber_version"] and row["extracted_at"] > old["extracted_at"]
        else:
            assert (row["scrubber_version"], row["scrubbed_at"], row["text"]) == (
                old["scrubber_version"],
                old["scrubbed_at"],
                old["text"],
            )
            assert row["extracted_at"] == old["extracted_at"]  # not re-extracted
    assert any("+84" in after[d]["text"] for d in saigon)  # phones are now visible for this tenant, as asked

    third = _run(settings.model_copy(update={"pii_policy": policy}))["scrubbed_documents"]
    assert third["scrubbed_now"] == 0  # the same policy again is no work


def test_vault_on_seals_every_scrubbed_document(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    key = Fernet.generate_key()
    monkeypatch.setenv(VAULT_KEY_ENV, key.decode())
    meta = _run(settings)["scrubbed_documents"]
    assert str(meta["vault"]).startswith("on (key ")
    with open_warehouse(settings.warehouse) as con:
        masked = rows_as_dicts(con, "SELECT doc_id, text FROM scrubbed_documents WHERE pii_total > 0")
        sealed = int(one_row(con.execute("SELECT count(*) FROM pii_vault"))[0])
        tokens = " ".join(r[0] for r in con.execute("SELECT token FROM pii_vault").fetchall())
        mapping = reveal(con, masked[0]["doc_id"], key)
    assert sealed == len(masked) > 0
    assert all(placeholder in masked[0]["text"] for placeholder in mapping)
    assert all(value not in tokens for value in mapping.values())
