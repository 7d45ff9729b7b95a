"""Which schema version reads which document: kinds, tenants, path globs, folders and the pack's content gate.

The rules, in order (README: "Which schema reads which document"):
1. the document's kind must be one of the schema's `document_kinds`, its tenant one of `applies_to.tenants`;
2. explicit `applies_to.paths` globs (relative to the tenant folder) decide alone when given;
3. a document in one of the schema's own folders (`applies_to.folders`, else its pack's) is taken when the
   pack's gate gives it at least half the minimum score; in a folder that is another kind's (mail, receipts,
   contracts, meetings, ...) it is not taken;
4. anywhere else the gate decides: a score of at least `applies_to.min_score`.
"""

from __future__ import annotations

import hashlib
import json
import re
from fnmatch import fnmatchcase
from typing import NamedTuple

from extraction_assets.lib.models import Document, ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion

# Folder names as people name them, by the kind of document they hold.
FOLDER_KINDS: dict[str, frozenset[str]] = {
    "mail": frozenset({"mail", "email", "emails", "e-mail", "inbox", "mailbox", "mailboxes", "thu", "почта"}),
    "receipts": frozenset({
        "receipts", "receipt", "invoices", "invoice", "expenses", "bills", "hoa-don", "chung-tu", "чеки", "счета",
    }),
    "contracts": frozenset({"contracts", "contract", "agreements", "legal", "dogovory", "hop-dong", "договоры"}),
    "meetings": frozenset({"meetings", "meeting", "minutes", "transcripts", "cuoc-hop", "встречи", "会议"}),
    "pulses": frozenset({"pulses", "pulse", "check-ins", "checkins", "standups", "stand-ups"}),
    "chat": frozenset({"chat", "chats"}),
    "interviews": frozenset({"interviews", "interview", "phong-van", "интервью", "访谈"}),
    "tickets": frozenset({"tickets", "ticket", "support", "helpdesk", "ho-tro", "поддержка"}),
}  # fmt: skip
_KIND_OF_FOLDER = {name: kind for kind, names in FOLDER_KINDS.items() for name in names}
_SEPARATORS = re.compile(r"[\s_]+")


class Decision(NamedTuple):
    taken: bool
    score: float | None  # the gate's score, where the gate was asked
    reason: str


def _folder_name(segment: str) -> str:
    return _SEPARATORS.sub("-", segment.strip().lower())


def folders_of(source_uri: str) -> list[str]:
    """The folders between the tenant folder and the file, nearest first, normalised (`Receipts_2026` stays)."""
    parts = source_uri.partition("#")[0].split("/")
    return [_folder_name(p) for p in reversed(parts[1:-1])]


def folder_kind(source_uri: str) -> str | None:
    """The kind of the nearest folder whose name says what it holds (`acme/mail/2026/x.eml` -> mail)."""
    return next((_KIND_OF_FOLDER[f] for f in folders_of(source_uri) if f in _KIND_OF_FOLDER), None)


def own_folders(schema: SchemaVersion) -> frozenset[str] | None:
    """The folder kinds and names that hold this schema's documents; None: it has no folders of its own."""
    from extraction_assets.lib.heuristics import get_pack  # the registry only: a pack loads when its gate runs

    declared = schema.applies_to.folders
    folders = declared if declared is not None else get_pack(schema.heuristic).folders
    if folders is None:
        return None
    return frozenset(_KIND_OF_FOLDER.get(_folder_name(f), _folder_name(f)) for f in folders)


def rules_fingerprint(schema: SchemaVersion) -> str:
    """What a routing decision depends on: a change re-routes the schema's documents, nothing else."""
    from extraction_assets.lib.heuristics import GATE_VERSION  # not with the code location (the registry alone)

    rules = {
        "kinds": sorted(schema.document_kinds),
        "applies_to": schema.applies_to.model_dump(),
        "heuristic": schema.heuristic,
        "gate": GATE_VERSION,
        "folders": sorted(own) if (own := own_folders(schema)) is not None else None,
    }
    return hashlib.sha256(json.dumps(rules, sort_keys=True).encode()).hexdigest()[:16]


class GateDecides(NamedTuple):
    """What the rules leave to the pack's gate, which reads the text: the score it must reach, and where."""

    threshold: float
    where: str


def decide_by_place(kind: str, tenant_id: str, source_uri: str, schema: SchemaVersion) -> Decision | GateDecides:
    """The decision rules 1 to 3 make from a document's kind, tenant and path alone, or what is left to the gate: a
    run reads the text of only the documents whose gate must be asked."""
    rules = schema.applies_to
    if kind not in schema.document_kinds:
        return Decision(False, None, f"kind {kind} not read")
    if rules.tenants and tenant_id not in rules.tenants:
        return Decision(False, None, "tenant not listed")
    if rules.paths:
        path = source_uri.partition("#")[0].partition("/")[2].lower()
        matched = any(fnmatchcase(path, glob.lower()) for glob in rules.paths)
        return Decision(matched, None, "path matches" if matched else "path does not match")
    own = own_folders(schema)
    folders = folders_of(source_uri)
    if own is not None and any(f in own or _KIND_OF_FOLDER.get(f) in own for f in folders):
        threshold, where = rules.min_score / 2, "own folder"
    elif own is not None and (held := folder_kind(source_uri)) is not None:
        return Decision(False, None, f"folder holds {held}")
    else:
        threshold, where = rules.min_score, "gate"
    if not rules.gate:
        return Decision(True, None, where)
    return GateDecides(threshold, where)


def gate_decision(scrubbed: ExtractionInput, schema: SchemaVersion, left: GateDecides) -> Decision:
    """The gate's decision on what `decide_by_place` left to it."""
    from extraction_assets.lib.heuristics import get_pack  # not with the code location: the pack loads with its gate

    score = get_pack(schema.heuristic).gate(scrubbed, schema)
    verdict = "passed" if score >= left.threshold else "failed"
    return Decision(score >= left.threshold, score, f"{left.where}, gate {verdict}")


def decide(doc: Document, scrubbed: ExtractionInput, schema: SchemaVersion) -> Decision:
    """Does `schema` read `doc`? The gate sees the scrubbed text, as the extractor would."""
    placed = decide_by_place(doc.kind, doc.tenant_id, doc.source_uri, schema)
    return placed if isinstance(placed, Decision) else gate_decision(scrubbed, schema, placed)
