"""A live interview session for tests: interview@v1 with objectives, and turns appended one at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

OBJECTIVES = {
    "primary_channel": "habits",
    "home_cooked_dinners_per_week": "habits",
    "weekly_spend": "spend",
    "pain_points": "pain",
    "would_recommend": "advocacy",
    "decision_factor": "advocacy",
}
INTERVIEWER, RESPONDENT = "访谈员", "受访者"
TURNS = [
    ("t1", INTERVIEWER, "您好，谢谢参加。先聊聊您平时晚饭一般怎么解决？"),
    ("t2", RESPONDENT, "工作日基本都是点外卖，美团用得最多。"),
    ("t3", INTERVIEWER, "一周在吃饭上大概花多少钱？"),
    ("t4", RESPONDENT, "大概三百块吧，有时候更多。"),
    ("t5", INTERVIEWER, "点外卖有什么让您觉得麻烦的地方吗？"),
    ("t6", RESPONDENT, "等太久了，高峰期经常要一个小时。而且外卖太油腻，不健康。"),
]


def with_objectives(prompts: Path) -> None:
    """interview@v1 with each field naming its objective (a copy in the test's prompts folder)."""
    path = prompts / "interview" / "v1.md"
    _, front, body = path.read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(front)
    for field in meta["fields"]:
        field["objective"] = OBJECTIVES[field["name"]]
    path.write_text(f"---\n{yaml.safe_dump(meta, allow_unicode=True)}---\n{body}", encoding="utf-8")


def turn(turn_id: str, speaker: str, text: str) -> dict[str, str]:
    return {"id": turn_id, "speaker": speaker, "text": text}


def append(path: Path, *lines: dict[str, Any]) -> None:
    """Append JSONL lines (turns or events such as `{"status": "completed"}`) to a session file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


def whole_session(path: Path, completed: bool = True) -> None:
    """Every turn of the seed session, then (by default) its completion."""
    append(path, *(turn(*t) for t in TURNS), *([{"status": "completed"}] if completed else []))
