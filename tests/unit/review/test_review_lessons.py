"""Every decision teaches: a tenant's decisions refit its calibration, and the drafts it now doubts go to review."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.review import corrections
from extraction_assets.lib.review.lessons import MIN_DECISIONS, refit, stored_fit, teach
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import open_warehouse
from tests.one_row import one_row
from tests.review_seed import seed_documents

SHOPS = ("GREEN LEAF", "BLUE DOOR", "RED KITE", "TAN BARN")


def _documents(n: int) -> dict[str, tuple[str, str, str]]:
    return {f"r{k}": ("acme", f"acme/receipts/r{k}.txt", f"{SHOPS[k % 4]} SDN BHD\nReceipt {k}\n") for k in range(n)}


@pytest.fixture
def taught(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """40 receipts: the extractor reads the shop name without "SDN BHD". Reviewers corrected the BLUE DOOR ones
    (wrong) and accepted the others on 36 receipts; 4 receipts, one of each shop, are left as drafts."""
    path = tmp_path / "w.duckdb"
    docs = _documents(40)
    items = [
        (name, "company", text.split("\n")[0][:-8], 0.78, "draft", {"value": text.split("\n")[0][:-8]})
        for name, (_, _, text) in docs.items()
    ]
    ids = seed_documents(path, docs, items, schema="receipt@v1")
    with open_warehouse(path) as con:
        con.execute("UPDATE extracted_items SET probability_correct = 0.96")
        for k in range(36):
            item = ids[f"r{k}:company"]
            if SHOPS[k % 4] == "BLUE DOOR":
                corrections.apply_change(
                    con, "acme", item, corrections.Change(value={"value": "BLUE DOOR SDN BHD"}), "ana", "correct"
                )
            else:
                corrections.accept(con, "acme", item, "ana")
    return path, ids


def test_enough_decisions_refit_the_tenant_and_send_the_drafts_it_doubts_to_review(taught) -> None:
    path, ids = taught
    receipt = load_schema(DEFAULT_PROMPTS, "receipt@v1")
    with open_warehouse(path) as con:
        lessons = teach(con, receipt)
        fit = stored_fit(con, "acme", "receipt@v1")
        statuses = dict(con.execute("SELECT item_id, status FROM extracted_items").fetchall())
        reasons = one_row(
            con.execute("SELECT review_reasons FROM extracted_items WHERE item_id = ?", [ids["r37:company"]])
        )[0]
        stamps = con.execute("SELECT max(updated_at) FROM extracted_items").fetchone()
        again = teach(con, receipt)
        idle = con.execute("SELECT max(updated_at) FROM extracted_items").fetchone()
    assert fit is not None and (fit.decisions, fit.wrong) == (36, 9)
    assert lessons.fits == {"acme": f"36 decisions (9 wrong), fitted at {fit.fitted_at[:19]}"}
    # the BLUE DOOR draft (r37) looks like what people corrected nine times: to review, naming the refit
    assert statuses[ids["r37:company"]] == "needs_review" and "once refit on 36 decisions of acme" in reasons
    assert lessons.sent_to_review == 1 and {statuses[ids[f"r{k}:company"]] for k in (36, 38, 39)} == {"draft"}
    assert again.sent_to_review == 0 and idle == stamps, "a pass with nothing new writes nothing"


def test_a_correction_of_any_key_of_a_value_counts_it_wrong(tmp_path: Path) -> None:
    """A clause's `for_convenience` corrected, its text kept: the proposal was wrong all the same."""
    path = tmp_path / "w.duckdb"
    docs = _documents(36)
    items = [
        (name, "company", text.split("\n")[0], 0.78, "draft", {"value": text.split("\n")[0]})
        for name, (_, _, text) in docs.items()
    ]
    ids = seed_documents(path, docs, items, schema="receipt@v1")
    with open_warehouse(path) as con:
        con.execute("UPDATE extracted_items SET probability_correct = 0.96")
        for k in range(36):
            item, shop = ids[f"r{k}:company"], SHOPS[k % 4] + " SDN BHD"
            if SHOPS[k % 4] == "BLUE DOOR":
                change = corrections.Change(value={"value": shop, "as_printed": shop.lower()})
                corrections.apply_change(con, "acme", item, change, "ana", "correct")
            else:
                corrections.accept(con, "acme", item, "ana")
        fit = refit(con, "acme", load_schema(DEFAULT_PROMPTS, "receipt@v1"))
    assert not isinstance(fit, str), fit
    assert (fit.decisions, fit.wrong) == (36, 9)


def test_too_few_decisions_teach_nothing_and_say_so(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    docs = _documents(8)
    ids = seed_documents(
        path,
        docs,
        [(n, "company", t.split("\n")[0], 0.78, "draft", {"value": t.split("\n")[0]}) for n, (_, _, t) in docs.items()],
        schema="receipt@v1",
    )
    with open_warehouse(path) as con:
        con.execute("UPDATE extracted_items SET probability_correct = 0.96")
        corrections.accept(con, "acme", ids["r0:company"], "ana")
        why = refit(con, "acme", load_schema(DEFAULT_PROMPTS, "receipt@v1"))
        pulse = refit(con, "acme", load_schema(DEFAULT_PROMPTS, "pulse@v1"))
    assert isinstance(why, str) and f"a refit needs {MIN_DECISIONS}" in why
    assert isinstance(pulse, str) and "not calibrated" in pulse
