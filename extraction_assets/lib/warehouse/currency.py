"""Whether a schema version's review queue is in step with its items: it holds exactly the rows its items give
(`review_queue.queue_select`: needs_review items, and those a rival version disagrees with), each queued after the
item's last change, and nothing it was ranked or compared against moved since (a draft joining a group moves the
group's size and rank; a rival re-extracted, or the version's role changed, moves its disagreements). A run killed
between extraction and the queue's rebuild leaves a queue that is not. A queue in step is not written again by a pass
with nothing new.

Deriving the expected queue costs a query over every undecided item of the version (its group ids, its rivals'
disagreements): 40 to 120 ms a version, most of a pass with nothing new. So a queue built, or found in step, records
the fingerprint of everything it is derived from (`review_queue.queue_inputs`): while that fingerprint is unchanged,
so is the queue's verdict, and only the fingerprint is computed (a scan of the version's rows, no join of its text).
Another fingerprint (new items: a pass with something new) is first checked for being the recorded one plus new
items only (`review_queue.extensions_of`), the queue then extended by their groups' rows, every such version's at once
(`review_queue.extend_review_queues`); else compared with what moved after the queue was built, by timestamps, and
the queue is derived only when nothing did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from extraction_assets.lib.warehouse.backend import retry_conflicts
from extraction_assets.lib.warehouse.connection import now, transaction
from extraction_assets.lib.warehouse.review_queue import (
    QUEUE_COLUMNS,
    Extension,
    QueueInputs,
    extend_review_queues,
    extensions_of,
    queue_currency,
    queue_select,
    remember_queue_inputs,
)

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

_EXPECTED = queue_select("i.schema_version = $version", "$queued_at")
# What moved after the queue was last built (cheap: no row of it is derived): a queued item changed after it was
# queued, an undecided item (a draft moves its group, a needs_review item is one to queue) changed after the last row
# was queued, the version's role was decided since, or a rival's items changed since. Any of these: out of step.
_MOVED_SINCE_QUEUED = """WITH queued AS (SELECT item_id, queued_at FROM review_queue WHERE schema_version = $version),
         last AS (SELECT max(queued_at) AS at FROM queued)
    SELECT EXISTS (SELECT 1 FROM queued q JOIN extracted_items i USING (item_id) WHERE q.queued_at < i.updated_at)
        OR EXISTS (SELECT 1 FROM extracted_items i, last
                   WHERE i.schema_version = $version AND i.status IN ('draft', 'needs_review')
                     AND i.updated_at > last.at)
        OR EXISTS (SELECT 1 FROM schema_version_roles r, last
                   WHERE r.schema_version = $version AND r.decided_at > last.at)
        OR EXISTS (SELECT 1 FROM schema_version_roles r, unnest(CAST(r.rivals AS VARCHAR[])) AS v(rival),
                          extracted_items t, last
                   WHERE r.schema_version = $version AND t.schema_version = v.rival AND t.updated_at > last.at)"""
# The queue derived again and compared with the stored one, row by row, every column but when it was queued (the
# costly part): a document's source or a rival's verdict moved behind the queue changes rows, not which items.
_ROW = QUEUE_COLUMNS.replace(", queued_at", "")
_QUEUE_OUT_OF_STEP = f"""WITH expected AS (SELECT {_ROW} FROM ({_EXPECTED})),
         queued AS (SELECT {_ROW} FROM review_queue WHERE schema_version = $version)
    SELECT EXISTS (SELECT * FROM expected EXCEPT SELECT * FROM queued)
        OR EXISTS (SELECT * FROM queued EXCEPT SELECT * FROM expected)"""


QueueStep = Literal["in step", "extended", "out of step"]


@retry_conflicts  # it may write its fingerprint: on a DuckLake catalog a commit can lose a race, and is run again
def queue_in_step(con: duckdb.DuckDBPyConnection, schema_version: str, remember: bool = False) -> bool:
    """The partition's review queue holds exactly the rows its items give, each queued after the item's last change,
    and nothing its rows were ranked or compared against changed since: known at once when what it is derived from
    has the fingerprint recorded when it was last built or found in step, out of step when something it follows
    moved after it was built, else derived and compared. With
    `remember`, a queue found in step records its fingerprint (the connection writes). One transaction: the
    fingerprint and the verdict are of the same rows."""
    with transaction(con):
        inputs, remembered = queue_currency(con, [schema_version])[schema_version]
        return _step(con, schema_version, inputs, remembered, remember) == "in step"


@retry_conflicts
def bring_queues_in_step(con: duckdb.DuckDBPyConnection, schema_versions: Sequence[str]) -> dict[str, QueueStep]:
    """`queue_in_step` (remembering a queue found in step) for each version, and a queue that only new items left
    behind (a pass with new documents) extended by their groups' rows (`review_queue.extend_review_queues`: the queue
    a rebuild would give, at the cost of what is new): "in step", "extended", or "out of step" (for the caller to
    rebuild). One transaction, whose first statement reads every version's fingerprint (`queue_currency`): a version
    whose fingerprint is the recorded one costs nothing more."""
    with transaction(con):
        steps: dict[str, QueueStep] = {}
        extensions: dict[str, Extension] = {}
        currency = queue_currency(con, schema_versions)
        behind = {
            version: (remembered, inputs)
            for version, (inputs, remembered) in currency.items()
            if remembered is not None and remembered.fingerprint != inputs
        }
        found = extensions_of(con, behind) if behind else {}
        for version, (inputs, remembered) in currency.items():
            extension = found.get(version)
            if extension is not None:
                extensions[version], steps[version] = extension, "extended"
            else:
                steps[version] = _step(con, version, inputs, remembered, remember=True)
        extend_review_queues(con, extensions)  # one version's queue rows read no other version's queue
        return steps


def _step(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    inputs: str,
    remembered: QueueInputs | None,
    remember: bool,
) -> QueueStep:
    """The verdict on a queue whose fingerprint is `inputs` now and `remembered` when last built (inside the caller's
    transaction, which read both)."""
    if remembered is not None and remembered.fingerprint == inputs:
        return "in step"
    if con.execute(_MOVED_SINCE_QUEUED, {"version": schema_version}).fetchone()[0]:  # type: ignore[index]
        return "out of step"
    found = con.execute(_QUEUE_OUT_OF_STEP, {"version": schema_version, "queued_at": now()})
    in_step = not found.fetchone()[0]  # type: ignore[index]
    if in_step and remember:
        remember_queue_inputs(con, schema_version, inputs)
    return "in step" if in_step else "out of step"
