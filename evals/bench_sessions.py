"""Live sessions bench: the cost of a pass after a respondent turn (read, scrub, light extraction, any checkpoint),
and the delay from a session's completion to its final records (seed 004's 60 s bound), in the session flow alone
and through the sensor and a Dagster run.

Sessions are the bundled lanting-research interview transcripts replayed turn by turn as JSONL files, extracted
offline (heuristic pack). The Dagster figure is one sensor tick plus an in-process `session_job` run per session;
a daemon adds at most the sensor's interval and the launch of a run's process on top.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import dagster as dg

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.resources import resources_from_settings
from extraction_assets.defs.sessions import SESSION_POLL_SECONDS, session_sensor
from extraction_assets.lib.extraction import build_extractor
from extraction_assets.lib.sessions import HeuristicLight, SessionEnv, sync_sessions
from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX, ModelSettings, Settings
from extraction_assets.lib.warehouse import open_warehouse

Figures = dict[str, float | int | str]
TENANT = "lanting-research"
DAGSTER_SESSIONS = 5


def _transcripts() -> list[list[dict[str, str]]]:
    files = sorted((SAMPLE_INBOX / TENANT / "interviews").glob("*.json"))
    return [json.loads(f.read_text(encoding="utf-8"))["turns"] for f in files]


def _append(path: Path, *lines: dict[str, str]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def _flow(root: Path) -> tuple[list[float], list[float], int]:
    """Each transcript turn by turn through the session flow: (seconds per pass after a respondent turn, delays,
    turns)."""
    sessions, warehouse = root / "sessions", root / "flow.duckdb"
    (sessions / TENANT).mkdir(parents=True)
    env = SessionEnv(
        sessions_dir=sessions,
        prompts_dir=DEFAULT_PROMPTS,
        extractor=build_extractor(ModelSettings()),
        light=HeuristicLight(),
    )
    connect = lambda: open_warehouse(warehouse)  # noqa: E731
    passes, delays, turns = [], [], 0
    for n, transcript in enumerate(_transcripts()):
        path = sessions / TENANT / f"bench-{n}.jsonl"
        for t in transcript:
            _append(path, t)
            turns += 1
            started = time.perf_counter()
            [report] = sync_sessions(connect, env)
            if report.light == "ok":
                passes.append(time.perf_counter() - started)
        _append(path, {"status": "completed"})
        [report] = sync_sessions(connect, env)
        assert report.final_delay_s is not None, report
        delays.append(report.final_delay_s)
    return passes, delays, turns


def _dagster(root: Path) -> list[float]:
    """Completion -> records through one sensor tick and one in-process run, per session."""
    settings = Settings(warehouse=root / "dagster.duckdb", sessions_dir=root / "dagster-sessions")
    job = build_definitions(settings).resolve_job_def("session_job")
    pipeline = resources_from_settings(settings)["pipeline"]
    delays = []
    with dg.instance_for_test() as instance:
        cursor = None
        for n, transcript in enumerate(_transcripts()[:DAGSTER_SESSIONS]):
            path = settings.sessions_dir / TENANT / f"bench-{n}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            _append(path, *transcript, {"status": "completed"})
            completed = time.time()
            tick = session_sensor(
                dg.build_sensor_context(instance=instance, cursor=cursor, resources={"pipeline": pipeline})
            )
            assert isinstance(tick, dg.SensorResult) and tick.run_requests
            cursor = tick.cursor
            assert job.execute_in_process(instance=instance, raise_on_error=True).success
            delays.append(time.time() - completed)
    return delays


def bench_sessions() -> Figures:
    with tempfile.TemporaryDirectory() as tmp:
        passes, flow_delays, turns = _flow(Path(tmp))
        dagster_delays = _dagster(Path(tmp))
    return {
        "respondent_turn_pass_ms_median": _median_ms(passes),
        "respondent_turn_pass_ms_max": round(max(passes) * 1000, 2),
        "completion_to_records_s_median_flow": round(statistics.median(flow_delays), 3),
        "completion_to_records_s_median_dagster": round(statistics.median(dagster_delays), 2),
        "completion_to_records_s_max_dagster": round(max(dagster_delays), 2),
        "worst_case_bound_s": round(max(dagster_delays) + SESSION_POLL_SECONDS, 2),
        "measured_on": (
            f"{len(flow_delays)} sample interview transcripts replayed turn by turn ({turns} turns, {len(passes)} "
            f"light passes), heuristic; Dagster: {len(dagster_delays)} sessions, one sensor tick + one in-process "
            f"session_job run each; worst case adds the {SESSION_POLL_SECONDS} s sensor interval"
        ),
    }
