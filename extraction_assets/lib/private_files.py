"""Files readable by their owner only: lock files that name a process, the audit head kept beside the warehouse, the
reviewers' token hashes. Created with mode 0600 from the start (never widened, then narrowed)."""

from __future__ import annotations

import os
from pathlib import Path


def open_private(path: os.PathLike[str] | str, flags: int = os.O_RDWR) -> int:
    """A descriptor of `path`, created readable and writable by its owner only."""
    return os.open(path, flags | os.O_CREAT, 0o600)


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically (a partial file renamed over it), readable by its owner only."""
    partial = path.with_name(path.name + ".tmp")
    partial.unlink(missing_ok=True)
    with os.fdopen(open_private(partial, os.O_WRONLY | os.O_EXCL), "w", encoding="utf-8") as out:
        out.write(text)
    partial.replace(path)
