"""Screenshots in the chaos import, end to end: rendered images in an inbox are read by OCR, scrubbed, extracted
and grounded like any text, and each item's evidence names the image region it came from."""

from __future__ import annotations

from pathlib import Path

from extraction_assets.lib.settings import DEFAULT_PROMPTS, Settings
from extraction_assets.lib.warehouse import evidence_regions, invariants, open_warehouse, rows_as_dicts
from extraction_assets.runner import run_pipeline
from tests.one_row import one_row
from tests.rendered_text import needs_tesseract, render

CHAT = (
    "[08:02] Tuấn: Xe số 2 bị thủng lốp, đơn Bếp Nhà có thể giao trễ 30 phút.\n"
    "[08:06] Lan: Em sẽ gửi báo giá cho khách hàng trước thứ Sáu.\n"
    "[08:25] Lan: Em cần anh Khoa quyết định có giảm giá 10% cho đơn trễ không."
)


@needs_tesseract
def test_a_screenshot_is_extracted_with_evidence_and_its_image_region(tmp_path: Path) -> None:
    folder = tmp_path / "inbox" / "saigon-foods" / "chaos-import"
    folder.mkdir(parents=True)
    (folder / "2026-11-29-zalo-giao-hang.png").write_bytes(render(CHAT))
    settings = Settings(warehouse=tmp_path / "w.duckdb", inbox=tmp_path / "inbox", prompts_dir=DEFAULT_PROMPTS)
    results = run_pipeline(settings, ["pulse@v1"])
    assert all(r.success for r in results), [(r.name, r.failed_checks) for r in results]
    with open_warehouse(settings.warehouse) as con:
        [doc] = rows_as_dicts(con, "SELECT doc_id, kind, text FROM raw_documents")
        words = one_row(con.execute("SELECT count(*) FROM ocr_words WHERE doc_id = ?", [doc["doc_id"]]))[0]
        items = rows_as_dicts(
            con,
            """SELECT i.item_id, i.item_type, e.quote, e.char_start, e.char_end, e.turn_id FROM extracted_items i
               JOIN evidence e USING (item_id) ORDER BY e.char_start""",
        )
        regions = {item["item_id"]: evidence_regions(con, "saigon-foods", item["item_id"]) for item in items}
        assert invariants.quote_mismatches(con) == {}
        assert evidence_regions(con, "another-tenant", items[0]["item_id"]) == []  # tenant-scoped
    assert doc["kind"] == "chat" and words == len(doc["text"].split())
    print([(i["item_type"], i["quote"]) for i in items])
    assert {i["item_type"] for i in items} >= {"commitment", "risk"}
    for item in items:
        assert doc["text"][item["char_start"] : item["char_end"]] == item["quote"]
        [region] = regions[item["item_id"]]
        assert region["words"] >= len(item["quote"].split()) and region["width"] > 0 and region["height"] > 0
    line_of = {line: n for n, line in enumerate(CHAT.split("\n"))}
    for item in items:  # the region is on the rendered line the quote is from
        [region] = regions[item["item_id"]]
        line = next(n for text, n in line_of.items() if item["quote"] in text)
        assert region["y"] < 30 + (line + 1) * 42 and region["y"] + region["height"] > 30 + line * 42
