"""The embedded llama.cpp server's settings: threads from the idle cores, greedy decoding (no model is loaded)."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from extraction_assets.lib.llm import local_model


@pytest.mark.parametrize(
    ("cores", "load", "threads"),
    [(2, 0.0, 2), (2, 0.6, 1), (2, 4.0, 1), (8, 2.2, 6), (8, 0.0, 8), (8, 12.0, 1)],
)
def test_threads_are_the_cores_other_work_leaves_idle_and_one_at_least(
    monkeypatch: pytest.MonkeyPatch, cores: int, load: float, threads: int
) -> None:
    monkeypatch.setattr(local_model.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(local_model.os, "getloadavg", lambda: (load, load, load))
    assert local_model.idle_cores() == threads


class _FakeServer:
    started: ClassVar[list[Any]] = []

    def __init__(self, params: Any) -> None:
        self.started.append(params)
        self.listening_address = "http://127.0.0.1:1"


def _fake_xllamacpp() -> types.ModuleType:
    module = types.ModuleType("xllamacpp")

    def params() -> Any:
        return types.SimpleNamespace(
            model=types.SimpleNamespace(path=None),
            cpuparams=types.SimpleNamespace(n_threads=-1),
            cpuparams_batch=types.SimpleNamespace(n_threads=-1),
            sampling=types.SimpleNamespace(temp=0.8, seed=-1),
        )

    module.CommonParams = params  # type: ignore[attr-defined]
    module.Server = _FakeServer  # type: ignore[attr-defined]
    return module


def test_the_server_decodes_greedily_with_the_threads_asked_for_or_the_idle_cores(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "xllamacpp", _fake_xllamacpp())
    monkeypatch.setattr(local_model, "_servers", {})
    monkeypatch.setattr(local_model, "idle_cores", lambda: 1)
    _FakeServer.started = []
    assert local_model.local_base_url(gguf) == "http://127.0.0.1:1/v1"
    assert local_model.local_base_url(gguf, threads=3) == "http://127.0.0.1:1/v1"
    assert local_model.local_base_url(gguf, threads=1) == "http://127.0.0.1:1/v1"  # the first server, again
    monkeypatch.setattr(local_model, "idle_cores", lambda: 2)  # the load changed: the loaded model is kept
    assert local_model.local_base_url(gguf) == "http://127.0.0.1:1/v1"
    first, second = _FakeServer.started
    assert (first.cpuparams.n_threads, first.cpuparams_batch.n_threads) == (1, 1)
    assert (second.cpuparams.n_threads, second.cpuparams_batch.n_threads) == (3, 3)
    assert all(p.sampling.temp == 0.0 and p.sampling.seed == local_model.SEED for p in (first, second))
