import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extraction_assets.cli import main
from extraction_assets.defs.resources import ExtractorResource, PipelineResource, resources_from_settings
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse.held import holding


def test_run_then_summary_as_json(settings: Settings, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    args = [
        "--inbox",
        str(settings.inbox),
        "--warehouse",
        str(settings.warehouse),
        "--prompts",
        str(settings.prompts_dir),
    ]
    assert main(["run", *args, "--json"]) == 0
    assert holding(settings.warehouse) is None, "the file is given back once the summary is read"
    out = capsys.readouterr().out
    summary = json.loads(out[out.index("{") : out.rindex("}") + 1])
    assert summary["documents"] >= 20
    assert summary["items"] > 0 and summary["evidence"] > 0
    assert summary["failed_documents"] == 0
    assert main(["summary", "--warehouse", str(settings.warehouse), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["items"] == summary["items"]


def test_unknown_schema_is_a_clear_error(settings: Settings, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    code = main(["run", "--inbox", str(settings.inbox), "--warehouse", str(settings.warehouse), "--schema", "nope@v1"])
    assert code == 2
    assert "unknown schema versions" in capsys.readouterr().out


def test_settings_from_environment() -> None:
    env = {"EXTRACTION_WAREHOUSE": "/tmp/w.duckdb", "EXTRACTION_LLM_BASE_URL": " ", "EXTRACTION_LLM_MODEL": "m"}
    settings = Settings.from_env(env)
    assert str(settings.warehouse) == "/tmp/w.duckdb"
    assert settings.model.llm_base_url is None
    assert not settings.model.has_model
    assert Settings.from_env({"EXTRACTION_LLM_BASE_URL": "http://x/v1", "EXTRACTION_LLM_MODEL": "m"}).model.has_model
    assert settings.worker_niceness is None and settings.model.llm_threads is None
    tuned = Settings.from_env({"EXTRACTION_WORKER_NICENESS": "0", "EXTRACTION_LLM_THREADS": "3"})
    assert (tuned.worker_niceness, tuned.model.llm_threads) == (0, 3)
    pipeline = resources_from_settings(tuned)["pipeline"]
    assert isinstance(pipeline, PipelineResource) and pipeline.worker_niceness == 0
    extractor = resources_from_settings(tuned)["extractor"]
    assert isinstance(extractor, ExtractorResource) and extractor.llm_threads == 3, "the model path is passed whole"


def test_the_run_output_says_what_the_model_cost_and_what_is_left_pending() -> None:
    from extraction_assets.commands.pipeline import _model_line

    assert _model_line({"model_calls": 0, "cache_hits": 0, "documents_pending": 0}) is None  # offline: no line
    line = _model_line(
        {
            "model_calls": 3,
            "cache_hits": 1,
            "prompt_tokens": 900,
            "completion_tokens": 120,
            "estimated_cost": 0.00123,
            "documents_pending": 7,
        }
    )
    assert line == (
        "model: 3 calls, 1 cached (0 remembered failures), 900 prompt + 120 completion tokens, estimated cost 0.0012; "
        "7 documents pending, the next run continues"
    )
    assert "estimated cost" not in (_model_line({"model_calls": 1, "estimated_cost": "no prices configured"}) or "")


def test_a_command_loads_with_the_collector_paused_then_frozen() -> None:
    """No collection runs while a command's code loads, and none scans it afterwards; garbage that was waiting is
    collected first, not frozen for good. In a fresh interpreter: a freeze lasts as long as the process."""
    probe = """
import gc, importlib, weakref
from extraction_assets.commands.common import imported_for_good

class Cycle:
    def __init__(self):
        self.me = self

waiting = Cycle()
gone = weakref.ref(waiting)
del waiting
starts = []
gc.callbacks.append(lambda phase, info: starts.append(info["generation"]) if phase == "start" else None)
with imported_for_good():
    before = len(starts)
    importlib.import_module("extraction_assets.runner")
    during = len(starts) - before
print(during, gc.get_freeze_count() > 100_000, gc.isenabled(), gone() is None)
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "True", "True", "True"]


def _program(argv: list[str], marker: Path, thread: bool = False) -> subprocess.CompletedProcess[str]:
    """`extraction-assets <argv>` as its console script runs it, with an exit handler that leaves `marker`; with
    `thread`, a thread that prints a line after the command has returned."""
    probe = f"""
import atexit, pathlib, sys, threading, time
import extraction_assets.cli as cli
atexit.register(pathlib.Path({str(marker)!r}).touch)
returned, command = threading.Event(), cli.main
def main(argv=None):
    try:
        return command(argv)
    finally:
        returned.set()
cli.main = main
if {thread}:
    threading.Thread(target=lambda: (returned.wait(), time.sleep(0.3), print("thread done", flush=True))).start()
sys.argv = ["extraction-assets", *{argv!r}]
cli.run()
"""
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a pipe gets what is flushed
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False, env=buffered
    )


def test_the_program_exits_with_its_code_its_output_whole_and_its_exit_handlers_run(tmp_path: Path) -> None:
    """The program skips the interpreter's teardown, not what an exit must do: the pipe gets every line (block
    buffered, so only a flush sends them), exit handlers run (they remove temporary folders), the code is main's."""
    warehouse = str(tmp_path / "w.duckdb")
    done = _program(["summary", "--json", "--warehouse", warehouse], tmp_path / "ran")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["documents"] == 0
    assert (tmp_path / "ran").exists()
    failed = _program(["run", "--warehouse", warehouse, "--schema", "nope@v1"], tmp_path / "ran-too")
    assert failed.returncode == 2 and "unknown schema versions" in failed.stdout
    assert (tmp_path / "ran-too").exists()


def test_the_program_waits_for_a_thread_still_working(tmp_path: Path) -> None:
    done = _program(["summary", "--json", "--warehouse", str(tmp_path / "w.duckdb")], tmp_path / "ran", thread=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("thread done")
    assert (tmp_path / "ran").exists()
