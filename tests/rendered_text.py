"""Screenshots rendered from known text with Pillow (a font with Vietnamese and Cyrillic letters), for the OCR
tests, and the word accuracy of what OCR read back."""

from __future__ import annotations

import shutil
from difflib import SequenceMatcher
from io import BytesIO

import pytest
from PIL import Image, ImageDraw, ImageFont

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the OCR engine is not installed")


def render(text: str, image_format: str = "PNG", size: int = 28) -> bytes:
    """Black text on white, one line per line of `text`, as a screenshot of a chat or a sheet would look."""
    from matplotlib import font_manager  # ships DejaVu Sans, which has the Vietnamese and Cyrillic letters

    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), size)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    _, _, right, bottom = probe.multiline_textbbox((0, 0), text, font=font, spacing=size // 2)
    image = Image.new("RGB", (int(right) + 60, int(bottom) + 60), "white")  # the box is in whole pixels
    ImageDraw.Draw(image).multiline_text((30, 30), text, fill="black", font=font, spacing=size // 2)
    out = BytesIO()
    image.save(out, image_format)
    return out.getvalue()


def word_accuracy(expected: str, read: str) -> float:
    """Share of the expected words that OCR read, in order (matching blocks of the two word sequences)."""
    want, got = expected.split(), read.split()
    matched = sum(block.size for block in SequenceMatcher(None, want, got, autojunk=False).get_matching_blocks())
    return matched / len(want) if want else 1.0
