"""A fake OpenAI-compatible server on 127.0.0.1 for tests, benchmarks and trying the model path offline.

It answers chat completions by running the schema's own heuristic pack over the document inside the
request's boundary tags, shaped as the response schema asks, and on demand adds the faults a real
endpoint shows: latency, 429 with Retry-After, 500, timeouts, an answer sent one byte at a time (its body, or its
headers too), invalid JSON, schema-violating JSON, invented evidence spans and echoed prompt-injection text. It
records every request it receives.

It also serves the Batch API (`POST /v1/files` with purpose `batch`, `POST /v1/batches`, `GET /v1/batches/<id>`,
`GET /v1/files/<id>/content`): a batch stays `in_progress` for `batch_polls` retrievals, then completes, or
expires (`batch_expire`: only the first half of its lines answered), with `batch_fail_line_every` lines failed.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import re
import threading
import time
from datetime import date
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from extraction_assets.lib.heuristics import get_pack
from extraction_assets.lib.llm import document_from_messages
from extraction_assets.lib.llm.prompting import TAG_PREFIX
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

INVENTED_SPAN = "The board approved an unlimited budget for the Atlantis office."
_SCHEMA_KEY = re.compile(r"Schema version: ([a-z0-9_\-]+@[a-z0-9_\-]+)")
_DATE = re.compile(r"^Today's date \(the document's date[^)]*\): (\d{4}-\d{2}-\d{2})$", re.MULTILINE)
_KIND = re.compile(r"^Document kind: (\w+)$", re.MULTILINE)
_MODULE = re.compile(r"^Extract the (\w+) record\.$", re.MULTILINE)
_INJECTION = re.compile(r"[^\n]*(ignore (all |any )?(previous|prior) instructions|system prompt)[^\n]*", re.IGNORECASE)


class Faults(BaseModel):
    """What the fake does wrong, and how often (`*_every` = N: requests 1, N+1, 2N+1, ... are hit)."""

    latency_ms: float = 0.0  # how long each answer takes in all (error answers come at once)
    rate_limit_every: int = 0
    retry_after_s: float = 0.05
    server_error_every: int = 0
    timeout_every: int = 0
    timeout_s: float = 3.0
    drip_s: float = 0.0  # > 0: every answer is sent one byte every this many seconds (a slow or stuck endpoint)
    drip_headers: bool = False  # with drip_s: the status line and headers too, not only the body
    refuse_with: str = ""  # set: every chat request is answered 400 with this error message (a provider's echo)
    title_prefix: str = ""  # written before every item title (a model's control characters, say)
    invalid_json: bool = False
    schema_violation: bool = False
    hallucinate: bool = False
    echo_injection: bool = False
    fail_classification: bool = False
    confidence: float = 0.95
    batch_polls: int = 1  # retrievals a batch answers `in_progress` before it finishes
    batch_expire: bool = False
    batch_fail_line_every: int = 0


def _hit(every: int, index: int) -> bool:
    return every > 0 and (index - 1) % every == 0


class _Responder:
    """Builds the JSON answer a well-behaved model would give, from the schema's heuristic pack."""

    def __init__(self, prompts_dir: Path) -> None:
        self.prompts_dir = prompts_dir
        self.schemas: dict[str, SchemaVersion] = discover_schemas(prompts_dir)[0]  # before serving: answers stay quick

    def schema(self, key: str) -> SchemaVersion | None:
        """Re-read the prompt files on a miss, so a file added while the server runs is known."""
        if key not in self.schemas:
            self.schemas = discover_schemas(self.prompts_dir)[0]
        return self.schemas.get(key)

    def answer(self, messages: list[dict[str, Any]], faults: Faults) -> dict[str, Any]:
        system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
        # the document's turn: the user message holding its boundary tag (few-shot examples come before it, and a
        # client's mode may add a user message after it)
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        user = next((u for u in users if f"<{TAG_PREFIX}-" in u), users[0] if users else "")
        key = _SCHEMA_KEY.search(system)
        schema = self.schema(key.group(1)) if key else None
        text = document_from_messages(messages) or ""
        if schema is None:
            return {"items": []}
        when = _DATE.search(user)
        kind = _KIND.search(user)
        doc = ExtractionInput(
            doc_id="fake",
            tenant_id="fake",
            kind=kind.group(1) if kind and kind.group(1) in schema.document_kinds else "text",  # type: ignore[arg-type]
            text=text,
            doc_date=date.fromisoformat(when.group(1)) if when else None,
        )
        candidates = get_pack(schema.heuristic).extract(doc, schema)
        if faults.hallucinate:
            candidates = [c.model_copy(update={"evidence_span": INVENTED_SPAN}) for c in candidates]
        if faults.echo_injection and (injected := _INJECTION.search(text)):
            candidates.append(
                CandidateItem(
                    item_type=schema.fields[0].name,
                    title=injected.group(0).strip()[:200],
                    evidence_span=injected.group(0).strip(),
                    confidence=1.0,
                )
            )
        if user.startswith("Classify"):
            if faults.fail_classification:
                return {"modules": ["not-a-module"]}
            return {"modules": sorted({c.item_type for c in candidates})}
        if module := _MODULE.search(user):
            best = max(
                (c for c in candidates if c.item_type == module.group(1)), key=lambda c: c.confidence, default=None
            )
            spans = [best.evidence_span, *best.more_evidence] if best else []
            return {"evidence_spans": spans[:5], "confidence": faults.confidence, **(best.value if best else {})}
        if schema.shape == "fields":
            answer: dict[str, Any] = {}
            for c in candidates:
                answer.setdefault(
                    c.item_type,
                    {
                        "value": c.value.get("value"),
                        "evidence_spans": [c.evidence_span],
                        "confidence": faults.confidence,
                    },
                )
            return answer
        return {
            "items": [
                {
                    "item_type": c.item_type,
                    "title": faults.title_prefix + c.title,
                    "evidence_span": c.evidence_span,
                    "confidence": faults.confidence,
                    **{k: v for k, v in c.value.items() if v is not None},
                }
                for c in candidates[: schema.max_items]
            ]
        }


def _violate(answer: dict[str, Any]) -> dict[str, Any]:
    """The same answer with a value of the wrong type, as a sloppy model would write it."""
    broken = json.loads(json.dumps(answer))
    if broken.get("items"):
        broken["items"][0]["item_type"] = "banana"
        broken["items"][0]["confidence"] = "very high"
    elif "modules" in broken:
        broken["modules"] = "all of them"
    else:
        broken["confidence"] = "very high"
        for value in broken.values():
            if isinstance(value, dict):
                value["confidence"] = "very high"
    return broken


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog (5) drops bursts of connections: clients then wait ~1 s


class FakeLLMServer:
    """`with FakeLLMServer(Faults(latency_ms=200)) as fake:` then point a client at `fake.base_url`."""

    def __init__(self, faults: Faults | None = None, prompts_dir: Path = DEFAULT_PROMPTS, port: int = 0) -> None:
        self.faults = faults or Faults()
        self.requests: list[dict[str, Any]] = []
        self.batch_lines: list[dict[str, Any]] = []  # every line of every batch submitted (not in `requests`)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._responder = _Responder(prompts_dir)
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self.answering = threading.Event()  # cleared: every answer waits until it is set again (a test's pause)
        self.answering.set()
        self._server = _Server(("127.0.0.1", port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def configure(self, **faults: Any) -> None:
        self.faults = self.faults.model_copy(update=faults)

    def start(self) -> FakeLLMServer:
        gc.freeze()  # full collections stall every answer at once: keep them off what exists before serving
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, body: dict[str, Any]) -> int:
        with self._lock:
            self.requests.append(body)
            return next(self._counter)

    def _completion(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": content}}],
            }
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt // 4,
                "completion_tokens": len(content) // 4,
                "total_tokens": prompt // 4 + len(content) // 4,
            },
        }

    def handle(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any] | None]:
        """One request: (status, headers, JSON body or None to drop the connection after a timeout)."""
        started = time.monotonic()
        index = self._record(body)
        faults = self.faults
        if _hit(faults.timeout_every, index):
            time.sleep(faults.timeout_s)
            return 504, {}, {"error": {"message": "upstream timed out", "type": "timeout"}}
        if _hit(faults.rate_limit_every, index):
            headers = {"Retry-After": str(faults.retry_after_s)}
            return 429, headers, {"error": {"message": "rate limited", "type": "rate_limit_exceeded"}}
        if _hit(faults.server_error_every, index):
            return 500, {}, {"error": {"message": "internal error", "type": "server_error"}}
        if faults.refuse_with:
            return 400, {}, {"error": {"message": faults.refuse_with, "type": "invalid_request_error"}}
        answer = self._responder.answer(body.get("messages", []), faults)
        if faults.schema_violation:
            answer = _violate(answer)
        content = "this is not JSON {" if faults.invalid_json else json.dumps(answer, ensure_ascii=False)
        completion = self._completion(body, content)
        # `latency_ms` is the whole answer's time, as a client sees it, not a sleep added to our own work
        time.sleep(max(0.0, faults.latency_ms / 1000 - (time.monotonic() - started)))
        self.answering.wait()
        return 200, {}, completion

    def upload(self, content: bytes, purpose: str, filename: str) -> dict[str, Any]:
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = content
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }

    def create_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        content = self.files.get(body.get("input_file_id", ""))
        if content is None:
            return 404, {"error": {"message": "input file not found"}}
        lines = [json.loads(line) for line in content.decode("utf-8").splitlines() if line.strip()]
        with self._lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            self.batch_lines += lines
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body.get("endpoint", "/v1/chat/completions"),
                "input_file_id": body["input_file_id"],
                "completion_window": body.get("completion_window", "24h"),
                "status": "in_progress",
                "created_at": int(time.time()),
                "output_file_id": None,
                "error_file_id": None,
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "_lines": lines,
                "_polls": 0,
            }
        return 200, self._public(batch_id)

    def _public(self, batch_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.batches[batch_id].items() if not k.startswith("_")}

    def retrieve_batch(self, batch_id: str) -> tuple[int, dict[str, Any]]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {"error": {"message": "batch not found"}}
        batch["_polls"] += 1
        if batch["status"] == "in_progress" and batch["_polls"] > self.faults.batch_polls:
            self._finish(batch)
        return 200, self._public(batch_id)

    def _finish(self, batch: dict[str, Any]) -> None:
        """Answer the batch's lines as the chat endpoint would; an expired batch answers its first half only."""
        lines = batch["_lines"]
        answered = lines[: len(lines) // 2] if self.faults.batch_expire else lines
        output, errors = [], []
        for index, line in enumerate(answered, start=1):
            if _hit(self.faults.batch_fail_line_every, index):
                errors.append(
                    {
                        "id": f"batch_req_{index}",
                        "custom_id": line["custom_id"],
                        "response": {"status_code": 500, "body": {"error": {"message": "internal error"}}},
                        "error": {"code": "server_error", "message": "internal error"},
                    }
                )
                continue
            answer = self._responder.answer(line["body"].get("messages", []), self.faults)
            completion = self._completion(line["body"], json.dumps(answer, ensure_ascii=False))
            output.append(
                {
                    "id": f"batch_req_{index}",
                    "custom_id": line["custom_id"],
                    "response": {"status_code": 200, "request_id": f"req_{index}", "body": completion},
                    "error": None,
                }
            )
        for key, rows in (("output_file_id", output), ("error_file_id", errors)):
            if rows:
                data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
                batch[key] = self.upload(data, "batch_output", f"{batch['id']}-{key}.jsonl")["id"]
        batch["status"] = "expired" if self.faults.batch_expire else "completed"
        batch["request_counts"] = {"total": len(lines), "completed": len(output), "failed": len(errors)}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do
            disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart (delayed ACK)

            def log_message(self, *args: object) -> None:  # quiet: tests read `requests` instead
                return

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if fake.faults.drip_s > 0:
                    self._drip(data)
                    return
                self.end_headers()
                self.wfile.write(data)

            def _drip(self, data: bytes) -> None:
                """The answer one byte every `drip_s` seconds (the headers at once unless `drip_headers`), until it
                is sent or the client hangs up."""
                head = b""
                if fake.faults.drip_headers:
                    buffered: list[bytes] = getattr(self, "_headers_buffer")  # noqa: B009  (what end_headers sends)
                    head = b"".join(buffered) + b"\r\n"
                    buffered.clear()
                else:
                    self.end_headers()
                    self.wfile.flush()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    for byte in head + data:
                        time.sleep(fake.faults.drip_s)
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                self.close_connection = True

            def _send_bytes(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                path = self.path.rstrip("/")
                if (batch := re.fullmatch(r"/v1/batches/([\w-]+)", path)) is not None:
                    self._send(*fake.retrieve_batch(batch.group(1)))
                elif (content := re.fullmatch(r"/v1/files/([\w-]+)/content", path)) is not None:
                    if content.group(1) in fake.files:
                        self._send_bytes(fake.files[content.group(1)])
                    else:
                        self._send(404, {"error": {"message": "file not found"}})
                elif path.endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                elif self.path == "/_requests":
                    self._send(200, fake.requests)
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") == "/v1/files":
                    self._send(200, self._upload(raw))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                if self.path == "/_faults":
                    fake.configure(**body)
                    self._send(200, fake.faults.model_dump())
                    return
                if self.path.rstrip("/") == "/v1/batches":
                    status, created = fake.create_batch(body)
                    self._send(status, created)
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                status, headers, payload = fake.handle(body)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    self._send(status, payload, headers)

            def _upload(self, raw: bytes) -> dict[str, Any]:
                """A multipart upload (`file`, `purpose`), parsed with the standard library's MIME parser."""
                head = f"Content-Type: {self.headers.get('Content-Type', '')}\r\n\r\n".encode()
                message = BytesParser(policy=email_policy).parsebytes(head + raw)
                fields: dict[str, Any] = {}
                for part in message.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
                filename, content = fields.get("file", ("upload.jsonl", b""))
                purpose = fields.get("purpose", (None, b""))[1].decode("utf-8")
                return fake.upload(content, purpose, filename or "upload.jsonl")

        return Handler


def main(argv: list[str] | None = None) -> int:
    """`python -m evals.fake_llm`: serve the fake endpoint until Ctrl+C, to try the model path offline."""
    parser = argparse.ArgumentParser(prog="python -m evals.fake_llm", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every answer")
    parser.add_argument("--rate-limit-every", type=int, default=0, help="answer 429 to requests 1, N+1, ...")
    parser.add_argument("--server-error-every", type=int, default=0, help="answer 500 to requests 1, N+1, ...")
    parser.add_argument("--hallucinate", action="store_true", help="invent every evidence span")
    parser.add_argument("--invalid-json", action="store_true", help="answer with text that is not JSON")
    parser.add_argument("--drip-s", type=float, default=0.0, help="send each answer one byte every this many seconds")
    parser.add_argument("--drip-headers", action="store_true", help="with --drip-s: the headers one byte at a time too")
    args = parser.parse_args(argv)
    faults = Faults(
        latency_ms=args.latency_ms,
        rate_limit_every=args.rate_limit_every,
        server_error_every=args.server_error_every,
        hallucinate=args.hallucinate,
        invalid_json=args.invalid_json,
        drip_s=args.drip_s,
        drip_headers=args.drip_headers,
    )
    with FakeLLMServer(faults, port=args.port) as fake:
        print(f"fake model endpoint at {fake.base_url} (model name: anything), Ctrl+C to stop", flush=True)
        print(
            f"  EXTRACTION_LLM_BASE_URL={fake.base_url} EXTRACTION_LLM_MODEL=fake-model .venv/bin/extraction-assets run"
        )
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            print(f"served {len(fake.requests)} requests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
