"""One bad prompt file costs its own version only: an alias bomb in a few-shot example and a field named
`model_config`, in a real prompt folder beside the bundled files, through the real command line (a subprocess) and
through the schema_version_sensor and the runs it asks for. Each names the file and the line."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import dagster as dg

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.jobs import pass_requests
from extraction_assets.defs.partitions import RANGE_END, RANGE_START
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.defs.sensors import schema_version_sensor
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.settings import DEFAULT_PROMPTS, Settings
from tests.dagster_results import materializable, run_requests, sensor_result

CLI = [sys.executable, "-m", "extraction_assets.cli"]
PARTITIONS = "schema_versions"
# the attack's file: 9 aliases nested 9 deep, 9**9 values to whatever walks the example's answer (it hung discovery)
BOMB = """---
schema: bomb
version: v1
heuristic: pulse
fields:
  - name: risk
    description: A problem or threat.
examples:
  - text: "The compressor keeps failing."
    expected:
      a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
      b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
      c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
      d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
      e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
      f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
      g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
      h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
      i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
Extract risks.
"""
RESERVED = """---
schema: reserved
version: v1
shape: fields
heuristic: generic
fields:
  - name: model_config
    type: string
examples:
  - text: "Nothing."
    expected: {}
---
Extract.
"""
BOMB_SAYS = "bomb/v1.md, line 12: YAML aliases (*name) are not allowed in a prompt file"
RESERVED_SAYS = "reserved/v1.md, line 7: fields.0.name: 'model_config' is reserved"
GOOD = sorted(discover_schemas(DEFAULT_PROMPTS)[0])


def _plant(prompts: Path) -> None:
    for name, text in (("bomb", BOMB), ("reserved", RESERVED)):
        (prompts / name).mkdir()
        (prompts / name / "v1.md").write_text(text, encoding="utf-8")


def _within(seconds: float, work: Callable[[], dg.SensorResult]) -> dg.SensorResult:
    """`work()`, or a failure after `seconds` (the bomb hung discovery: a hang must fail the test, not the suite)."""
    done: list[dg.SensorResult] = []
    thread = threading.Thread(target=lambda: done.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"the sensor's tick did not return within {seconds} s"
    return done[0]


def _cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, " ".join((done.stdout + done.stderr).split())  # rich wraps long lines


def test_the_command_line_runs_every_other_version_and_names_each_bad_file_and_line(
    tmp_path: Path, inbox: Path, prompts: Path
) -> None:
    _plant(prompts)
    home = tmp_path / "dagster-home"
    home.mkdir()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "EXTRACTION_PROMPTS": str(prompts),
        "EXTRACTION_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
        "COLUMNS": "400",
    }
    code, output = _cli(["run", "--inbox", str(inbox)], env)
    assert code == 1, output[-3000:]  # a version that could not run is a failed part of the pass, not a crash
    assert "Traceback" not in output
    assert f"SKIPPED extract bomb@v1 (its prompt file cannot be used: {prompts}/{BOMB_SAYS}" in output
    assert f"SKIPPED extract reserved@v1 (its prompt file cannot be used: {prompts}/{RESERVED_SAYS}" in output
    for key in GOOD:
        assert f"ok extract {key}" in output, key

    code, output = _cli(["run", "--inbox", str(inbox), "--schema", "pulse@v1"], env)
    assert code == 0, output[-3000:]
    assert "ok extract pulse@v1" in output and "SKIPPED" not in output


def test_the_sensor_gives_a_bad_file_a_failed_run_of_its_own_and_passes_leave_it_out(
    settings: Settings, prompts: Path
) -> None:
    instance = dg.DagsterInstance.ephemeral()
    _plant(prompts)
    pipeline = PipelineResource(inbox=str(settings.inbox), prompts_dir=str(prompts))

    def tick(cursor: str | None) -> dg.SensorResult:
        context = dg.build_sensor_context(instance=instance, resources={"pipeline": pipeline}, cursor=cursor)
        return _within(120, lambda: sensor_result(schema_version_sensor(context)))

    first = tick(None)
    (added,) = first.dynamic_partitions_requests or []
    assert isinstance(added, dg.AddDynamicPartitionsRequest)
    assert list(added.partition_keys) == [*GOOD, "bomb@v1", "reserved@v1"]  # the usable ones first: one range
    keys = {request.run_key: request for request in run_requests(first)}
    assert keys[f"new-schema:{GOOD[0]}..{GOOD[-1]}"].tags[RANGE_END] == GOOD[-1]
    errors = {
        request.partition_key: key for key, request in keys.items() if (key or "").startswith("prompt-file-error:")
    }
    assert sorted(map(str, errors)) == ["bomb@v1", "reserved@v1"], "each broken file: a run of its partition alone"
    instance.add_dynamic_partitions(PARTITIONS, list(added.partition_keys))

    defs = build_definitions(settings)
    result = dg.materialize(
        materializable(defs),
        instance=instance,
        resources=defs.resources,
        selection=["extracted_items", "grounded_evidence", "review_queue"],
        partition_key="bomb@v1",
        raise_on_error=False,
    )
    assert not result.success and not result.get_asset_materialization_events()
    failure = result.get_step_failure_events()[0].step_failure_data.user_failure_data
    assert failure is not None and BOMB_SAYS in (failure.description or ""), "its run shows the file and line"

    (ingest_and_versions,) = pass_requests(instance, prompts, "inbox:x")
    assert (ingest_and_versions.tags[RANGE_START], ingest_and_versions.tags[RANGE_END]) == (GOOD[0], GOOD[-1])

    again = tick(first.cursor)
    assert again.skip_reason and not again.run_requests, "the same error is shown once"
    (prompts / "reserved" / "v1.md").write_text(RESERVED.replace("model_config", "summary"), encoding="utf-8")
    fixed = tick(again.cursor)
    fixed_runs = run_requests(fixed)
    assert [r.partition_key for r in fixed_runs] == ["reserved@v1"]
    assert fixed_runs[0].run_key and fixed_runs[0].run_key.startswith("prompt-file-fixed:")
