"""The code location loads light and runs each job's steps in one process (the UI's speed depends on both)."""

from __future__ import annotations

import json
import subprocess
import sys

import dagster as dg

from extraction_assets.definitions import build_definitions
from extraction_assets.lib.settings import Settings

HEAVY_FOR_THE_CODE_LOCATION = (
    "openai",
    "instructor",
    "matplotlib",
    "starlette",
    "uvicorn",
    "extraction_assets.lib.heuristics",
    "extraction_assets.lib.readers",
    # what a step loads when it needs it: the database, the PII vault's cryptography and detectors, the eval stack
    "duckdb",
    "cryptography",
    "phonenumbers",
    "extraction_assets.lib.pii.scrubber",
    "extraction_assets.lib.pii.vault",
    "extraction_assets.lib.evaluation",
    "jinja2",
)
HEAVY_FOR_HELP = (*HEAVY_FOR_THE_CODE_LOCATION, "dagster")


def _loaded_after(code: str, names: tuple[str, ...]) -> list[str]:
    """Which of `names` a fresh interpreter has imported after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([n for n in {list(names)!r} if n in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_every_job_runs_its_steps_in_process(settings: Settings) -> None:
    defs = build_definitions(settings)
    jobs = [defs.resolve_job_def(name) for name in ("ingest_job", "extract_job")]
    jobs.append(defs.resolve_implicit_global_asset_job_def())  # what the UI's "Materialize" button launches
    for job in jobs:
        assert job.executor_def is dg.in_process_executor, job.name


def test_loading_the_code_location_imports_no_model_plot_or_web_library() -> None:
    assert _loaded_after("import extraction_assets.definitions", HEAVY_FOR_THE_CODE_LOCATION) == []


def test_help_imports_nothing_heavy() -> None:
    code = "import contextlib, io\nfrom extraction_assets.cli import main\n"
    code += "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])"
    assert _loaded_after(code, HEAVY_FOR_HELP) == []


def test_reading_an_inbox_without_pdfs_or_workbooks_loads_neither_reader_library(tmp_path) -> None:
    """pypdf and openpyxl cost about half a second to import: an ingest of text and mail does not pay for them."""
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "note.txt").write_text("Dana will send the report by Friday.", encoding="utf-8")
    code = f"from extraction_assets.lib.readers import read_inbox\nlist(read_inbox({str(tmp_path)!r}))"
    assert _loaded_after(code, ("pypdf", "openpyxl")) == []


def test_reading_plain_mail_loads_neither_the_html_parser_nor_the_image_library(tmp_path) -> None:
    """bs4 costs about 0.1 s to import, Pillow 20 ms: only a message with an HTML body, or a screenshot, needs it."""
    (tmp_path / "acme").mkdir()
    mail = "From: dana@example.com\nTo: sam@example.com\nSubject: Report\n\nDana will send the report by Friday.\n"
    (tmp_path / "acme" / "note.eml").write_text(mail, encoding="utf-8")
    code = f"from extraction_assets.lib.readers import read_inbox\nassert len(list(read_inbox({str(tmp_path)!r}))) == 1"
    assert _loaded_after(code, ("bs4", "PIL")) == []


def test_a_run_reads_versions_and_routing_rules_without_loading_a_pack(prompts) -> None:
    """The extractor's versions and every schema's routing rules come from the pack registry alone: a run with
    nothing new to extract loads no pack, and a pack (the e-mail pack alone is about 0.3 s) loads when it works."""
    packs = [f"extraction_assets.lib.heuristics.{m}" for m in ("gates", "pulse", "interview", "receipt", "contract")]
    packs += ["extraction_assets.lib.heuristics.email", "extraction_assets.lib.heuristics.generic", "cn2an", "bs4"]
    code = (
        "from pathlib import Path\n"
        "from extraction_assets.lib.extraction import OrchestratedExtractor, rules_fingerprint\n"
        "from extraction_assets.lib.prompt_files import discover_schemas\n"
        f"found, _ = discover_schemas(Path({str(prompts)!r}))\n"
        "assert found\n"
        "for schema in found.values():\n"
        "    assert OrchestratedExtractor().version(schema).startswith('heuristic-')\n"
        "    rules_fingerprint(schema)\n"
    )
    assert _loaded_after(code, tuple(packs)) == []


def test_the_interview_pack_loads_cn2an_only_for_a_chinese_numeral() -> None:
    """cn2an costs about 0.15 s to import: an interview without Chinese numerals does not pay for it."""
    code = "from extraction_assets.lib.heuristics.interview import parse_number\n"
    code += "assert parse_number('about 300') == 300"
    assert _loaded_after(code, ("cn2an",)) == []
    assert _loaded_after(code + "\nassert parse_number('三百') == 300", ("cn2an",)) == ["cn2an"]


def test_every_asset_check_says_what_it_checks(settings: Settings) -> None:
    defs = build_definitions(settings)
    specs = [spec for checks in defs.asset_checks or [] for spec in checks.check_specs]
    specs += [spec for asset in defs.assets or [] for spec in getattr(asset, "check_specs", [])]  # an asset's own
    assert len(specs) >= 9
    assert [spec.name for spec in specs if not (spec.description or "").strip()] == []


def test_sensors_run_by_themselves_and_schedules_wait_to_be_turned_on(settings: Settings) -> None:
    """What the README's 'What runs by itself' table says."""
    defs = build_definitions(settings)
    sensors = {s.name: s.default_status for s in defs.sensors or []}
    schedules = {s.name: s.default_status for s in defs.schedules or []}
    assert sensors == {
        **dict.fromkeys(
            ("schema_version_sensor", "extraction_automation", "llm_batch_sensor", "session_sensor"),
            dg.DefaultSensorStatus.RUNNING,
        ),
        "mail_sensor": dg.DefaultSensorStatus.STOPPED,
        "inbox_sensor": dg.DefaultSensorStatus.STOPPED,
    }
    assert schedules == dict.fromkeys(
        ("ingest_every_15_minutes", "nightly_extract_all_versions"), dg.DefaultScheduleStatus.STOPPED
    )


def test_every_sensor_and_schedule_says_what_it_does(settings: Settings) -> None:
    defs = build_definitions(settings)
    described = {s.name: (s.description or "").strip() for s in [*(defs.sensors or []), *(defs.schedules or [])]}
    assert len(described) == 8 and [name for name, text in described.items() if len(text) < 40] == []
