"""Shared fixtures: a private copy of the sample inbox, a warehouse under tmp_path, a fake model server."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import hypothesis
import pytest

from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX, Settings

if TYPE_CHECKING:
    from evals.fake_llm import FakeLLMServer


INTEGRATION = Path(__file__).parent / "integration"

# property tests prove properties; how long one example takes is the benchmarks' business (a loaded machine made the
# 200 ms default deadline fail examples that pass)
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")


def pytest_configure(config: pytest.Config) -> None:
    """The user's config folder (the audit heads' key and their copies) is one of the session's own, never the real
    one: every test's warehouse would leave a signed head there. Subprocesses inherit it."""
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="extraction-assets-config-")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(os.environ["XDG_CONFIG_HOME"], ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/integration is marked `integration` (`make test-fast` leaves them out). Files marked
    `long(seconds)` come first, the longest first: parallel workers take files in this order (`make test` keeps it,
    `--no-loadscope-reorder`), so the longest start at once and no worker is left alone with one at the end."""
    for item in items:
        if INTEGRATION in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.integration)
    items.sort(key=_longest_first)  # stable: otherwise the order collected


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting made (Dagster, the package, every test module: most of a worker's objects) lives as long as
    the session: frozen, it is no longer scanned by the full collections during the tests nor by pytest's own at the
    session's end."""
    gc.freeze()


def _longest_first(item: pytest.Item) -> float:
    long = item.get_closest_marker("long")
    return -float(long.args[0]) if long and long.args else 0.0


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """A Ctrl-C ends the session with pytest's one line, also in a test that runs the pipeline in-process: there
    Dagster's own handler takes the interrupt as a failed step (the handler before it is not called), the run goes
    on, and the test fails with pages of tracebacks and the next one starts. The kernel still writes every signal to
    the wakeup file, whatever handler Python runs; a SIGINT found there after the test ends the session (unless
    the test sends one itself: marker `sends_sigint`)."""
    if item.get_closest_marker("sends_sigint"):
        return (yield)
    read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        previous: int | None = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except ValueError:  # not the main thread: no signal is written here
        previous = None
    try:
        return (yield)
    finally:
        if previous is not None:
            signal.set_wakeup_fd(previous)
        try:
            received = os.read(read_end, 512)
        except BlockingIOError:  # nothing was written
            received = b""
        os.close(read_end)
        os.close(write_end)
        if signal.SIGINT in received:
            raise KeyboardInterrupt from None


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    target = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX, target, ignore=shutil.ignore_patterns("README.md"))
    return target


@pytest.fixture
def prompts(tmp_path: Path) -> Path:
    target = tmp_path / "prompts"
    shutil.copytree(DEFAULT_PROMPTS, target)
    return target


@pytest.fixture
def settings(tmp_path: Path, inbox: Path, prompts: Path) -> Settings:
    return Settings(warehouse=tmp_path / "warehouse.duckdb", inbox=inbox, prompts_dir=prompts)


def with_front_matter(text: str, lines: str) -> str:
    """A prompt file's text with `lines` added to its front matter, right after `document_kinds`."""
    head, sep, rest = text.partition("\ndocument_kinds:")
    line, newline, tail = rest.partition("\n")
    return f"{head}{sep}{line}{newline}{lines}{tail}"


def read_every_document(prompt_file: Path) -> None:
    """Make a schema read every document of its kinds (`applies_to.paths: ["*"]`), whatever its folder or gate:
    for tests whose point is that every document goes through the model path."""
    text = prompt_file.read_text(encoding="utf-8")
    prompt_file.write_text(with_front_matter(text, 'applies_to:\n  paths: ["*"]\n'), encoding="utf-8")


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    """A fake OpenAI-compatible server on 127.0.0.1 for one test (a module may define its own `fake`)."""
    from evals.fake_llm import FakeLLMServer

    with FakeLLMServer() as server:
        yield server


def covered(request: object) -> tuple[str, str]:
    """The first and last schema-version partition a run request covers: its partition, or its range's ends."""
    key = getattr(request, "partition_key", None)
    if key is not None:
        return str(key), str(key)
    tags = getattr(request, "tags", {})
    return tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]
