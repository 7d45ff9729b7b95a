"""Mail as it arrives: which mail files of the inbox are new or have grown since the mail sensor's cursor.

The cursor keeps each mail file (`.eml`, `.mbox`) as it was when its mail was last extracted in full
(size and modification time), and the files each requested run is reading. A file moves to `done` only when
its run succeeded and stored every message in full; a run that failed, or that left a message to be retried
(a module's record fell back: retried next run without advancing), gives its files back, so the
next tick asks again. Finding the files costs one `stat` per inbox file, through the inbox walk itself (the
same tenant, hidden-file and symbolic-link rules as ingest); nothing is read here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from extraction_assets.lib.readers.inbox_watch import Stamp, inbox_stamps

MAIL_SUFFIXES = frozenset({".eml", ".mbox"})


def mail_stamps(inbox: Path) -> dict[str, Stamp]:
    """Every mail file under a tenant folder, as `source_uri -> (size, mtime_ns)`; no file is opened."""
    return {
        uri: stamp for uri, stamp in inbox_stamps(inbox).items() if PurePosixPath(uri).suffix.lower() in MAIL_SUFFIXES
    }


RETRY_AFTER_S = 30.0  # a file given back waits this long, doubled at each attempt, at most RETRY_AT_MOST_S
RETRY_AT_MOST_S = 3600.0
LOST_AFTER_S = 600.0  # a batch whose runs have not all appeared after this long is given back


class Batch(BaseModel):
    """The runs asked for at one tick: the files they read (as they were) and how many runs were asked for."""

    files: dict[str, Stamp]
    runs: int
    requested_at: float = 0.0  # epoch seconds

    def lost(self, runs_found: int, now: float) -> bool:
        """Runs that never appeared (a tick whose requests were not submitted): the batch is given back."""
        return runs_found < self.runs and now - self.requested_at > LOST_AFTER_S


class MailCursor(BaseModel):
    """The mail sensor's cursor: what was extracted in full, and what each requested batch of runs is reading."""

    done: dict[str, Stamp] = Field(default_factory=dict)
    in_flight: dict[str, Batch] = Field(default_factory=dict)  # batch key -> what it reads
    attempts: dict[str, int] = Field(default_factory=dict)  # file -> batches that gave it back so far
    retry_at: dict[str, float] = Field(default_factory=dict)  # file -> when it may be asked for again (epoch s)

    @classmethod
    def parse(cls, raw: str | None) -> MailCursor:
        return cls.model_validate_json(raw) if raw else cls()

    def dump(self) -> str:
        return self.model_dump_json()

    def changed(self, stamps: Mapping[str, Stamp], now: float) -> dict[str, Stamp]:
        """Files that are new or different from when they were done, that no batch is reading as they are, and
        that are not waiting to be retried."""
        reading = {(uri, stamp) for batch in self.in_flight.values() for uri, stamp in batch.files.items()}
        return {
            uri: stamp
            for uri, stamp in sorted(stamps.items())
            if self.done.get(uri) != stamp and (uri, stamp) not in reading and self.retry_at.get(uri, 0.0) <= now
        }

    def request(self, files: Mapping[str, Stamp], runs: int, now: float = 0.0) -> str:
        """Record a batch of `runs` runs for `files` and return its key: the same files as they are, on the same
        attempt, always give the same key (Dagster starts one run per run key: exactly once)."""
        payload = [[uri, list(stamp), self.attempts.get(uri, 0)] for uri, stamp in sorted(files.items())]
        key = hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]
        self.in_flight[key] = Batch(files=dict(files), runs=runs, requested_at=now)
        return key

    def settle(self, key: str, complete: bool, now: float) -> None:
        """A batch finished: its files are done when it stored everything, else they are given back, to be asked
        for again after a back-off (the next attempt has another key)."""
        batch = self.in_flight.pop(key, None)
        for uri, stamp in (batch.files if batch else {}).items():
            if complete:
                self.done[uri] = stamp
                self.attempts.pop(uri, None)
                self.retry_at.pop(uri, None)
            else:
                self.attempts[uri] = self.attempts.get(uri, 0) + 1
                wait = min(RETRY_AFTER_S * 2 ** (self.attempts[uri] - 1), RETRY_AT_MOST_S)
                self.retry_at[uri] = now + wait

    def forget_missing(self, stamps: Mapping[str, Stamp]) -> None:
        """A file that is gone is no longer remembered (it may come back, as new mail)."""
        for uri in {*self.done, *self.attempts, *self.retry_at} - set(stamps):
            self.done.pop(uri, None)
            self.attempts.pop(uri, None)
            self.retry_at.pop(uri, None)
