"""Bench group `eval`: every registry dataset present on this machine, scored offline with the heuristic packs.

Figures are each dataset's pooled F1 (recall where precision is not defined), per-field F1 and
documents per second; datasets whose file or schema version is missing are named in `measured_on`.
"""

from __future__ import annotations

from extraction_assets.lib.evaluation import MICRO, available_entries, load_registry, run_eval
from extraction_assets.lib.extraction import HeuristicExtractor
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.schemas import SchemaError
from extraction_assets.lib.settings import DEFAULT_PROMPTS

Figures = dict[str, float | int | str]


def bench_eval(limit: int | None = None) -> Figures:
    entries, skipped = available_entries(list(load_registry().datasets.values()))
    figures: Figures = {}
    measured: list[str] = []
    for entry in entries:
        try:
            schema = None if entry.mode == "entity_spans" else load_schema(DEFAULT_PROMPTS, entry.schema_version)
        except (SchemaError, OSError):
            skipped.append(f"{entry.name}: no prompt file for {entry.schema_version}")
            continue
        result = run_eval(entry, entry.resolved_path(), schema, HeuristicExtractor(), limit=limit, samples=0)
        for score in result.fields:
            value = score.f1 if score.f1 is not None else score.recall
            name = "overall" if score.field == MICRO else score.field
            metric = "f1" if score.f1 is not None else "recall"
            if value is not None:
                figures[f"{entry.name}_{name}_{metric}"] = value
        figures[f"{entry.name}_docs_per_s"] = round(result.documents / max(result.wall_seconds, 1e-6), 1)
        measured.append(f"{entry.name} ({result.documents} documents, {result.schema_version}, {result.extractor})")
    figures["measured_on"] = "; ".join(measured + [f"skipped {s}" for s in skipped]) or "no dataset available"
    return figures
