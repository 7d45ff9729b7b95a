"""`extraction-assets fake-llm`: serve the fake OpenAI-compatible endpoint to try the model path offline."""

from __future__ import annotations

import argparse
import time

from extraction_assets.commands.common import console


def cmd_fake_llm(args: argparse.Namespace) -> int:
    from extraction_assets.fake_llm import FakeLLMServer, Faults  # the heuristic packs load only to serve

    faults = Faults(
        latency_ms=args.latency_ms,
        rate_limit_every=args.rate_limit_every,
        server_error_every=args.server_error_every,
        hallucinate=args.hallucinate,
        invalid_json=args.invalid_json,
    )
    with FakeLLMServer(faults, port=args.port) as fake:
        console.print(f"fake model endpoint at [bold]{fake.base_url}[/] (model name: anything), Ctrl+C to stop")
        console.print(
            f"  EXTRACTION_LLM_BASE_URL={fake.base_url} EXTRACTION_LLM_MODEL=fake-model .venv/bin/extraction-assets run"
        )
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            console.print(f"served {len(fake.requests)} requests")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("fake-llm", help="serve a fake OpenAI-compatible model on 127.0.0.1 (offline)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every answer")
    parser.add_argument("--rate-limit-every", type=int, default=0, help="answer 429 to requests 1, N+1, ...")
    parser.add_argument("--server-error-every", type=int, default=0, help="answer 500 to requests 1, N+1, ...")
    parser.add_argument("--hallucinate", action="store_true", help="invent every evidence span")
    parser.add_argument("--invalid-json", action="store_true", help="answer with text that is not JSON")
    parser.set_defaults(func=cmd_fake_llm)
