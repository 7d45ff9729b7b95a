"""Files as they land: each inbox file's (size, modification time), found with one `stat` per file and nothing read.

The inbox walk itself finds them (the same tenant, hidden-file and symbolic-link rules as ingest), so a sensor sees
exactly the files an ingest would look at. A digest of every stamp is a cursor that changes when a file is added,
changed or removed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from extraction_assets.lib.readers.inbox import read_inbox

Stamp = tuple[int, int]  # (size in bytes, modification time in ns)


def inbox_stamps(inbox: Path) -> dict[str, Stamp]:
    """Every file under a tenant folder, as `source_uri -> (size, mtime_ns)`; no file is opened."""
    stamps: dict[str, Stamp] = {}

    def note(source_uri: str, info: os.stat_result, _content: Callable[[], bytes]) -> bool:
        stamps[source_uri] = (info.st_size, info.st_mtime_ns)
        return False  # never read: ingest reads them, in the run this detection asks for

    for _failure in read_inbox(inbox, needs_reading=note):  # only problems come out (broken links, ...)
        pass
    return stamps


def stamps_digest(stamps: Mapping[str, Stamp]) -> str:
    """One short value for the whole inbox as it stands: another file, or any file changed, changes it."""
    return hashlib.sha256(json.dumps(sorted(stamps.items())).encode()).hexdigest()[:24]
