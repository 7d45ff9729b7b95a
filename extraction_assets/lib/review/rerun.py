"""Before re-extracting a partition: what it would overwrite, and what needs a person's confirmation.

A re-run replaces machine-owned results (draft, needs_review) of the same schema version; items a
person owns (accepted, rejected, or corrected by a human) are kept unless the run is confirmed.
Another schema version is another partition, so its results are never touched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from extraction_assets.lib.warehouse.extraction import MACHINE_OWNED_STATUSES

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb


class RerunPreview(BaseModel):
    schema_version: str
    tenant_id: str | None
    documents: int
    would_overwrite: int  # draft / needs_review items the re-run replaces
    need_confirmation: int  # accepted / rejected / human items it replaces only when confirmed
    protected_by_status: dict[str, int] = Field(default_factory=dict)
    protected_items: list[str] = Field(default_factory=list)

    @property
    def message(self) -> str:
        scope = f" in tenant {self.tenant_id}" if self.tenant_id else ""
        return (
            f"re-extracting {self.schema_version}{scope} ({self.documents} documents) would overwrite "
            f"{self.would_overwrite} draft/needs_review items; {self.need_confirmation} need confirmation "
            "(accepted, rejected or corrected by a person)"
        )


def preview_rerun(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    tenant_id: str | None = None,
    doc_ids: Sequence[str] | None = None,
) -> RerunPreview:
    """Count the partition's items a re-extraction of `doc_ids` (default: every document) would replace; no
    document replaces nothing, and is not asked (a window of a pass with nothing to extract, every version's)."""
    ids = None if doc_ids is None else list(doc_ids)
    rows = (
        con.execute(
            """SELECT item_id, status, extracted_by FROM extracted_items
               WHERE schema_version = ? AND (CAST(? AS VARCHAR) IS NULL OR tenant_id = ?)
                 AND (CAST(? AS VARCHAR[]) IS NULL OR doc_id IN (SELECT unnest(?)))
               ORDER BY item_id""",
            [schema_version, tenant_id, tenant_id, ids, ids],
        ).fetchall()
        if ids != []
        else []
    )
    protected = [(i, s, by) for i, s, by in rows if s not in MACHINE_OWNED_STATUSES or by == "human"]
    by_status = Counter(f"{status} (human)" if by == "human" else status for _, status, by in protected)
    if doc_ids is None:
        documents = int(
            con.execute(
                """SELECT count(DISTINCT doc_id) FROM extraction_status WHERE schema_version = ?
                   AND (CAST(? AS VARCHAR) IS NULL OR tenant_id = ?)""",
                [schema_version, tenant_id, tenant_id],
            ).fetchone()[0]  # type: ignore[index]
        )
    else:
        documents = len(doc_ids)
    return RerunPreview(
        schema_version=schema_version,
        tenant_id=tenant_id,
        documents=documents,
        would_overwrite=len(rows) - len(protected),
        need_confirmation=len(protected),
        protected_by_status=dict(sorted(by_status.items())),
        protected_items=[i for i, _, _ in protected],
    )
