"""A person's side of the items: corrections, the audit chain, queue queries, re-run previews, Label Studio."""

from extraction_assets.lib.review.audit import (
    AuditEntry,
    check_chain,
    keep_outside_head,
    read_outside_head,
    record_head,
)
from extraction_assets.lib.review.corrections import (
    ALLOWED_TRANSITIONS,
    Action,
    Change,
    InvalidCorrection,
    ItemNotFound,
    NothingToChange,
    ReviewError,
    apply_change,
    history,
)
from extraction_assets.lib.review.label_studio import export_tasks, import_annotations, label_config, utf16_offset
from extraction_assets.lib.review.queries import ANY_STATUS, highlight_segments, item_detail, list_queue, queue_filters
from extraction_assets.lib.review.rerun import RerunPreview, preview_rerun
from extraction_assets.lib.review.reveal import REVEAL, reveal_item

__all__ = [
    "ALLOWED_TRANSITIONS",
    "ANY_STATUS",
    "REVEAL",
    "Action",
    "AuditEntry",
    "Change",
    "InvalidCorrection",
    "ItemNotFound",
    "NothingToChange",
    "RerunPreview",
    "ReviewError",
    "apply_change",
    "check_chain",
    "export_tasks",
    "highlight_segments",
    "history",
    "import_annotations",
    "item_detail",
    "keep_outside_head",
    "label_config",
    "list_queue",
    "preview_rerun",
    "queue_filters",
    "read_outside_head",
    "record_head",
    "reveal_item",
    "utf16_offset",
]
