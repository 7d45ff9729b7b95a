"""A person's side of the items: who acts (authentication), corrections, the audit chain, queue queries, re-run
previews, Label Studio."""

from extraction_assets.lib.review.audit import (
    AuditEntry,
    check_chain,
    keep_outside_head,
    read_kept_heads,
    record_head,
)
from extraction_assets.lib.review.auth import (
    AUTH_ENV,
    AuthConfig,
    Authenticator,
    AuthError,
    Principal,
    cli_actor,
    hash_token,
    load_auth,
    new_token,
    os_user,
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
    provenance,
)
from extraction_assets.lib.review.label_studio import export_tasks, import_annotations, label_config, utf16_offset
from extraction_assets.lib.review.queries import ANY_STATUS, highlight_segments, item_detail, list_queue, queue_filters
from extraction_assets.lib.review.rerun import RerunPreview, preview_rerun
from extraction_assets.lib.review.reveal import REVEAL, reveal_item

__all__ = [
    "ALLOWED_TRANSITIONS",
    "ANY_STATUS",
    "AUTH_ENV",
    "REVEAL",
    "Action",
    "AuditEntry",
    "AuthConfig",
    "AuthError",
    "Authenticator",
    "Change",
    "InvalidCorrection",
    "ItemNotFound",
    "NothingToChange",
    "Principal",
    "RerunPreview",
    "ReviewError",
    "apply_change",
    "check_chain",
    "cli_actor",
    "export_tasks",
    "hash_token",
    "highlight_segments",
    "history",
    "import_annotations",
    "item_detail",
    "keep_outside_head",
    "label_config",
    "list_queue",
    "load_auth",
    "new_token",
    "os_user",
    "preview_rerun",
    "provenance",
    "queue_filters",
    "read_kept_heads",
    "record_head",
    "reveal_item",
    "utf16_offset",
]
