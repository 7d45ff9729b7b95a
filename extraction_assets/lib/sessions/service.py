"""A live session's three extractions, as the interview runs.

- After each new respondent turn, lightweight extraction updates `session_state` (coverage and confidence per
  field); it never writes an item, and when it fails the session goes on (the error is kept on the session row).
- When an objective becomes covered (every field that names it is covered), checkpoint extraction writes those
  fields as `draft` items under the session's schema version, by the configured extractor; items a person owns
  are left as they are.
- When the session is completed, post-session extraction extracts the whole transcript as any document: every
  field, required ones as null placeholders, the seven review rules; it replaces the checkpoint drafts. The delay
  from the file's completion to the stored records is kept on the session row (`final_delay_s`).

The session's transcript is a document of its own (its id is the session's), scrubbed before any extractor sees
it. Inbox routing never takes it, so only this flow extracts it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from extraction_assets.lib.extraction import Extractor, extract_document, extraction_input
from extraction_assets.lib.models import (
    DeadLetter,
    Document,
    ExtractionInput,
    ExtractionOutcome,
    ItemRecord,
    ScrubbedDocument,
)
from extraction_assets.lib.pii import PiiPolicy, scrub_batch
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.readers.tenant_files import Entry
from extraction_assets.lib.schemas import SchemaError, SchemaVersion
from extraction_assets.lib.sessions.light import FieldState, LightExtractor, covered_objectives
from extraction_assets.lib.sessions.transcript import (
    NO_TENANT,
    SessionFile,
    SessionFileError,
    read_session,
    session_document,
    session_files,
)
from extraction_assets.lib.warehouse import (
    cache_entries_for,
    document_texts,
    load_documents,
    load_scrubbed,
    load_session_rows,
    now,
    record_dead_letters,
    requeue_items,
    upsert_scrubbed,
    upsert_session,
    upsert_session_document,
    write_checkpoint,
    write_extraction_batch,
    write_session_state,
)

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

Connect = Callable[[], AbstractContextManager["duckdb.DuckDBPyConnection"]]


class SessionEnv(BaseModel):
    """What the flow needs besides the warehouse: where sessions and prompts are, the scrub policy, extractors."""

    model_config = {"arbitrary_types_allowed": True}

    sessions_dir: Path
    prompts_dir: Path
    policy: PiiPolicy = Field(default_factory=PiiPolicy)
    vault_key: bytes | None = None
    extractor: Any  # lib.extraction.Extractor
    light: Any  # sessions.LightExtractor


class SessionReport(BaseModel):
    """What one pass did to one session."""

    tenant_id: str
    session_id: str
    status: str
    new_respondent_turns: int = 0
    light: str = "skipped"  # ok, failed, skipped (no new respondent turn)
    light_error: str | None = None
    checkpointed: list[str] = Field(default_factory=list)  # objectives whose fields were written as drafts
    checkpoint_items: int = 0
    final_items: int | None = None  # set when post-session extraction ran
    final_delay_s: float | None = None
    error: str | None = None  # the file could not be read, scrubbed or extracted (dead-lettered)


def sync_sessions(connect: Connect, env: SessionEnv) -> list[SessionReport]:
    """Every session file whose stamp changed since it was last read, one at a time; every entry that may not be
    read (a link out of its tenant, ...) is a dead letter again (the same letter: not a new row)."""
    changed: list[tuple[Entry, dict[str, Any] | None]] = []
    with connect() as con:
        known = load_session_rows(con)
        for entry in session_files(env.sessions_dir):
            previous = None if entry.info is None else known.get(_session_key(entry))
            stamp = None if entry.info is None else (entry.info.st_size, entry.info.st_mtime_ns)
            unchanged = previous and (previous["file_size"], previous["file_mtime_ns"]) == stamp
            if not unchanged or _final_pending(previous):
                changed.append((entry, previous))
        stored = document_texts(con, [p["doc_id"] for _, p in changed if p and p["doc_id"]])
    schemas: dict[str, SchemaVersion] = {}  # each schema version's file is parsed once per pass
    return [
        sync_session(connect, env, entry, previous, schemas, stored.get(previous["doc_id"]) if previous else None)
        for entry, previous in changed
    ]


def _session_key(entry: Entry) -> tuple[str, str]:
    """(tenant, session id) of a listed entry: its tenant folder and its file name without the extension."""
    tenant, _, name = entry.rel.partition("/")
    return (tenant, Path(name).stem) if name else (NO_TENANT, tenant)


def _schema(prompts_dir: Path, key: str) -> SchemaVersion:
    """The schema version a session names: a prompt file of the prompts folder (the key is checked on reading)."""
    try:
        return load_schema(prompts_dir, key)
    except FileNotFoundError:
        raise SessionFileError(f"schema version {key!r} has no prompt file in the prompts folder") from None


def _final_pending(row: dict[str, Any] | None) -> bool:
    """A completed session whose post-session extraction has not succeeded yet is tried again on every pass."""
    return row is not None and row["status"] == "completed" and row["final_extracted_at"] is None


def _letter(tenant: str, source: str, reason: str) -> DeadLetter:
    return DeadLetter(stage="session", tenant_id=tenant, source_uri=source, reason=reason)


def sync_session(
    connect: Connect,
    env: SessionEnv,
    entry: Entry,
    previous: dict[str, Any] | None,
    schemas: dict[str, SchemaVersion] | None = None,
    stored_text: str | None = None,
) -> SessionReport:
    """One session file: light, checkpoint and final extraction as its state asks, then one connection stores
    the transcript and all they produced (none is held while an extractor works).

    `stored_text` is the transcript as stored so far: a version that changes it instead of appending to it is
    refused (a dead letter), since stored evidence cites offsets into it."""
    tenant, session_id = _session_key(entry)
    try:
        session = read_session(env.sessions_dir, entry)
        schemas = {} if schemas is None else schemas
        if session.schema_version not in schemas:
            schemas[session.schema_version] = _schema(env.prompts_dir, session.schema_version)
        schema = schemas[session.schema_version]
        doc = session_document(session) if session.turns else None
    except (SessionFileError, SchemaError, OSError) as exc:
        with connect() as con:
            record_dead_letters(con, [_letter(tenant, entry.rel, f"session: {exc}")])
        return SessionReport(tenant_id=tenant, session_id=session_id, status="unreadable", error=str(exc))
    letters = [_letter(tenant, session.source_uri, f"session line skipped: {p}") for p in session.problems]
    report = SessionReport(tenant_id=tenant, session_id=session_id, status=session.status)
    if previous and stored_text and doc and not doc.text.startswith(stored_text):
        report.error = "the transcript changed turns already stored (only appending is supported): not read"
        letters.append(_letter(tenant, session.source_uri, f"session: {report.error}"))
        seen = {**previous, "file_size": session.size, "file_mtime_ns": session.mtime_ns, "updated_at": now()}
        with connect() as con:
            record_dead_letters(con, letters)
            upsert_session(con, seen)
        return report
    row = _session_row(session, previous, doc)
    batch = scrub_batch([doc], env.policy, env.vault_key) if doc else None
    if doc is None or batch is None or batch.failures:  # nothing said yet, or a transcript that cannot be masked
        if batch is not None:
            report.error = "the transcript could not be scrubbed (see dead_letters, stage scrub)"
            letters += batch.failures
        with connect() as con:
            record_dead_letters(con, letters)
            upsert_session(con, row)
        return report
    from extraction_assets.lib.heuristics.interview import respondent_turn_ids  # the packs load when first used

    scrubbed = batch.rows[0]
    einput = extraction_input(doc, scrubbed)
    respondent = respondent_turn_ids(einput, schema)
    report.new_respondent_turns = len(respondent) - int(previous["user_turns"] if previous else 0)
    row["user_turns"] = len(respondent)
    states = _light(env.light, schema, einput, report) if report.new_respondent_turns > 0 else None
    if report.light != "skipped":
        row["light_error"] = report.light_error
    drafts: list[ItemRecord] = []
    if session.status == "in_progress" and states is not None:
        covered = covered_objectives(states)
        report.checkpointed = [o for o in covered if o not in row["objectives_covered"]]
        if report.checkpointed:
            outcome = _extract(connect, env.extractor, doc, scrubbed, schema)
            drafts, letters = _drafts(outcome, schema, set(covered)), letters + outcome.dead_letters
            row["objectives_covered"] = sorted(set(row["objectives_covered"]) | set(covered))
    final = _extract(connect, env.extractor, doc, scrubbed, schema) if session.status == "completed" else None
    with connect() as con:
        upsert_session_document(con, doc)
        upsert_scrubbed(con, batch.rows, batch.sealed)
        record_dead_letters(con, letters)
        if states is not None:
            after = respondent[-1] if respondent else None
            write_session_state(con, tenant, session_id, schema.key, states, after, env.light.name)
        if drafts:
            report.checkpoint_items = write_checkpoint(con, drafts)["items"]
        if final is not None:
            report.final_items, report.error = _store_final(con, schema, final, env.extractor)
            if report.error is None:
                stamp = now()
                row["final_extracted_at"] = stamp
                row["final_delay_s"] = report.final_delay_s = round((stamp - row["completed_at"]).total_seconds(), 3)
        upsert_session(con, row)
    return report


def _session_row(session: SessionFile, previous: dict[str, Any] | None, doc: Document | None) -> dict[str, Any]:
    stamp = now()
    was_completed = previous is not None and previous["status"] == "completed"
    completed_at = None
    if session.status == "completed":  # when the file said so: its write time, the first time it was seen
        completed_at = previous["completed_at"] if was_completed and previous else session.modified_at
    return {
        "tenant_id": session.tenant_id,
        "session_id": session.session_id,
        "doc_id": doc.doc_id if doc else "",
        "source_uri": session.source_uri,
        "schema_version": session.schema_version,
        "status": session.status,
        "turn_count": len(session.turns),
        "user_turns": previous["user_turns"] if previous else 0,
        "file_size": session.size,
        "file_mtime_ns": session.mtime_ns,
        "objectives_covered": list(previous["objectives_covered"]) if previous else [],
        "light_error": previous["light_error"] if previous else None,
        "started_at": previous["started_at"] if previous else stamp,
        "updated_at": stamp,
        "completed_at": completed_at,
        "final_extracted_at": previous["final_extracted_at"] if was_completed and previous else None,
        "final_delay_s": previous["final_delay_s"] if was_completed and previous else None,
    }


def _light(
    light: LightExtractor, schema: SchemaVersion, einput: ExtractionInput, report: SessionReport
) -> list[FieldState] | None:
    """Coverage after the latest respondent turn; a failure is reported and stops nothing."""
    try:
        states = light.assess(einput, schema)
    except Exception as exc:  # a model timeout, a bad answer, anything: the session goes on
        report.light, report.light_error = "failed", f"{type(exc).__name__}: {exc}"[:500]
        return None
    report.light = "ok"
    return states


def _drafts(outcome: ExtractionOutcome, schema: SchemaVersion, objectives: set[str]) -> list[ItemRecord]:
    """Checkpoint drafts of the covered objectives' fields; a field without a grounded value waits for the final
    pass, and so do the seven review rules (FR-06-2, FR-06-6)."""
    fields = {f.name for f in schema.fields if f.objective_name in objectives}
    return [
        i.model_copy(
            update={
                "status": "draft",
                "review_reasons": [],
                "reasoning_summary": f"{i.reasoning_summary or ''} (checkpoint draft: reviewed after the session)",
            }
        )
        for i in outcome.items
        if i.item_type in fields and i.evidence
    ]


def _extract(
    connect: Connect, extractor: Extractor, doc: Document, scrubbed: ScrubbedDocument, schema: SchemaVersion
) -> ExtractionOutcome:
    if extractor.model:  # the model's cached answers for this transcript, read in a short connection
        with connect() as con:
            extractor.preload_cache(cache_entries_for(con, extractor.model, [doc.doc_id]))
    return extract_document(doc, scrubbed, schema, extractor)


def _store_final(
    con: duckdb.DuckDBPyConnection,
    schema: SchemaVersion,
    outcome: ExtractionOutcome,
    extractor: Extractor,
    confirm_overwrite: bool = False,
) -> tuple[int, str | None]:
    """Store a post-session extraction: (items stored, the error of a failed run, which keeps the previous items)."""
    written = write_extraction_batch(con, schema.key, [outcome], confirm_overwrite, extractor.take_cache_entries())
    requeue_items(con, [i.item_id for i in outcome.items])
    return written["items"], outcome.error if outcome.status == "failed" else None


def final_extraction(
    connect: Connect,
    extractor: Extractor,
    doc: Document,
    scrubbed: ScrubbedDocument,
    schema: SchemaVersion,
    confirm_overwrite: bool = False,
) -> tuple[int, str | None]:
    """The whole transcript under one schema version, as any document: (items stored, the error of a failed run).

    It replaces the session's machine-owned items of that version (checkpoint drafts included); items a person
    owns are kept unless `confirm_overwrite`. A failed run keeps the previous items (and is retried next pass).
    """
    outcome = _extract(connect, extractor, doc, scrubbed, schema)
    with connect() as con:
        return _store_final(con, schema, outcome, extractor, confirm_overwrite)


def reextract_session(
    connect: Connect, extractor: Extractor, doc_id: str, schema: SchemaVersion, confirm_overwrite: bool
) -> tuple[int, str | None]:
    """Post-session extraction again, under a chosen schema version (the interview API's re-extract)."""
    with connect() as con:
        [doc] = load_documents(con, [doc_id])
        scrubbed = load_scrubbed(con, [doc_id])[doc_id]
    return final_extraction(connect, extractor, doc, scrubbed, schema, confirm_overwrite)
