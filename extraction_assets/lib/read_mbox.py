"""mbox mailboxes: every message becomes its own e-mail document, `<file>.mbox#<n>` (n counts from 1).

The stdlib `mailbox` module splits the file at its "From " lines; each message's bytes are then read
by the same e-mail reader as an `.eml` file, so both give identical documents. A message that cannot
be read costs only itself.
"""

from __future__ import annotations

import mailbox
from collections.abc import Callable
from pathlib import Path

from extraction_assets.lib.models import Document, ReadFailure

# Reads one message's bytes as the document at the given source uri; raises with a clear reason otherwise.
MessageReader = Callable[[bytes, str], Document]


def read_mbox(path: Path, tenant_id: str, source_uri: str, read_message: MessageReader) -> list[Document | ReadFailure]:
    """Every message of the mailbox in file order, as a Document or a ReadFailure with its reason."""
    box = mailbox.mbox(path, create=False)
    try:
        keys = list(box.keys())
        if not keys:
            return [
                ReadFailure(
                    tenant_id=tenant_id,
                    source_uri=source_uri,
                    reason="mbox has no messages (no line starts with 'From ')",
                )
            ]
        out: list[Document | ReadFailure] = []
        for number, key in enumerate(keys, start=1):
            uri = f"{source_uri}#{number}"
            try:
                out.append(read_message(box.get_bytes(key), uri))
            except Exception as exc:  # one unreadable message must not cost the others
                out.append(ReadFailure(tenant_id=tenant_id, source_uri=uri, reason=str(exc) or type(exc).__name__))
        return out
    finally:
        box.close()
