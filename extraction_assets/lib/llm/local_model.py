"""An embedded llama.cpp server for data that must not leave the machine (the optional `local` extra).

`EXTRACTION_LLM_GGUF=/path/model.gguf` starts llama.cpp's OpenAI-compatible server in this process on
127.0.0.1 (the `xllamacpp` package) once, and the pipeline uses it like any other endpoint.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from extraction_assets.lib.ports import free_port

_servers: dict[tuple[str, int, int], tuple[Any, str]] = {}
_lock = threading.Lock()

# Small local models loop or ramble without these; llama.cpp-specific sampling options.
LOCAL_EXTRA_BODY = {"repeat_penalty": 1.3, "repeat_last_n": 32, "cache_prompt": False}
LOCAL_MAX_TOKENS = 512  # CPU generation is slow; a bounded answer keeps a document to seconds
LOCAL_CONTEXT_TOKENS = 4096  # the server's context (prompt and answer); requests are sized to fit it
SEED = 42  # with greedy decoding, the same document gets the same answer on every run


def idle_cores() -> int:
    """The cores this process may use that other work is not using (one at least), by the 1-minute load average.

    llama.cpp's threads meet at a barrier after every layer and spin there; a thread that must share its core with
    other work holds up the rest, which spin meanwhile. Beside four busy processes on two cores, two threads took
    twice the time and three times the CPU of one.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, round(cores - os.getloadavg()[0])))


def local_base_url(gguf: str | Path, n_ctx: int = LOCAL_CONTEXT_TOKENS, threads: int | None = None) -> str:
    """Start (once per file, context and threads) the in-process server and return its `/v1` base URL; the server
    is loaded and listening when this returns. `threads` None: a server of this file and context already running,
    whatever its threads (the idle cores change with the load, the model stays loaded once), else the idle cores."""
    path = str(Path(gguf).resolve())
    if not Path(path).is_file():
        raise FileNotFoundError(f"GGUF model file not found: {gguf}")
    with _lock:
        if threads is None:
            running = [key[2] for key in _servers if key[:2] == (path, n_ctx)]
            threads = running[0] if running else idle_cores()
        key = (path, n_ctx, threads)
        if key not in _servers:
            try:
                import xllamacpp  # optional extra: pip install 'extraction-assets[local]'
            except ImportError as exc:
                raise RuntimeError("EXTRACTION_LLM_GGUF needs the 'local' extra (xllamacpp)") from exc
            params = xllamacpp.CommonParams()
            params.model.path = path
            params.n_ctx = n_ctx
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            params.sampling.temp = 0.0  # greedy: an extraction wants the likeliest answer, the same one every run
            params.sampling.seed = SEED
            params.hostnames = ["127.0.0.1"]
            params.port = free_port()
            params.verbosity = -1  # quiet: llama.cpp logs to the same stderr as the pipeline
            server = xllamacpp.Server(params)
            _servers[key] = (server, server.listening_address + "/v1")
        return _servers[key][1]
