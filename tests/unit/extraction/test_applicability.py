"""Which schema reads which document: kinds, tenants, path globs, folder names and the packs' content gates."""

from __future__ import annotations

import pytest

from extraction_assets.lib.extraction import decide, folder_kind, rules_fingerprint
from extraction_assets.lib.models import Document, DocumentKind, ExtractionInput, Turn
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.readers import read_inbox
from extraction_assets.lib.schemas import Applicability, SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX

SCHEMAS = discover_schemas(DEFAULT_PROMPTS)[0]
RECEIPT = "AEON CO. (M) BHD\nTAX INVOICE\nTEA 2.50\nRICE 4.90\nBREAD 3.20\nTOTAL RM 10.60\nCASH 20.00\nCHANGE 9.40\n"
CONTRACT = (
    "SUPPLY AGREEMENT\n\nThis Agreement is made by and between Northwind Ltd and Acme GmbH.\n\n"
    "1. Subject. The supplier delivers the goods.\n2. Price. The price is fixed.\n3. Term. One year.\n"
    + "Further terms apply. "
    * 80
)
NOTE = "- We will send the quote by Friday.\n- Risk: the supplier is late.\n- I need a decision on the deposit.\n"


def _doc(uri: str, text: str, kind: DocumentKind = "text", turns: list[Turn] | None = None) -> Document:
    tenant = uri.split("/")[0]
    return Document(
        doc_id=Document.make_id(tenant, kind, text), tenant_id=tenant, source_uri=uri, kind=kind, text=text,
        turns=turns or [],
    )  # fmt: skip


def _taken(doc: Document, schema: SchemaVersion) -> bool:
    scrubbed = ExtractionInput(
        doc_id=doc.doc_id, tenant_id=doc.tenant_id, kind=doc.kind, text=doc.text, turns=doc.turns
    )
    return decide(doc, scrubbed, schema).taken


def _readers(doc: Document) -> set[str]:
    return {key for key, schema in SCHEMAS.items() if _taken(doc, schema)}


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("acme/mail/2026/x.eml", "mail"),
        ("acme/Receipts_2026/x.txt", None),  # a name that is not a folder kind stays unknown
        ("acme/Invoices/x.txt", "receipts"),
        ("acme/legal/contracts/x.txt", "contracts"),  # the nearest folder wins
        ("acme/contracts/old/x.txt", "contracts"),
        ("acme/x.txt", None),
        ("acme/mailbox/box.mbox#3", "mail"),
        ("acme/Meeting Notes/x.md", None),
        ("acme/meetings/x.json", "meetings"),
    ],
)
def test_folder_kinds_as_people_name_them(uri: str, kind: str | None) -> None:
    assert folder_kind(uri) == kind


def test_folders_route_with_no_configuration() -> None:
    assert _readers(_doc("acme/receipts/r1.txt", RECEIPT)) == {"receipt@v1"}
    assert _readers(_doc("acme/contracts/c1.txt", CONTRACT)) == {"contract@v1"}
    assert _readers(_doc("acme/mail/m1.eml", "Subject: hi\n\nWe will send it.", "email")) == {"email@v1"}
    assert _readers(_doc("acme/notes/n1.md", NOTE)) == {"pulse@v1"}


def test_content_gates_decide_outside_named_folders() -> None:
    assert "receipt@v1" in _readers(_doc("acme/scans/r1.txt", RECEIPT))
    assert "contract@v1" in _readers(_doc("acme/scans/c1.txt", CONTRACT))
    assert "receipt@v1" not in _readers(_doc("acme/scans/n1.txt", NOTE))
    assert "contract@v1" not in _readers(_doc("acme/scans/n1.txt", NOTE))
    assert "pulse@v1" not in _readers(_doc("acme/scans/c1.txt", CONTRACT))  # a long legal text is no team note


def test_a_folder_of_another_kind_keeps_a_schema_out_even_when_its_gate_would_pass() -> None:
    assert not _taken(_doc("acme/receipts/n1.txt", NOTE), SCHEMAS["pulse@v1"])
    assert not _taken(_doc("acme/contracts/r1.txt", RECEIPT), SCHEMAS["receipt@v1"])


def test_interviews_and_meetings_go_to_their_own_schemas() -> None:
    turns_text = "Interviewer: How often do you cook?\nAn: Three times a week.\nInterviewer: Why?\nAn: It is cheaper.\n"
    starts = [0, 36, 61, 77]
    turns = [
        Turn(turn_id=str(i), start=s, end=turns_text.index("\n", s), speaker=turns_text[s:].split(":")[0])
        for i, s in enumerate(starts, start=1)
    ]
    interview = _doc("acme/research/s1.json", turns_text, "transcript", turns)
    assert {"interview@v1"} <= _readers(interview)
    assert "pulse@v1" not in _readers(interview)
    meeting = _doc("acme/meetings/m1.json", turns_text, "transcript", turns)
    assert _readers(meeting) == {"pulse@v1"}


def test_explicit_paths_tenants_and_a_disabled_gate() -> None:
    pulse = SCHEMAS["pulse@v1"]
    by_path = pulse.model_copy(update={"applies_to": Applicability(paths=["receipts/2026-*"])})
    assert _taken(_doc("acme/receipts/2026-01.txt", RECEIPT), by_path)  # globs override folders and the gate
    assert not _taken(_doc("acme/notes/n1.md", NOTE), by_path)
    only_acme = pulse.model_copy(update={"applies_to": Applicability(tenants=["acme"])})
    assert _taken(_doc("acme/notes/n1.md", NOTE), only_acme)
    assert not _taken(_doc("volga/notes/n1.md", NOTE), only_acme)
    no_gate = SCHEMAS["receipt@v1"].model_copy(update={"applies_to": Applicability(gate=False)})
    assert _taken(_doc("acme/scans/n1.txt", NOTE), no_gate)
    assert not _taken(_doc("acme/scans/n1.txt", NOTE, kind="email"), no_gate)  # kinds still hold


def test_the_rules_fingerprint_changes_only_with_the_rules() -> None:
    pulse = SCHEMAS["pulse@v1"]
    assert rules_fingerprint(pulse) == rules_fingerprint(pulse.model_copy(update={"instructions": "changed"}))
    changed = pulse.model_copy(update={"applies_to": Applicability(min_score=0.7)})
    assert rules_fingerprint(changed) != rules_fingerprint(pulse)


EXPECTED_SAMPLE_ROUTES = {  # folder of the bundled sample inbox -> the schemas that read its documents
    "acme/email": {"email@v1"},
    "acme/mailbox": {"email@v1"},
    "acme/support": {"support_ticket@v1", "email@v1"},
    "acme/pulses": {"pulse@v1"},
    "acme/chat": {"pulse@v1"},
    "acme/meetings": {"pulse@v1"},
    "acme/notes": {"pulse@v1"},
    "lanting-research/interviews": {"interview@v1"},
    "minsk-legal/contracts": {"contract@v1"},
    "minsk-legal/dogovory": {"contract@v1"},
    "minsk-legal/expenses": {"receipt@v1"},
    "saigon-foods/email": {"email@v1"},
    "saigon-foods/ho-tro": {"support_ticket@v1"},
    "saigon-foods/phong-van": {"interview@v1"},
    "volga-parts/pulses": {"pulse@v1"},
}


def test_the_bundled_sample_inbox_routes_with_no_configuration() -> None:
    docs = [d for d in read_inbox(SAMPLE_INBOX) if isinstance(d, Document)]
    routes: dict[str, set[str]] = {}
    for doc in docs:
        folder = "/".join(doc.source_uri.split("/")[:2])
        routes.setdefault(folder, set()).update(_readers(doc))
    assert {folder: routes[folder] for folder in EXPECTED_SAMPLE_ROUTES} == EXPECTED_SAMPLE_ROUTES
    unrouted = [d.source_uri for d in docs if not _readers(d)]
    assert len(unrouted) <= len(docs) // 10, unrouted
