"""Chat text pasted into a plain-text file (Zalo, WhatsApp, Telegram copies): messages become turns.

Seed 000's chaos import: an owner pastes a group chat into a note. The text is kept exactly as
pasted; only the turns are found, so evidence quotes still point into the raw text and name the
message they came from. Recognised message lines:

    [10:02] Lan: ...                      [25/11/2026 10:02] Lan: ...       [25/11/26, 10:02:15] Lan: ...
    25/11/2026, 10:02 - Lan: ...          (a full-width colon "：" after the sender works too)

A line that is not a message line continues the message above it. A note counts as a chat only when
it is made of such lines: at least two, at least half of the non-empty lines from the first one on,
and at most a few title lines before it, so notes that merely quote one message stay text.
"""

from __future__ import annotations

import re

from extraction_assets.lib.models import Turn
from extraction_assets.lib.readers.record import ReadBudget

__all__ = ["pasted_chat_turns"]

_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?"
_DATE = r"\d{1,4}[./-]\d{1,2}[./-]\d{1,4}"
_SENDER = r"(?P<sender>[^\s\[\]:：][^\[\]:：\n]{0,39}?)"
_MESSAGE_LINE = re.compile(
    rf"^[ \t]*(?:\[(?P<bracketed>(?:{_DATE},?\s+)?{_TIME})\]|(?P<dashed>{_DATE},?\s+{_TIME})\s+[-–])"
    rf"[ \t]*{_SENDER}[ \t]*[:：][ \t]?(?P<body>.*)$",
    re.MULTILINE,
)
_MAX_TITLE_LINES = 3
_MAX_SENDER_WORDS = 6


def pasted_chat_turns(text: str, budget: ReadBudget | None = None) -> list[Turn]:
    """The messages of a pasted chat as turns over `text` (message bodies only), or [] for a plain note; each
    message line found is counted in the file's `budget`."""
    headers = []
    for match in _MESSAGE_LINE.finditer(text):
        if _plausible_sender(match.group("sender")):
            if budget is not None:
                budget.row("messages")
            headers.append(match)
    if len(headers) < 2:
        return []
    before = [line for line in text[: headers[0].start()].split("\n") if line.strip()]
    after = [line for line in text[headers[0].start() :].split("\n") if line.strip()]
    if len(before) > _MAX_TITLE_LINES or 2 * len(headers) < len(after):
        return []
    turns: list[Turn] = []
    for number, match in enumerate(headers, start=1):
        stop = headers[number].start() if number < len(headers) else len(text)
        start, end = match.start("body"), stop
        while end > start and text[end - 1].isspace():
            end -= 1
        if end <= start:
            continue  # a message line with nothing after the sender (an attachment placeholder)
        turns.append(
            Turn(
                turn_id=f"m{number}",
                start=start,
                end=end,
                speaker=match.group("sender").strip(),
                timestamp=match.group("bracketed") or match.group("dashed"),
            )
        )
    return turns


def _plausible_sender(sender: str) -> bool:
    """A name, not a clause: short, with a letter, and not ending like a sentence."""
    words = sender.split()
    return 0 < len(words) <= _MAX_SENDER_WORDS and any(c.isalpha() for c in sender) and sender[-1] not in ".!?"
