"""Screenshots through OCR: rendered from known text in Vietnamese, English and Russian, read back with each word's
box; bounded like the other readers; without the engine, a dead letter saying so."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

import pytest
from PIL import Image

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers import image as image_reader
from extraction_assets.lib.readers import read_file
from tests.rendered_text import needs_tesseract, render, word_accuracy

SCREENSHOTS = {
    "vie": "[08:02] Tuấn: Xe số 2 bị thủng lốp, đơn Bếp Nhà có thể giao trễ 30 phút.\n"
    "[08:06] Lan: Em sẽ gửi báo giá cho khách hàng trước thứ Sáu.\n"
    "Rủi ro: nhà cung cấp bao bì giao hàng chậm hai ngày.",
    "eng": "[07:58] Jordan: Van 3 won't start, we'll be late to the Brightline site.\n"
    "[08:01] Dana: Thanks. We will call Brightline and move the slot to 10am.\n"
    "Risk: the packaging supplier is two days late.",
    "rus": "Договор поставки № 14/2026 от 5 марта 2026 года.\n"
    "Поставщик обязуется передать товар до 1 апреля 2026 года.\n"
    "Риск: поставщик упаковки задерживает отгрузку на два дня.",
}
MIN_WORD_ACCURACY = 0.9


def _read(tmp_path: Path, name: str, data: bytes) -> list[Document | ReadFailure]:
    path = tmp_path / name
    path.write_bytes(data)
    return read_file(path, "acme", f"acme/chaos-import/{name}")


@needs_tesseract
@pytest.mark.parametrize(("size", "image_format"), [(28, "PNG"), (14, "JPEG")])
@pytest.mark.parametrize("language", sorted(SCREENSHOTS))
def test_a_screenshot_becomes_its_text_with_a_box_per_word(
    tmp_path: Path, language: str, size: int, image_format: str
) -> None:
    expected = SCREENSHOTS[language]
    suffix = image_format.lower().replace("jpeg", "jpg")
    [doc] = _read(tmp_path, f"{language}.{suffix}", render(expected, image_format, size))
    assert isinstance(doc, Document)
    accuracy = word_accuracy(expected, doc.text)
    print(f"OCR word accuracy {language} {size}px {image_format}: {accuracy:.3f}")
    assert accuracy >= MIN_WORD_ACCURACY, doc.text
    assert doc.metadata["image"]["format"] == image_format.lower()
    assert doc.metadata["ocr"]["words"] == len(doc.ocr_words)
    width, height = doc.metadata["image"]["width"], doc.metadata["image"]["height"]
    assert [w.word_no for w in doc.ocr_words] == list(range(1, len(doc.text.split()) + 1))
    assert [doc.text[w.char_start : w.char_end] for w in doc.ocr_words] == doc.text.split()
    for word in doc.ocr_words:
        assert 0 <= word.x < word.x + word.width <= width and 0 <= word.y < word.y + word.height <= height
    lines = [line for line in doc.text.split("\n") if line]
    assert len(lines) == 3  # a line per rendered line, in reading order
    if language != "rus":  # "[08:02] Tuấn: ..." lines: a screenshot of a chat is a chat
        assert doc.kind == "chat" and len(doc.turns) == 2


def test_without_the_engine_an_image_is_a_dead_letter_saying_so(tmp_path: Path, monkeypatch) -> None:
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", str(tmp_path / "no-tesseract"))
    image_reader._engine.cache_clear()
    try:
        [failure] = _read(tmp_path, "shot.png", render("Hello"))
    finally:
        image_reader._engine.cache_clear()
    assert isinstance(failure, ReadFailure)
    assert failure.reason.startswith("no OCR engine") and "tesseract-ocr" in failure.reason


def _png(image: Image.Image) -> bytes:
    out = BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_images_are_bounded_and_checked_before_decoding(tmp_path: Path) -> None:
    huge = _png(Image.new("1", (10_000, 5_000)))  # 50 megapixels, a few KB compressed
    [failure] = _read(tmp_path, "huge.png", huge)
    assert isinstance(failure, ReadFailure) and failure.reason.startswith("image too large (10000x5000 pixels")
    gif = BytesIO()
    Image.new("RGB", (10, 10)).save(gif, "GIF")
    [failure] = _read(tmp_path, "renamed.png", gif.getvalue())
    assert isinstance(failure, ReadFailure) and failure.reason == "not a PNG or JPEG image (GIF)"
    [failure] = _read(tmp_path, "text.jpg", b"not an image at all")
    assert isinstance(failure, ReadFailure) and failure.reason.startswith("unreadable image")
    [failure] = _read(tmp_path, "cut.png", _png(Image.new("RGB", (50, 50)))[:60])  # truncated
    assert isinstance(failure, ReadFailure) and failure.reason.startswith("unreadable image")


@needs_tesseract
def test_an_image_without_text_is_a_dead_letter(tmp_path: Path) -> None:
    [failure] = _read(tmp_path, "blank.png", _png(Image.new("RGB", (400, 200), "white")))
    assert isinstance(failure, ReadFailure) and failure.reason == "no text found in the image (OCR read no words)"
