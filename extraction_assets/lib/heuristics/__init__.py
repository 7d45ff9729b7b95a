"""Registry of deterministic heuristic extractor packs, named by a schema's `heuristic:` key.

Adding a pack means adding one module and one entry here; nothing else has to know which packs
exist. Each pack carries a version: changing a pack's behaviour means bumping it, which makes
the documents it extracted pending again. Each pack also says which documents are its kind: the
folders they usually sit in (None: any folder) and a cheap content gate (`gates.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from extraction_assets.lib.heuristics.contract import extract_contract
from extraction_assets.lib.heuristics.email import extract_email
from extraction_assets.lib.heuristics.gates import (
    Gate,
    contract_gate,
    email_gate,
    generic_gate,
    interview_gate,
    pulse_gate,
    receipt_gate,
)
from extraction_assets.lib.heuristics.generic import extract_generic
from extraction_assets.lib.heuristics.interview import extract_interview
from extraction_assets.lib.heuristics.pulse import extract_pulse
from extraction_assets.lib.heuristics.receipt import extract_receipt
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion

__all__ = ["HEURISTIC_PACKS", "HeuristicPack", "get_pack", "pack_version"]


@dataclass(frozen=True)
class HeuristicPack:
    version: str
    extract: Callable[[ExtractionInput, SchemaVersion], list[CandidateItem]]
    gate: Gate
    folders: tuple[str, ...] | None  # folder kinds its documents sit in; None: no folder is another schema's


HEURISTIC_PACKS: dict[str, HeuristicPack] = {
    "pulse": HeuristicPack(
        version="heuristic-pulse-v2",
        extract=lambda doc, _schema: extract_pulse(doc),
        gate=pulse_gate,
        folders=("pulses", "chat", "meetings"),
    ),
    "interview": HeuristicPack(
        version="heuristic-interview-v1", extract=extract_interview, gate=interview_gate, folders=("interviews",)
    ),
    "receipt": HeuristicPack(
        version="heuristic-receipt-v2", extract=extract_receipt, gate=receipt_gate, folders=("receipts",)
    ),
    "contract": HeuristicPack(
        version="heuristic-contract-v3", extract=extract_contract, gate=contract_gate, folders=("contracts",)
    ),
    "email": HeuristicPack(version="heuristic-email-v1", extract=extract_email, gate=email_gate, folders=None),
    "generic": HeuristicPack(version="heuristic-generic-v1", extract=extract_generic, gate=generic_gate, folders=()),
}


def get_pack(name: str) -> HeuristicPack:
    """The pack called ``name``; a KeyError names the known packs so a typo is easy to spot."""
    try:
        return HEURISTIC_PACKS[name]
    except KeyError:
        known = ", ".join(sorted(HEURISTIC_PACKS)) or "none"
        raise KeyError(f"no heuristic pack named {name!r}; known packs: {known}") from None


def pack_version(name: str) -> str:
    return get_pack(name).version
