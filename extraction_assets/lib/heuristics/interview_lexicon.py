"""The words the interview pack looks for, per language: speaker labels per role, the interviewer's summary and the
respondent's denial of it, negators, and the counting words and idioms that keep a numeral from being an amount.

Phrases are matched on `normalize_for_match` text with `phrases.py`'s rules. Adding a language means adding its
words to each table here. A field's own topic and option words are not here: they come from its prompt file's
`extraction_hint`.
"""

from __future__ import annotations

from typing import Literal

# The roles a speaker may have; a speaker no label names is the respondent.
Role = Literal["interviewer", "respondent", "tool", "artifact", "system"]

# Speaker labels per role; a schema may add its own under `options.speaker_roles`.
DEFAULT_ROLE_LABELS: dict[Role, tuple[str, ...]] = {
    "interviewer": (
        "interviewer", "researcher", "moderator", "facilitator", "host", "agent", "assistant", "bot",
        "访谈员", "采访者", "主持人", "研究员", "调研员", "访员", "研究者", "phỏng vấn viên", "người phỏng vấn",
        "nhà nghiên cứu", "интервьюер", "модератор", "исследователь",
    ),
    "tool": ("tool", "survey", "form", "widget", "工具", "问卷", "công cụ", "khảo sát", "инструмент", "опрос"),
    "artifact": ("upload", "attachment", "artifact", "上传", "附件", "tệp đính kèm", "вложение"),
    "system": ("system", "系统", "hệ thống", "система"),
}  # fmt: skip
SUMMARY_MARKERS = (
    "总结", "确认一下", "复述", "我理解的是", "也就是说", "to sum up", "to summarize", "summary", "recap",
    "let me confirm", "just to confirm", "tóm lại", "xác nhận lại", "tóm tắt", "подытожим", "итак, вы",
)  # fmt: skip
DENIALS = (
    "不对", "不是这样", "不是的", "我没说", "我没有说", "没这么说", "不准确", "说错了", "that's not right",
    "that is not right", "that's wrong", "that is wrong", "not quite", "i didn't say", "i did not say",
    "i never said", "no, i", "không đúng", "không phải", "tôi không nói", "не так", "я не говорил", "неверно",
)  # fmt: skip
# A keyword right after one of these is negated ("没什么麻烦", "not expensive", "không đắt").
# "Rarely" counts too: "很少点外卖" does not make delivery the main channel.
CJK_NEGATORS = ("不", "没", "无", "别", "未", "很少", "偶尔")
WORD_NEGATORS = frozenset({
    "no", "not", "never", "don't", "doesn't", "didn't", "isn't", "rarely", "seldom", "hardly", "không", "chẳng",
    "ít", "не", "нет", "редко",
})  # fmt: skip

# Counting words and classifiers: a number before one is a count or a period, not an amount ("一周", "3 times").
COUNTING_WORDS = (
    "周", "天", "日", "月", "年", "次", "个", "岁", "小时", "分钟", "号", "人", "口", "顿", "week", "weeks", "day",
    "days", "month", "months", "year", "years", "time", "times", "hour", "hours", "minute", "minutes", "people",
    "night", "nights", "meal", "meals", "晚", "餐", "张", "件", "份", "条", "本", "位", "家", "杯", "碗", "盘", "袋",
    "瓶", "盒", "道", "种",
)  # fmt: skip
NOT_NUMBERS = (
    "一般", "一起", "一下", "一直", "一定", "一些", "一样", "一点", "一边", "一向", "万一", "第一", "唯一", "统一",
    "十分", "千万", "两边",
)  # fmt: skip
