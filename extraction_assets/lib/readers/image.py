"""Screenshots (`.png`, `.jpg`) through OCR: Tesseract (Debian's `tesseract-ocr`, called through pytesseract)
reads the image, its words become the document's text, and every word keeps its box in the image.

The chaos import brings screenshots of chats and sheets. The OCR text is the document's text like
any other, so scrubbing, grounding and offsets work unchanged; each word's box (pixels) and offsets into the
text are kept (`OcrWord`, table `ocr_words`), so a piece of evidence can also name the image region it came
from. Bounded like the other readers: the file size limit of the inbox, a pixel limit checked from the header
before any pixel is decoded (Pillow's decompression-bomb guard stays on as well), an OCR time limit, and a
text limit. Without the engine an image is a dead letter saying how to install it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cache
from io import BytesIO
from typing import TYPE_CHECKING

from extraction_assets.lib.models import OcrWord
from extraction_assets.lib.readers.record import Unreadable

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["OCR_LANGUAGES", "OcrError", "OcrText", "read_image"]

OCR_LANGUAGES = ("vie", "eng", "rus")  # the seeds' scripts; those installed are used together
CYRILLIC_LANGUAGE = "rus"  # a text that comes out mostly Cyrillic is read again with this model alone
MAX_PIXELS = 40_000_000  # a 4K screenshot is 8.3 MP; a long scrolling capture of a chat stays well under this
MAX_SIDE = 20_000
OCR_TIMEOUT_S = 120
MAX_TEXT_CHARS = 1_000_000
_FORMATS = {"PNG": "png", "JPEG": "jpeg"}
_NO_ENGINE = (
    "no OCR engine: the image cannot be read without Tesseract (install `tesseract-ocr` with the "
    "`tesseract-ocr-vie`, `-eng` and `-rus` data; `make setup` does where apt is available)"
)


class OcrError(Unreadable, ValueError):
    """An image that cannot become text; the message is the dead letter's reason."""


@dataclass(frozen=True)
class OcrText:
    text: str
    words: list[OcrWord]
    width: int
    height: int
    image_format: str
    languages: str
    engine: str


@cache
def _engine() -> tuple[str, str]:
    """(engine version, the `lang` argument: the installed languages among OCR_LANGUAGES), or OcrError."""
    import pytesseract  # the OCR binding loads with the first screenshot

    try:
        version = str(pytesseract.get_tesseract_version())
        installed = set(pytesseract.get_languages(config=""))
    except (pytesseract.TesseractNotFoundError, OSError):
        raise OcrError(_NO_ENGINE) from None
    languages = [lang for lang in OCR_LANGUAGES if lang in installed]
    if not languages:
        raise OcrError(f"the OCR engine has none of the languages {'+'.join(OCR_LANGUAGES)} installed")
    return f"tesseract {version}", "+".join(languages)


def _open(data: bytes) -> Image.Image:
    """The decoded image, refused before decoding when it is not PNG/JPEG or has too many pixels."""
    from PIL import Image, UnidentifiedImageError  # ~20 ms to import: only an inbox with screenshots pays for it

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(BytesIO(data))  # reads the header only
            width, height = image.size
            if image.format not in _FORMATS:
                raise OcrError(f"not a PNG or JPEG image ({image.format or 'unknown format'})")
            if width * height > MAX_PIXELS or max(width, height) > MAX_SIDE:
                raise OcrError(f"image too large ({width}x{height} pixels, limit {MAX_PIXELS} pixels)")
            image.load()
    except OcrError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise OcrError(f"image refused as a decompression bomb: {exc}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise OcrError(f"unreadable image: {type(exc).__name__}: {exc}") from None
    return image


def read_image(data: bytes) -> OcrText:
    """The image's words as text (a line per OCR line, a blank line between blocks) with each word's box."""
    image = _open(data)
    engine, languages = _engine()
    prepared = image.convert("RGB") if image.mode not in ("RGB", "L") else image
    text, words = _layout(_ocr(prepared, languages))
    if languages != CYRILLIC_LANGUAGE and CYRILLIC_LANGUAGE in languages.split("+") and _mostly_cyrillic(text):
        languages = CYRILLIC_LANGUAGE  # with Latin models beside it, Tesseract reads "Я" as "A" and "до" as "HO"
        text, words = _layout(_ocr(prepared, languages))
    if not text.strip():
        raise OcrError("no text found in the image (OCR read no words)")
    if len(text) > MAX_TEXT_CHARS:
        raise OcrError(f"OCR text larger than {MAX_TEXT_CHARS} characters")
    return OcrText(text, words, image.width, image.height, _FORMATS[image.format or "PNG"], languages, engine)


def _ocr(image: Image.Image, languages: str) -> dict[str, list]:
    import pytesseract  # with the first screenshot

    try:
        return pytesseract.image_to_data(
            image, lang=languages, output_type=pytesseract.Output.DICT, timeout=OCR_TIMEOUT_S
        )
    except pytesseract.TesseractNotFoundError:
        raise OcrError(_NO_ENGINE) from None
    except RuntimeError as exc:  # pytesseract's timeout
        raise OcrError(f"OCR stopped after {OCR_TIMEOUT_S} s: {exc}") from None
    except pytesseract.TesseractError as exc:
        raise OcrError(f"OCR failed: {exc}") from None


def _mostly_cyrillic(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return sum("\u0400" <= c <= "\u04ff" for c in letters) * 2 > len(letters)


def _layout(found: dict[str, list]) -> tuple[str, list[OcrWord]]:
    """Tesseract's words in reading order: words of a line joined by a space, lines by a newline, blocks and
    paragraphs by a blank line; each word's offsets are those of its characters in the text."""
    parts: list[str] = []
    words: list[OcrWord] = []
    length = 0
    previous: tuple[int, int, int] | None = None
    for i, raw in enumerate(found["text"]):
        word = " ".join(str(raw).split())
        if not word or float(found["conf"][i]) < 0:
            continue
        block, paragraph, line = int(found["block_num"][i]), int(found["par_num"][i]), int(found["line_num"][i])
        if previous is not None:
            same_paragraph = previous[:2] == (block, paragraph)
            separator = (" " if previous[2] == line else "\n") if same_paragraph else "\n\n"
            parts.append(separator)
            length += len(separator)
        previous = (block, paragraph, line)
        words.append(
            OcrWord(
                word_no=len(words) + 1,
                char_start=length,
                char_end=length + len(word),
                x=int(found["left"][i]),
                y=int(found["top"][i]),
                width=int(found["width"][i]),
                height=int(found["height"][i]),
                confidence=round(float(found["conf"][i]), 2),
            )
        )
        parts.append(word)
        length += len(word)
    return "".join(parts) + ("\n" if parts else ""), words
