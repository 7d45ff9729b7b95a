"""Response models under concurrency: the production thread pool's first calls, all at once, in a fresh process."""

from __future__ import annotations

import subprocess
import sys

RACE = """
import threading
from extraction_assets.lib.llm import response_models
from extraction_assets.lib.llm.response_models import module_model, response_base, response_model
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.settings import DEFAULT_PROMPTS

schemas = discover_schemas(DEFAULT_PROMPTS)[0]
email = schemas["email@v1"]
modules = [m for m in email.modules] if getattr(email, "modules", None) else []
start = threading.Barrier(16)
bases, errors = [], []

def first_use(n):
    start.wait()
    try:
        bases.append(response_base())
        schema = list(schemas.values())[n % len(schemas)]
        response_model(schema).model_json_schema()
        for module in modules:
            module_model(email, module).model_json_schema()
    except Exception as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=first_use, args=(n,)) for n in range(16)]
for t in threads: t.start()
for t in threads: t.join()
print(len({id(b) for b in bases}), len(errors), errors[:2])
"""


def test_first_use_from_many_threads_at_once_builds_one_base_and_every_model_works() -> None:
    for _ in range(3):  # a race: a few fresh processes
        done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split()[:2] == ["1", "0"], done.stdout
