"""Processes forked from one that imported what they run once: a fresh Python process pays seconds of imports (the
pipeline, Dagster) before it does anything, and the tests that start many processes test what the processes do at
once, not how they start.

`python -m tests.integration.forked <module> [<preloaded module>...]` is such a server: it imports them, then for
each JSON line `{"argv": [...], "output": path, "env": {...}}` on stdin forks a process that runs
`<module>.main(argv)` with its stdout and stderr in `output` (and that environment, when given), and answers with
its pid; `wait <pid>` answers with its exit code (negative: the signal that ended it), `poll <pid>` with the exit
code or `running`. The server starts with the environment its processes need at import (a module-level setting read
from it stays). At the end of its input it kills what it started and has not been asked to wait for.
`ForkServer` starts one and hands out `Forked` processes (what the tests use of `subprocess.Popen`).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def serve(run: Callable[[list[str]], int]) -> None:
    """Answer the requests on stdin (see the module's docstring), each forked process running `run(argv)`."""
    started: set[int] = set()
    for line in sys.stdin:
        if line.startswith(("wait ", "poll ")):
            pid = int(line.split()[1])
            done, status = os.waitpid(pid, 0 if line.startswith("wait ") else os.WNOHANG)
            if done:
                started.discard(pid)
            print(os.waitstatus_to_exitcode(status) if done else "running", flush=True)
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _run_forked(run, request)
        started.add(pid)
        print(pid, flush=True)
    for pid in started:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _run_forked(run: Callable[[list[str]], int], request: dict) -> None:
    if request.get("env") is not None:
        os.environ.clear()
        os.environ.update(request["env"])
    sys.stdin.close()
    output = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(output, 1)
    os.dup2(output, 2)
    code = 1
    try:
        code = run(request["argv"])
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class Forked:
    """A process the server forked: the part of `subprocess.Popen` the tests use."""

    def __init__(self, server: ForkServer, pid: int, args: list[str], output: Path) -> None:
        self.server, self.pid, self.args, self.output = server, pid, args, output
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            answer = self.server.ask(f"poll {self.pid}")
            self.returncode = None if answer == "running" else int(answer)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = int(self.server.ask(f"wait {self.pid}"))
        return self.returncode

    def communicate(self) -> tuple[bytes, None]:
        """Wait for the end; what the process wrote (stdout and stderr)."""
        self.wait()
        return self.output.read_bytes(), None

    def said(self) -> str:
        return self.output.read_text(errors="replace")


class ForkServer:
    """A server (see the module's docstring) running `module.main`, started with `env`."""

    def __init__(self, module: str, env: dict[str, str], folder: Path, preload: Sequence[str] = ()) -> None:
        self.module, self.folder = module, folder
        folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, module, *preload],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.started = 0

    def ask(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        assert answer, f"the fork server ended (exit {self.process.poll()})"
        return answer

    def start(self, argv: Sequence[str], env: dict[str, str] | None = None) -> Forked:
        """Fork a process running `module.main(argv)`."""
        self.started += 1
        output = self.folder / f"process-{self.started}.out"
        pid = int(self.ask(json.dumps({"argv": list(argv), "output": str(output), "env": env})))
        return Forked(self, pid, [self.module, *argv], output)

    def close(self) -> None:
        """End the server (it kills what is still running of what it started) and wait for it."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def main(argv: Sequence[str]) -> None:
    module, *preload = argv
    for name in preload:
        importlib.import_module(name)
    serve(importlib.import_module(module).main)


if __name__ == "__main__":
    main(sys.argv[1:])
