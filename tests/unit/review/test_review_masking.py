"""The review tools show scrubbed text; the original is shown only by an explicit, audited reveal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from extraction_assets.cli import main
from extraction_assets.lib.review import REVEAL, check_chain, history, item_detail, list_queue, reveal_item
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.web.review_app import create_review_app
from tests.review_seed import review_auth, seed, signed_in

CARD, IBAN = "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00"
TEXT = f"Refund note.\nWe will refund card {CARD} by Friday.\nWire it to IBAN {IBAN} today.\n"
QUOTE = f"We will refund card {CARD} by Friday."
ITEMS = (("acme", "commitment", QUOTE, 0.6, "needs_review", {"due_date": "2026-12-04"}),)


@pytest.fixture
def warehouse(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "w.duckdb"
    ids = seed(path, texts={"acme": TEXT}, items=ITEMS)
    return path, ids["acme:commitment"]


def _shows_no_pii(text: str) -> bool:
    return CARD not in text and IBAN not in text and "4111" not in text


def test_item_detail_and_queue_show_scrubbed_text_by_default(warehouse) -> None:
    path, item_id = warehouse
    with open_warehouse(path) as con:
        detail = item_detail(con, "acme", item_id)
        [row] = list_queue(con, "acme")
        entries = history(con, "acme", item_id)
    [evidence] = detail.evidence
    assert detail.masked
    assert evidence.quote == "We will refund card [CREDIT_CARD_1] by Friday."
    assert "[IBAN_1]" in evidence.after and _shows_no_pii(evidence.before + evidence.quote + evidence.after)
    assert TEXT[evidence.char_start : evidence.char_end] == QUOTE  # the stored raw offsets are kept
    assert _shows_no_pii("".join(s.text for s in detail.segments))
    assert [s.text for s in detail.segments if s.evidence is not None] == [evidence.quote]
    assert row.evidence_quote == evidence.quote
    assert entries == [], "reading the masked view is not audited"


def test_reveal_shows_the_original_and_is_audited_without_changing_the_item(warehouse) -> None:
    path, item_id = warehouse
    with open_warehouse(path) as con:
        before = item_detail(con, "acme", item_id).item
        detail, entry = reveal_item(con, "acme", item_id[:8], "ana", "customer asked for the card")
        after = item_detail(con, "acme", item_id).item
        [logged] = history(con, "acme", item_id)
        chain = check_chain(con)
    assert not detail.masked and detail.evidence[0].quote == QUOTE and IBAN in detail.evidence[0].after
    assert (logged.action, logged.actor, logged.item_id, logged.note) == (REVEAL, "ana", item_id, entry.note)
    assert logged.changes() == {} and before == after
    assert chain.intact


def test_reveal_needs_a_name(warehouse) -> None:
    path, item_id = warehouse
    with open_warehouse(path) as con, pytest.raises(ValueError, match="who reveals"):
        reveal_item(con, "acme", item_id, "  ")


def test_review_show_masks_and_reveal_is_recorded(warehouse, capsys, monkeypatch) -> None:
    path, item_id = warehouse
    monkeypatch.setenv("USER", "cli-user")
    monkeypatch.setenv("COLUMNS", "200")
    common = ["--tenant", "acme", "--warehouse", str(path)]
    assert main(["review", "show", item_id, *common]) == 0
    masked = capsys.readouterr().out
    assert _shows_no_pii(masked) and "[CREDIT_CARD_1]" in masked and "--reveal" in masked
    assert main(["review", "show", item_id, "--reveal", "--note", "dispute", *common]) == 0
    revealed = capsys.readouterr().out
    assert CARD in revealed and "audit #1" in revealed
    assert main(["review", "history", item_id, "--json", *common]) == 0
    assert '"action": "reveal"' in capsys.readouterr().out


def test_review_page_masks_and_reveals_only_on_an_audited_post(warehouse) -> None:
    path, item_id = warehouse
    app = create_review_app(path, "acme", DEFAULT_PROMPTS, review_auth())
    client = signed_in(TestClient(app, base_url="http://127.0.0.1"), "linh")
    page = client.get(f"/items/{item_id}").text
    assert _shows_no_pii(page) and "[CREDIT_CARD_1]" in page and 'id="reveal-form"' in page
    assert _shows_no_pii(client.get("/").text)
    form_token = re.search(r'name="token" value="([^"]+)"', page)
    assert form_token is not None
    token = form_token.group(1)
    assert client.post(f"/items/{item_id}/reveal", data={"by": "linh"}).status_code == 403
    # auth=None sends no credentials: httpx takes it (no auth), its `post` annotation leaves None out
    anonymous = client.post(f"/items/{item_id}/reveal", data={"token": token}, auth=None)  # type: ignore[arg-type]
    assert anonymous.status_code == 401
    shown = client.post(f"/items/{item_id}/reveal", data={"token": token, "by": "someone-else", "note": "dispute"})
    assert shown.status_code == 200 and CARD in shown.text and IBAN in shown.text
    assert shown.headers["cache-control"] == "no-store" and 'id="revealed"' in shown.text
    assert _shows_no_pii(client.get(f"/items/{item_id}").text), "the next view is masked again"
    with open_warehouse(path) as con:
        assert [(e.action, e.actor) for e in history(con, "acme", item_id)] == [(REVEAL, "linh")]


def test_the_queue_cuts_the_same_masked_quote_as_the_item_page_after_wide_characters(tmp_path: Path) -> None:
    """The queue reads only each quote (characters, not bytes, counted by the warehouse), never the whole text."""
    text = f"Zoë’s note 🚀🚀 — naïve café.\n{TEXT}"
    path = tmp_path / "w.duckdb"
    item_id = seed(path, texts={"acme": text}, items=ITEMS)["acme:commitment"]
    with open_warehouse(path) as con:
        [evidence] = item_detail(con, "acme", item_id).evidence
        [row] = list_queue(con, "acme")
    assert evidence.quote == "We will refund card [CREDIT_CARD_1] by Friday."
    assert row.evidence_quote == evidence.quote


def test_a_document_not_yet_scrubbed_shows_no_text_in_the_queue(warehouse) -> None:
    path, item_id = warehouse
    with open_warehouse(path) as con:
        con.execute("DELETE FROM scrubbed_documents")
        [row] = list_queue(con, "acme")
    assert row.item_id == item_id and row.evidence_quote == "[not scrubbed: hidden]"
