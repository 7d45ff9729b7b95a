"""JSON inbox formats: pulse check-ins (also one per JSONL line), chat exports and meeting transcripts.

Each format lays its records out as text with one Turn per answer, message or spoken turn, whose
offsets are exact `str` indices into the Document's text.
"""

from __future__ import annotations

import io
import json
from typing import Any

from extraction_assets.lib.models import Document, ReadFailure, Turn
from extraction_assets.lib.readers.record import (
    UTF8_BOM,
    RecordContext,
    Rejected,
    decode_utf8,
    normalize_newlines,
    opt_str,
    parse_iso_date,
)

MAX_JSONL_LINE_BYTES = 2 * 1024 * 1024  # one check-in is a few KB; a longer line is a mistake or an attack


def parse_json(text: str, where: str = "") -> Any:
    """JSON, or `Rejected` with a reason that names what was found (never a RecursionError or a bare ValueError)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = where or f"line {exc.lineno}"
        raise Rejected(f"malformed JSON at {line} col {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise Rejected(f"JSON nested too deeply{' at ' + where if where else ''}") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits (Python's int conversion limit)
        raise Rejected(f"JSON value out of range{' at ' + where if where else ''}: {exc}") from None


def read_json(text: str, ctx: RecordContext) -> Document:
    """Recognise the structure by its list key; the three shapes are mutually exclusive in practice."""
    obj = parse_json(text)
    if isinstance(obj, dict):
        if "answers" in obj:
            return pulse_document(obj, ctx)
        if "messages" in obj:
            return chat_document(obj, ctx)
        if "turns" in obj:
            return transcript_document(obj, ctx)
    raise Rejected("JSON is not a pulse, chat export or transcript")


def read_jsonl(data: bytes, ctx: RecordContext) -> list[Document | ReadFailure]:
    """One pulse per line; each line is decoded and validated alone so one bad record costs only itself."""
    out: list[Document | ReadFailure] = []
    offset = 0
    if data.startswith(UTF8_BOM):
        data, offset = data[len(UTF8_BOM) :], len(UTF8_BOM)
    for lineno, line_and_end in enumerate(
        io.BytesIO(data), start=1
    ):  # one at a time: a list of 2.7 M lines cost 100 MB
        ctx.budget.row("lines")
        raw = line_and_end.removesuffix(b"\n")
        uri = f"{ctx.source_uri}#L{lineno}"
        line_offset = offset
        offset += len(line_and_end)
        try:
            if len(raw) > MAX_JSONL_LINE_BYTES:
                raise Rejected(f"JSONL line {lineno} too long ({len(raw)} bytes, limit {MAX_JSONL_LINE_BYTES})")
            line = decode_utf8(raw, base_offset=line_offset).strip()
            if not line:
                continue
            obj = parse_json(line, where=f"line {lineno}")
            if not isinstance(obj, dict) or "answers" not in obj:
                raise Rejected("JSONL record is not a pulse check-in")
            out.append(pulse_document(obj, ctx, source_uri=uri))
        except Rejected as exc:
            out.append(ReadFailure(tenant_id=ctx.tenant_id, source_uri=uri, reason=str(exc)))
    if not out:
        raise Rejected("empty file (no JSONL records)")
    return out


def pulse_document(obj: dict[str, Any], ctx: RecordContext, *, source_uri: str | None = None) -> Document:
    """Question line, answer line(s), blank line; a Turn spans exactly each answer."""
    answers = obj.get("answers")
    if not isinstance(answers, list) or not answers:
        raise Rejected("pulse 'answers' must be a non-empty list")
    author = opt_str(obj, "author", "member")
    raw_date = opt_str(obj, "date")
    parts: list[str] = []
    turns: list[Turn] = []
    pos = 0
    for i, item in enumerate(answers, start=1):
        ctx.budget.row("answers")
        if not isinstance(item, dict):
            raise Rejected(f"pulse answer {i} is not an object")
        question = item.get("question")
        answer = item.get("answer")
        if not isinstance(question, str) or not isinstance(answer, str):
            raise Rejected(f"pulse answer {i} needs string 'question' and 'answer'")
        question, answer = normalize_newlines(question), normalize_newlines(answer)
        head = f"{question}\n"
        start = pos + len(head)
        turns.append(Turn(turn_id=f"a{i}", start=start, end=start + len(answer), speaker=author, question=question))
        chunk = f"{head}{answer}\n\n"
        parts.append(chunk)
        pos += len(chunk)
    text = "".join(parts)
    if not any(t.end > t.start and text[t.start : t.end].strip() for t in turns):
        raise Rejected("pulse has no non-empty answers")
    metadata = {"author": author, "date": raw_date, "language": opt_str(obj, "language")}
    title = "Pulse: " + " ".join(p for p in (author, raw_date) if p) if (author or raw_date) else "Pulse"
    return ctx.document(
        "pulse",
        text,
        turns=turns,
        doc_date=parse_iso_date(raw_date),
        title=title,
        metadata={k: v for k, v in metadata.items() if v is not None},
        source_uri=source_uri,
    )


_TurnRow = tuple[str, str, str, str | None, str | None]  # turn id, line prefix, body, speaker, timestamp


def _lay_out_turns(rows: list[_TurnRow]) -> tuple[str, list[Turn]]:
    """One line per turn, `prefix + body`; each Turn spans only its body, so evidence cites the words said."""
    parts: list[str] = []
    turns: list[Turn] = []
    pos = 0
    for turn_id, prefix, body, speaker, stamp in rows:
        start = pos + len(prefix)
        turns.append(Turn(turn_id=turn_id, start=start, end=start + len(body), speaker=speaker, timestamp=stamp))
        line = f"{prefix}{body}\n"
        parts.append(line)
        pos += len(line)
    return "".join(parts), turns


def chat_document(obj: dict[str, Any], ctx: RecordContext, *, source_uri: str | None = None) -> Document:
    """`[time] sender: text` per message; a Turn spans only the message text."""
    messages = obj.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Rejected("chat 'messages' must be a non-empty list")
    rows: list[_TurnRow] = []
    for i, msg in enumerate(messages, start=1):
        ctx.budget.row("messages")
        if not isinstance(msg, dict):
            raise Rejected(f"chat message {i} is not an object")
        body = msg.get("text")
        if not isinstance(body, str):
            raise Rejected(f"chat message {i} has no string 'text'")
        sender = opt_str(msg, "sender", "from")
        stamp = opt_str(msg, "time", "timestamp")
        prefix = (f"[{stamp}] " if stamp else "") + (f"{sender}: " if sender else "")
        rows.append((f"m{i}", prefix, normalize_newlines(body), sender, stamp))
    text, turns = _lay_out_turns(rows)
    channel = opt_str(obj, "channel")
    title = opt_str(obj, "title") or channel
    participants = sorted({t.speaker for t in turns if t.speaker})
    metadata: dict[str, Any] = {"message_count": len(turns), "participants": participants}
    if channel:
        metadata["channel"] = channel
    return ctx.document(
        "chat",
        text,
        turns=turns,
        doc_date=parse_iso_date(turns[0].timestamp),
        title=title,
        metadata=metadata,
        source_uri=source_uri,
    )


def transcript_document(obj: dict[str, Any], ctx: RecordContext) -> Document:
    """`speaker: text` per turn; turn ids come from the file so reviewers can cite them."""
    raw_turns = obj.get("turns")
    if not isinstance(raw_turns, list) or not raw_turns:
        raise Rejected("transcript 'turns' must be a non-empty list")
    rows: list[_TurnRow] = []
    seen: set[str] = set()
    for i, item in enumerate(raw_turns, start=1):
        ctx.budget.row("turns")
        if not isinstance(item, dict):
            raise Rejected(f"transcript turn {i} is not an object")
        body = item.get("text")
        if not isinstance(body, str):
            raise Rejected(f"transcript turn {i} has no string 'text'")
        body = normalize_newlines(body)
        raw_id = item.get("turn_id", item.get("id"))
        turn_id = str(raw_id).strip() if isinstance(raw_id, (str, int)) and str(raw_id).strip() else f"t{i}"
        if turn_id in seen:
            raise Rejected(f"transcript turn id {turn_id!r} is used twice")
        seen.add(turn_id)
        speaker = opt_str(item, "speaker")
        rows.append((turn_id, f"{speaker}: " if speaker else "", body, speaker, opt_str(item, "time")))
    text, turns = _lay_out_turns(rows)
    raw_date = opt_str(obj, "date")
    speakers = sorted({t.speaker for t in turns if t.speaker})
    metadata: dict[str, Any] = {"speakers": speakers, "turn_count": len(turns)}
    if raw_date:
        metadata["date"] = raw_date
    return ctx.document(
        "transcript",
        text,
        turns=turns,
        doc_date=parse_iso_date(raw_date),
        title=opt_str(obj, "title"),
        metadata=metadata,
    )
