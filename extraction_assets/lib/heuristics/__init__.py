"""Registry of deterministic heuristic extractor packs, named by a schema's `heuristic:` key.

Adding a pack means adding one module and one entry here; nothing else has to know which packs
exist. Each pack carries a version: changing a pack's behaviour means bumping it, which makes
the documents it extracted pending again. Each pack also says which documents are its kind: the
folders they usually sit in (None: any folder) and a cheap content gate (`gates.py`).

A pack's code is imported when it is first used (its `extract` or `gate`): a run's versions, folders and
routing rules are read from this table alone, so a run with nothing new to extract imports no pack, and a run
imports only the packs of the documents it extracts (the e-mail pack alone costs about a third of a second).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from extraction_assets.lib.heuristics.gates import Gate
    from extraction_assets.lib.models import CandidateItem, ExtractionInput
    from extraction_assets.lib.schemas import SchemaVersion

__all__ = ["GATE_VERSION", "HEURISTIC_PACKS", "HeuristicPack", "get_pack", "pack_modules", "pack_version"]

GATE_VERSION = "gates-v1"  # part of every routing decision: a change to `gates.py` re-routes, it does not re-extract


@dataclass(frozen=True)
class HeuristicPack:
    version: str
    extractor: str  # "module:function" in this package: the pack's extract(doc, schema)
    gate_name: str  # the function in `gates.py` that scores "is this my kind of document?"
    folders: tuple[str, ...] | None  # folder kinds its documents sit in; None: no folder is another schema's
    # fields whose values it reads and weighs with the same evidence: a calibration fits each group as one model
    # (`calibration.fit.fit_pool`); a change here changes the calibration file, not what is extracted
    calibration_pools: tuple[tuple[str, ...], ...] = ()

    @property
    def extract(self) -> Callable[[ExtractionInput, SchemaVersion], list[CandidateItem]]:
        module, _, function = self.extractor.partition(":")
        return getattr(import_module(f"{__name__}.{module}"), function)

    @property
    def gate(self) -> Gate:
        return getattr(import_module(f"{__name__}.gates"), self.gate_name)


HEURISTIC_PACKS: dict[str, HeuristicPack] = {
    "pulse": HeuristicPack(
        version="heuristic-pulse-v4",
        extractor="pulse:extract_pulse_pack",
        gate_name="pulse_gate",
        folders=("pulses", "chat", "meetings"),
    ),
    "interview": HeuristicPack(
        version="heuristic-interview-v1",
        extractor="interview:extract_interview",
        gate_name="interview_gate",
        folders=("interviews",),
    ),
    "receipt": HeuristicPack(
        version="heuristic-receipt-v15",
        extractor="receipt:extract_receipt",
        gate_name="receipt_gate",
        folders=("receipts",),
    ),
    "contract": HeuristicPack(
        version="heuristic-contract-v31",
        extractor="contract:extract_contract",
        gate_name="contract_gate",
        folders=("contracts",),
        calibration_pools=(("party_a", "party_b"), ("agreement_date", "start_date", "end_date")),
    ),
    "email": HeuristicPack(
        version="heuristic-email-v1", extractor="email:extract_email", gate_name="email_gate", folders=None
    ),
    "generic": HeuristicPack(
        version="heuristic-generic-v1", extractor="generic:extract_generic", gate_name="generic_gate", folders=()
    ),
}


def pack_modules() -> list[str]:
    """The modules every pack's code is in (its extractor's, the gates'): what a worker process that extracts
    imports."""
    extractors = {f"{__name__}.{pack.extractor.partition(':')[0]}" for pack in HEURISTIC_PACKS.values()}
    return sorted(extractors | {f"{__name__}.gates"})


def get_pack(name: str) -> HeuristicPack:
    """The pack called ``name``; a KeyError names the known packs so a typo is easy to spot."""
    try:
        return HEURISTIC_PACKS[name]
    except KeyError:
        known = ", ".join(sorted(HEURISTIC_PACKS)) or "none"
        raise KeyError(f"no heuristic pack named {name!r}; known packs: {known}") from None


def pack_version(name: str) -> str:
    return get_pack(name).version
