"""Confidence from agreement, measured: the eval's calibration error on SROIE and CUAD through the fake endpoint,
with the fields both extractors answered settled by agreement, and without (each field as the mode merged it).

The fake answers with the schema's heuristic pack, so where it is asked the two always agree: the figure shows
what moving agreed values to the top of the model band does to calibration, not how often a real model agrees.
An agreed value there is the pack's value asked twice, right as often as the pack is (CUAD: about 0.82 in the bin
of 0.90), so a calibration gap it shows is the pack's: the rule's premise, two readers that err independently,
does not hold for the fake, whatever the rule. `top_of_model_band` gives that bin's count and accuracy.
The same figures through a local model, one that does disagree with the pack, are `evals/eval_local_model.py`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from unittest import mock

from evals.bench_inbox import evalsets_dir
from evals.fake_llm import FakeLLMServer
from extraction_assets.lib.evaluation import EvalResult, load_registry, run_eval
from extraction_assets.lib.evaluation.metrics import Calibration
from extraction_assets.lib.extraction import OrchestratedExtractor
from extraction_assets.lib.llm import LLMClient, LLMSettings
from extraction_assets.lib.models import CandidateItem
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

DATASETS = ("sroie", "cuad")


def _without_agreement(
    schema: SchemaVersion,
    chosen: Sequence[CandidateItem],
    heuristic: Sequence[CandidateItem],
    model: Sequence[CandidateItem],
    text: str,
) -> list[CandidateItem]:
    """`with_agreement` switched off: every field as the mode merged it."""
    return list(chosen)


def dev_file(dataset: str) -> Path:
    return evalsets_dir() / dataset / "dev.jsonl"


def _top_bin(calibration: Calibration, top: float) -> str:
    """The reliability bin that holds the top of the model band, where agreement puts a value: is it that right?"""
    found = next((b for b in calibration.bins if b.low <= top < b.high or top == b.high == 1.0), None)
    if found is None or not found.count:
        return "no values"
    return f"{found.count} values, mean confidence {found.mean_confidence}, accuracy {found.accuracy}"


def scored_both_ways(
    dataset: str,
    extractor: OrchestratedExtractor,
    limit: int | None = None,
    orchestration: str | None = None,
    path: Path | None = None,
    replay: OrchestratedExtractor | None = None,
) -> tuple[SchemaVersion, EvalResult, EvalResult]:
    """The dataset scored with agreement and without it (its first `limit` records, of `path` instead of its
    dev.jsonl, under `orchestration` instead of the schema's own mode when given); the second run is answered
    from the extractor's cache, or by `replay` (one that never asks again what failed, so both ways score the
    same answers)."""
    entry = load_registry().entry(dataset)
    schema = load_schema(DEFAULT_PROMPTS, entry.schema_version)
    if orchestration is not None:
        schema = schema.model_copy(update={"orchestration": orchestration})
    path = path or dev_file(dataset)
    with_it = run_eval(entry, path, schema, extractor, limit=limit, samples=0)
    with mock.patch("extraction_assets.lib.extraction.orchestration.with_agreement", _without_agreement):
        without = run_eval(entry, path, schema, replay or extractor, limit=limit, samples=0)
    return schema, with_it, without


def agreement_figures(
    label: str, schema: SchemaVersion, with_it: EvalResult, without: EvalResult
) -> dict[str, float | int | str]:
    figures: dict[str, float | int | str] = {}
    for way, result in (("with", with_it), ("without", without)):
        ece = result.calibration.ece
        figures[f"{label}_ece_{way}_agreement"] = "n/a" if ece is None else ece
        figures[f"{label}_top_of_model_band_{way}_agreement"] = _top_bin(result.calibration, schema.model_band.high)
    figures[f"{label}_calibration_points"] = with_it.calibration.points
    figures[f"{label}_model_calls"] = with_it.model_calls
    figures[f"{label}_documents"] = with_it.documents
    return figures


def bench_agreement() -> dict[str, float | int | str]:
    figures: dict[str, float | int | str] = {}
    with FakeLLMServer() as fake:
        client = LLMClient(LLMSettings(base_url=fake.base_url, model="fake-model", http_retries=0))
        for dataset in DATASETS:
            figures |= agreement_figures(dataset, *scored_both_ways(dataset, OrchestratedExtractor(client)))
    figures["measured_on"] = (
        "the dev.jsonl of sroie (receipt@v1) and cuad (contract@v1), each schema's own mode (heuristic_first), "
        "through the in-process fake endpoint (it answers with the heuristic pack); expected calibration error of "
        "the eval, with and without agreement (through a local model: `python -m evals.eval_local_model`)"
    )
    return figures
