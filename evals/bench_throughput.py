"""Throughput bench: the whole offline `extraction-assets run` on a mixed inbox of public documents.

The inbox (`evals.bench_inbox`: Enron mail, SROIE receipts, CUAD contracts, QMSum meetings, the set
repeated over three tenants) is run end to end in a child process, so the peak RSS is that process's
own. Beside it, a bare scan of the same files with six plain regexes (e-mail, phone, card, IBAN, date,
amount) gives the floor the pipeline is compared with. The same inbox is run once more unchanged (what a run
costs when there is nothing new). Then the same inbox plus 1% new documents is
run against the warehouse of the first run (the incremental cost), the same 1% once more through a warm
`extraction-assets watch` on a copy of that warehouse (the cost of a pass, without process start and imports), and
an inbox a third the size is run alone (peak RSS must not grow with the inbox). A part that fails is reported; the
others still run.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evals.bench_inbox import build_inbox, evalsets_dir, source_files

Figures = dict[str, float | int | str]
TENANTS = 3
NEW_FRACTION = 0.01
SCAN_ROUNDS = 3
REPEATS = int(os.environ.get("BENCH_REPEATS") or 3)  # full runs, watch passes and +1% runs: medians of these
SCAN_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",  # e-mail
        r"\+?\d[\d ().-]{7,}\d",  # phone
        r"\b(?:\d[ -]?){12,18}\d\b",  # card
        r"\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b",  # IBAN
        r"\b\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4}\b",  # date
        r"\b\d{1,3}(?:[,.]\d{3})*(?:[.,]\d{2})?\b",  # amount
    )
)
# The lines of `extraction-assets run`: one per part ("ok extract pulse@v1: 4 documents extracted, ..."), then one
# per Dagster run ("run 88da76ab in 3.1 s: raw_documents 0.7 s, ..., extracted_items_and_evidence 2.2 s, ...").
_PART_LINE = re.compile(r"^(?P<status>ok|FAILED) (?P<name>ingest|extract \S+?)(?::|$| \()")
_RUN_LINE = re.compile(r"^run (?P<run>\w+) in (?P<seconds>[\d.]+) s: (?P<stages>.*)")
_RUN_DONE = re.compile(r"^pass done in (?P<seconds>[\d.]+) s(?:; the process was ready (?P<ready>[\d.]+) s)?")
_STAGE = re.compile(r"(?P<key>[\w.@-]+) (?P<seconds>[\d.]+) s")


@dataclass
class RunFigures:
    """One `extraction-assets run` in a child process: wall time, its own peak RSS, each step's seconds."""

    seconds: float
    cpu_seconds: float  # user + system of the run and the worker processes it waited for (scrubbing uses every core)
    peak_rss_mb: float
    exit_code: int
    pass_seconds: float | None = None  # the pass itself, as the command reports it
    ready_seconds: float | None = None  # from the process's start to the pass's: interpreter, imports, settings
    runs: dict[str, float] = field(default_factory=dict)  # each Dagster run of the pass: its wall seconds
    stages: dict[str, float] = field(default_factory=dict)  # each Dagster step of those runs: its wall seconds
    failed: list[str] = field(default_factory=list)


def scan_seconds(paths: list[Path]) -> tuple[float, int]:
    """Read every file and run the six regexes over it: (seconds, matches)."""
    started = time.perf_counter()
    matches = 0
    for path in paths:
        text = path.read_bytes().decode("utf-8", errors="replace")
        for pattern in SCAN_PATTERNS:
            matches += sum(1 for _ in pattern.finditer(text))
    return time.perf_counter() - started, matches


def _command(verb: str, inbox: Path, warehouse: Path) -> tuple[list[str], dict[str, str]]:
    """`extraction-assets <verb>` on the inbox and warehouse, offline (no model endpoint, no DAGSTER_HOME)."""
    command = [str(Path(sys.executable).with_name("extraction-assets")), verb, "--inbox", str(inbox)]
    command += ["--warehouse", str(warehouse)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_LLM_", "DAGSTER_HOME"))}
    env["COLUMNS"] = "1000"  # one step per line
    return command, env


def run_offline(inbox: Path, warehouse: Path) -> RunFigures:
    """`extraction-assets run` (every schema version, no model endpoint) as a child process, waited for with wait4."""
    command, env = _command("run", inbox, warehouse)
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().splitlines()
    cpu = round(usage.ru_utime + usage.ru_stime, 2)
    figures = RunFigures(round(seconds, 2), cpu, round(usage.ru_maxrss / 1024, 1), child.returncode)
    for line in lines:
        if (m := _PART_LINE.match(line.strip())) and m["status"] == "FAILED":
            figures.failed.append(m["name"])
        elif m := _RUN_DONE.match(line.strip()):
            figures.pass_seconds = float(m["seconds"])
            figures.ready_seconds = float(m["ready"]) if m["ready"] else None
        elif m := _RUN_LINE.match(line.strip()):
            figures.runs[m["run"]] = float(m["seconds"])
            figures.stages.update({s["key"]: float(s["seconds"]) for s in _STAGE.finditer(m["stages"])})
    return figures


_PASS_DONE = re.compile(r"^pass (?P<number>\d+) done(?: with failures)? in (?P<seconds>[\d.]+) s")
WATCH_WAIT_S = 600.0


def watch_pass(inbox: Path, warehouse: Path, add: Callable[[], None]) -> Figures:
    """A warm `extraction-assets watch`: its first pass (nothing new), then `add()` and the pass that follows: that
    pass's own seconds, and from the end of `add()` to the pass's last line (detection included)."""
    command, env = _command("watch", inbox, warehouse)
    child = subprocess.Popen([*command, "--passes", "2"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        first = _pass_done(child, WATCH_WAIT_S)
        add()
        added = time.perf_counter()
        second = _pass_done(child, WATCH_WAIT_S)
        latency = time.perf_counter() - added
        child.wait(timeout=60)
    finally:
        child.kill()
        child.wait()
    return {"watch_first_pass_s": first, "watch_pass_s": second, "watch_latency_s": round(latency, 2)}


def _pass_done(child: subprocess.Popen[bytes], seconds: float) -> float:
    """The seconds of the next pass the watch reports, waiting at most `seconds` for it."""
    assert child.stdout is not None
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            line = child.stdout.readline()
            if not line:
                raise RuntimeError(f"the watch ended (exit {child.poll()}) before its pass was done")
            if m := _PASS_DONE.match(line.decode(errors="replace").strip()):
                return float(m["seconds"])
    raise TimeoutError(f"no pass done within {seconds:.0f} s")


# The schemas that fit each folder of the bench inbox: an item from any other schema is one that does not fit.
FITTING_SCHEMAS = {
    "mail": {"email"},
    "receipts": {"receipt"},
    "contracts": {"contract"},
    "meetings": {"pulse", "interview"},
}


def routing_figures(warehouse: Path) -> Figures:
    """Items, items to review and the review queue per schema, and the share of items from a schema that does
    not fit its document's folder (target: at most 2%)."""
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            """SELECT split_part(r.source_uri, '/', 2), split_part(i.schema_version, '@', 1),
                      count(*), count(*) FILTER (WHERE i.status = 'needs_review')
               FROM extracted_items i JOIN raw_documents r USING (doc_id) GROUP BY 1, 2"""
        ).fetchall()
        queue = con.execute("SELECT count(*) FROM review_queue").fetchone()[0]  # type: ignore[index]
    figures: Figures = {"review_queue": int(queue)}
    for folder, schema, items, to_review in sorted(rows):
        figures[f"items_{schema}_in_{folder}"] = int(items)
        figures[f"to_review_{schema}_in_{folder}"] = int(to_review)
    total = sum(r[2] for r in rows)
    unfit = sum(r[2] for r in rows if r[1] not in FITTING_SCHEMAS.get(r[0], set()))
    figures["items"] = int(total)
    figures["items_from_unfit_schema_share"] = round(unfit / total, 4) if total else 0.0
    return figures


def _inbox_files(inbox: Path) -> list[Path]:
    return sorted(p for p in inbox.rglob("*") if p.is_file())


def _part(results: Figures, name: str, work: Callable[[], Figures]) -> None:
    """Run one part of the group; a failure becomes a figure, never an exception."""
    try:
        results.update(work())
    except Exception as exc:  # a failed part is reported, the others still run
        results[f"{name}_error"] = f"{type(exc).__name__}: {exc}"[:300]


def _run_figures(prefix: str, run: RunFigures) -> Figures:
    figures: Figures = {
        f"{prefix}_s": run.seconds,
        f"{prefix}_cpu_s": run.cpu_seconds,
        f"{prefix}_peak_rss_mb": run.peak_rss_mb,
        f"{prefix}_exit_code": run.exit_code,
        f"{prefix}_dagster_runs": len(run.runs),
    }
    if run.failed:
        figures[f"{prefix}_failed_steps"] = ", ".join(run.failed)
    return figures


def _median_run(runs: list[RunFigures]) -> RunFigures:
    """The run of median wall time (of an odd number; the lower middle one of an even number)."""
    return sorted(runs, key=lambda r: r.seconds)[(len(runs) - 1) // 2]


def _start_up(prefix: str, runs: list[RunFigures]) -> Figures:
    """What a fresh process costs before its pass begins, and the rest of its wall time (the pass, the summary it
    prints, its exit), medians over `runs`."""
    ready = [r.ready_seconds for r in runs if r.ready_seconds is not None]
    if not ready:
        return {}
    passes = [r.pass_seconds for r in runs if r.pass_seconds is not None]
    beyond = [r.seconds - r.ready_seconds for r in runs if r.ready_seconds is not None]
    return {
        f"{prefix}_start_up_s": round(statistics.median(ready), 3),
        f"{prefix}_beyond_start_up_s": round(statistics.median(beyond), 3),
        f"{prefix}_pass_s": round(statistics.median(passes), 3) if passes else "",
    }


def bench_throughput() -> Figures:
    data = evalsets_dir()
    if not data.exists():
        return {"skipped": 1, "measured_on": f"no eval data at {data}"}
    files = source_files(data)
    documents = TENANTS * len(files)
    new = max(1, round(documents * NEW_FRACTION))
    results: Figures = {}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        inbox, warehouse = root / "inbox", root / "full.duckdb"
        build_inbox(inbox, documents, files)
        paths = _inbox_files(inbox)
        megabytes = sum(p.stat().st_size for p in paths) / 1e6
        new_bytes = sum(len(files[i % len(files)].content) for i in range(documents, documents + new))
        results.update(
            {
                "documents": documents,
                "inbox_mb": round(megabytes, 1),
                "new_documents_mb": round(new_bytes / 1e6, 2),  # what "+1%" weighs: near 1% of the inbox's bytes
                "new_documents_share_of_inbox_bytes": round(new_bytes / 1e6 / megabytes, 4),
            }
        )
        scan: list[float] = []

        def scan_part() -> Figures:
            rounds = [scan_seconds(paths) for _ in range(SCAN_ROUNDS)]
            scan.append(statistics.median(s for s, _ in rounds))
            return {"scan_s": round(scan[0], 3), "scan_matches": rounds[0][1]}

        full: list[RunFigures] = []

        def full_part() -> Figures:
            """REPEATS full runs, each from an empty warehouse (the first one's is kept for the parts after): the
            medians, the scan's ratio from them."""
            for n in range(REPEATS):
                target = warehouse if n == 0 else root / f"full-{n}.duckdb"
                full.append(run_offline(inbox, target))
                if n:
                    for leftover in root.glob(f"{target.name}*"):
                        leftover.unlink()
            run = _median_run(full)
            figures = _run_figures("pipeline", run)
            figures["pipeline_s_each"] = ", ".join(f"{r.seconds:.2f}" for r in full)
            figures["pipeline_cpu_s_each"] = ", ".join(f"{r.cpu_seconds:.2f}" for r in full)
            figures["pipeline_docs_per_s"] = round(documents / run.seconds, 1)
            figures["pipeline_mb_per_s"] = round(megabytes / run.seconds, 2)
            figures["pipeline_cpu_ms_per_document"] = round(1000 * run.cpu_seconds / documents, 2)
            for step, seconds in full[0].stages.items():  # every Dagster step of the first pass's run
                figures[f"stage_{step}_s"] = seconds
            figures |= routing_figures(warehouse)
            if scan:
                figures["ratio_pipeline_over_scan"] = round(run.seconds / scan[0], 2)
                figures["ratio_pipeline_cpu_over_scan"] = round(run.cpu_seconds / scan[0], 2)  # the scan uses one core
                for step, seconds in full[0].stages.items():
                    figures[f"ratio_{step}_over_scan"] = round(seconds / scan[0], 2)
            return figures

        def unchanged_part() -> Figures:
            """The same inbox again: one run, in which every schema version finds nothing to do."""
            run = run_offline(inbox, warehouse)
            figures = _run_figures("unchanged", run)
            figures |= _start_up("unchanged", [run])
            if full:
                figures["unchanged_fraction_of_full"] = round(run.seconds / _median_run(full).seconds, 3)
            return figures

        staging = root / "staging"
        arrived: list[str] = []  # the new tenants' folders now in the inbox

        def arrive() -> None:
            """The new documents appear at once: built aside, their tenant's folder moved in (a pass that began
            with part of them would leave the rest to a pass the bench does not wait for)."""
            if not staging.exists():
                build_inbox(staging, documents + new, files)
            for folder in sorted(staging.iterdir()):
                if not (inbox / folder.name).exists():
                    folder.rename(inbox / folder.name)
                    arrived.append(folder.name)

        def leave() -> None:
            """The new documents taken out again, for the next repetition (only the folders `arrive` moved in: the
            staging folder also holds the tenants the inbox already has)."""
            while arrived:
                name = arrived.pop()
                (inbox / name).rename(staging / name)

        def watch_part() -> Figures:
            passes: list[Figures] = []
            for n in range(REPEATS):
                copy = root / f"watched-{n}.duckdb"
                shutil.copyfile(warehouse, copy)
                arrive()  # built once, then moved out: every repetition sees the same new folder arrive
                leave()
                passes.append(watch_pass(inbox, copy, arrive))
                leave()
            figures: Figures = {
                key: round(statistics.median(float(p[key]) for p in passes), 3)
                for key in ("watch_first_pass_s", "watch_pass_s", "watch_latency_s")
            }
            figures["watch_pass_s_each"] = ", ".join(f"{float(p['watch_pass_s']):.2f}" for p in passes)
            if full:
                median_full = _median_run(full).seconds
                figures["watch_pass_fraction_of_full"] = round(float(figures["watch_pass_s"]) / median_full, 3)
            return figures

        def incremental_part() -> Figures:
            runs = []
            for n in range(REPEATS):
                copy = root / f"incremental-{n}.duckdb"
                shutil.copyfile(warehouse, copy)
                arrive()
                runs.append(run_offline(inbox, copy))
                leave()
            run = _median_run(runs)
            figures = _run_figures("incremental", run)
            figures |= _start_up("incremental", runs)
            figures["incremental_s_each"] = ", ".join(f"{r.seconds:.2f}" for r in runs)
            figures["incremental_new_documents"] = new
            if full:
                median_full = _median_run(full)
                figures["incremental_fraction_of_full"] = round(run.seconds / median_full.seconds, 3)
                figures["incremental_cpu_fraction_of_full"] = round(run.cpu_seconds / median_full.cpu_seconds, 3)
            return figures

        def flat_memory_part() -> Figures:
            small = root / "small"
            build_inbox(small, len(files), files)
            run = run_offline(small, root / "small.duckdb")
            figures = _run_figures("small", run)
            figures["small_documents"] = len(files)
            if full:
                figures["peak_rss_growth_full_over_small"] = round(_median_run(full).peak_rss_mb / run.peak_rss_mb, 2)
            return figures

        _part(results, "scan", scan_part)
        _part(results, "pipeline", full_part)
        _part(results, "unchanged", unchanged_part)
        _part(results, "watch", watch_part)
        _part(results, "incremental", incremental_part)
        _part(results, "small", flat_memory_part)
    results["measured_on"] = (
        f"{documents} documents ({len(files)} eval records x {TENANTS} tenants, {results['inbox_mb']} MB) from "
        f"{data.name}/*/dev.jsonl; offline `extraction-assets run` (every schema version) in a child process, "
        f"median of {REPEATS} runs each from an empty warehouse; scan = six regexes over the same files, median of "
        f"{SCAN_ROUNDS}; incremental = +{new} documents (a new tenant) on copies of the first run's warehouse, median "
        f"of {REPEATS} (start-up: from the process's start to its pass's); unchanged = the first inbox run again; "
        f"watch = the same documents through a warm `extraction-assets watch` on copies of it, median of {REPEATS}; "
        f"small = {len(files)} documents, one tenant; {os.cpu_count()} cores, load average (1/5 min) at the start "
        f"{load[0]:.1f}/{load[1]:.1f}, at the end {os.getloadavg()[0]:.1f}/{os.getloadavg()[1]:.1f}"
    )
    return results
