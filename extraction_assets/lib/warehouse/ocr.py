"""The words OCR read in image documents (table `ocr_words`) and the image region of a piece of evidence
(view `evidence_image_regions`): where in the screenshot an item's quote came from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from extraction_assets.lib.models import Document
from extraction_assets.lib.warehouse.connection import rows_as_dicts

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb


def ocr_word_rows(doc: Document) -> list[dict[str, Any]]:
    """The `ocr_words` rows of an image document (none for any other), written with it and stored once."""
    return [
        {
            "doc_id": doc.doc_id,
            "word_no": word.word_no,
            "tenant_id": doc.tenant_id,
            "char_start": word.char_start,
            "char_end": word.char_end,
            "x": word.x,
            "y": word.y,
            "width": word.width,
            "height": word.height,
            "confidence": word.confidence,
        }
        for word in doc.ocr_words
    ]


def evidence_regions(con: duckdb.DuckDBPyConnection, tenant_id: str, item_id: str) -> list[dict[str, Any]]:
    """The image region of each evidence span of an item of `tenant_id` (pixels from the image's top left corner:
    x, y, width, height, and the number of words it covers); empty when its document is not an image."""
    return rows_as_dicts(
        con,
        """SELECT evidence_id, x, y, width, height, words FROM evidence_image_regions
           WHERE tenant_id = ? AND item_id = ? ORDER BY y, x""",
        [tenant_id, item_id],
    )
