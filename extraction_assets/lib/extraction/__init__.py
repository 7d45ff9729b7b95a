"""From scrubbed text to grounded items: extractors and the factory that picks one, orchestration with a model
(chunks of long documents and their merge, agreement with the pack), grounding, routing, review rules."""

from extraction_assets.lib.extraction.agreement import with_agreement
from extraction_assets.lib.extraction.applicability import (
    Decision,
    GateDecides,
    decide,
    decide_by_place,
    folder_kind,
    gate_decision,
    rules_fingerprint,
)
from extraction_assets.lib.extraction.chunk_merge import merge_chunk_candidates
from extraction_assets.lib.extraction.chunking import Chunk, chunk_input, document_chunks, split_chunks
from extraction_assets.lib.extraction.extractors import Extractor, ExtractorRun, HeuristicExtractor
from extraction_assets.lib.extraction.factory import build_extractor, llm_settings
from extraction_assets.lib.extraction.grounding import ground, normalize_with_map, turn_for_span
from extraction_assets.lib.extraction.orchestration import (
    ClassificationError,
    OrchestratedExtractor,
    merge,
    weighted_confidence,
)
from extraction_assets.lib.extraction.pipeline import (
    extract_document,
    extract_documents,
    extract_stream,
    extraction_input,
    ground_candidates,
    item_id_for,
)
from extraction_assets.lib.extraction.review_rules import RULES, review_reasons, type_violations
from extraction_assets.lib.extraction.routing import route_document
from extraction_assets.lib.extraction.stats import ExtractionTally

__all__ = [
    "RULES",
    "Chunk",
    "ClassificationError",
    "Decision",
    "ExtractionTally",
    "Extractor",
    "ExtractorRun",
    "GateDecides",
    "HeuristicExtractor",
    "OrchestratedExtractor",
    "build_extractor",
    "chunk_input",
    "decide",
    "decide_by_place",
    "document_chunks",
    "extract_document",
    "extract_documents",
    "extract_stream",
    "extraction_input",
    "folder_kind",
    "gate_decision",
    "ground",
    "ground_candidates",
    "item_id_for",
    "llm_settings",
    "merge",
    "merge_chunk_candidates",
    "normalize_with_map",
    "review_reasons",
    "route_document",
    "rules_fingerprint",
    "split_chunks",
    "turn_for_span",
    "type_violations",
    "weighted_confidence",
    "with_agreement",
]
