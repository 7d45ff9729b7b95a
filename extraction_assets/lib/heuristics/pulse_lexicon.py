"""The words the pulse pack looks for (commitments, risks, decision requests), per language, and the words that
classify a risk, weigh its severity, fill an item's slots and negate a keyword.

Phrases are matched on `normalize_for_match` text with `phrases.py`'s rules: "a ... b" is "a", then up to 60
characters of the same clause, then "b". Adding a language means adding its phrases to each table here.
"""

from __future__ import annotations

# Matches this pattern's text instead of a literal phrase; reported as the matched words ("by friday").
DEADLINE_KEYWORD = "by <deadline>"
DEADLINE_RE = (
    r"by\s+(?:(?:next\s+|this\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri)"
    r"|tomorrow|tonight|today|eod|eow|eom|noon|end\s+of\s+(?:the\s+|this\s+|next\s+)?(?:day|week|month)"
    r"|next\s+(?:week|month)|\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{4}-\d{1,2}-\d{1,2}"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2})"
)

# Keyword dictionaries. "a ... b" means "a", then up to 60 characters, then "b" (all within one clause).
COMMITMENT_PATTERNS: dict[str, tuple[str, ...]] = {
    "vi": (
        "sẽ", "đảm bảo", "nhận việc", "nhận làm", "hứa", "cam kết", "hoàn thành trước", "xong trước",
        "gửi ... trước", "nộp ... trước", "giao ... trước", "hạn chót", "chịu trách nhiệm",
    ),
    "en": (
        "i will", "i'll", "we will", "we'll", "will send", "will deliver", "will finish", "will complete",
        "i am going to", "i'm going to", "we are going to", "we're going to", "plan to", "promise", "promised",
        "commit to", "committed to", "i commit", DEADLINE_KEYWORD, "deadline", "due by", "due on",
    ),
    "zh": ("我会", "我们会", "保证", "承诺", "负责"),
    "ru": (
        "я сделаю", "сделаю", "я подготовлю", "подготовлю", "я отправлю", "отправлю", "я проверю", "я организую",
        "я позвоню", "обещаю", "беру на себя", "гарантирую",
    ),
}  # fmt: skip
RISK_PATTERNS: dict[str, tuple[str, ...]] = {
    "vi": (
        "hủy", "hủy đơn", "khách hủy", "hết tiền", "không có tiền", "vốn hết", "hết vốn", "cách ly", "bị cách ly",
        "bị thương", "nhập viện", "bị phạt", "phạt tiền", "tiền phạt", "chờ hàng", "chờ vật tư", "chờ linh kiện",
        "chờ giao", "chờ về", "quá tải", "không đủ nhân sự", "thiếu người", "thiếu nhân sự", "chậm", "trễ",
        "trễ hạn", "lo ngại", "rủi ro", "khiếu nại", "phàn nàn", "thiếu hàng", "hết hàng", "sự cố",
    ),
    "en": (
        "delay", "delays", "delayed", "late", "overdue", "at risk", "risk", "risks", "shortage", "out of stock",
        "cancel", "cancels", "cancelled", "canceled", "cancellation", "penalty", "penalties", "out of cash",
        "cash crunch", "blocked", "blocker", "short-staffed", "short staffed", "understaffed", "overloaded",
        "complaint", "complaints", "complained", "behind schedule", "missed the deadline", "miss the deadline",
        "waiting for parts",
        "waiting for supplies", "waiting on the supplier", "injured", "hospitalized", "quarantine", "quarantined",
    ),
    "zh": ("延迟", "推迟", "取消", "罚款", "缺货", "风险", "投诉", "资金紧张"),
    "ru": (
        "задержка", "задерживает", "задерживается", "просрочка", "штраф", "штрафом", "отмена", "отменой",
        "нехватка", "не хватает", "риск", "срыв", "сорвать", "перегружена", "жалоба", "претензия",
        "кассовый разрыв",
    ),
}  # fmt: skip
DECISION_PATTERNS: dict[str, tuple[str, ...]] = {
    "vi": (
        "cần anh quyết định", "cần chị quyết định", "cần anh/chị quyết định", "cần anh chị quyết định",
        "cần sếp quyết định", "cần quyết định", "xin ý kiến", "cho ý kiến", "duyệt", "phê duyệt", "chờ duyệt",
        "xin phép", "không có quyền", "không được phép", "không thẩm quyền", "không có thẩm quyền",
        "vượt thẩm quyền", "có nên",
    ),
    "en": (
        "need your approval", "need approval", "needs approval", "need a decision", "needs a decision",
        "need your decision", "need your input", "please decide", "please approve", "should we", "approve",
        "approval", "sign off", "sign-off", "your call", "need permission", "not authorized", "not allowed",
        "beyond my authority",
    ),
    "zh": ("请批准", "审批", "批准", "请决定", "需要您决定"),
    "ru": (
        "прошу согласовать", "согласовать", "прошу утвердить", "утвердить", "нужно ваше решение", "нужно решение",
        "прошу разрешения",
    ),
}  # fmt: skip
KEYWORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "commitment": COMMITMENT_PATTERNS,
    "risk": RISK_PATTERNS,
    "decision": DECISION_PATTERNS,
}

# Keywords that on their own are an explicit signal (a promise, a lost order, an explicit ask).
STRONG_KEYWORDS: dict[str, frozenset[str]] = {
    "commitment": frozenset({
        "cam kết", "hứa", "đảm bảo", "nhận việc", "hoàn thành trước", "gửi ... trước", "nộp ... trước",
        "giao ... trước", "promise", "promised", "commit to", "committed to", "i commit", "承诺", "保证", "обещаю",
        "беру на себя", "гарантирую",
    }),
    "risk": frozenset({
        "hủy đơn", "khách hủy", "hết tiền", "không có tiền", "vốn hết", "hết vốn", "nhập viện", "bị thương",
        "bị phạt", "phạt tiền", "tiền phạt", "quá tải", "không đủ nhân sự", "out of cash", "cancellation",
        "cancelled", "canceled", "penalty", "penalties", "blocked", "overdue", "at risk", "short-staffed",
        "shortage", "out of stock", "hospitalized", "injured", "missed the deadline", "罚款", "取消", "штраф",
        "штрафом", "отменой", "отмена", "срыв", "сорвать", "кассовый разрыв",
    }),
    "decision": frozenset({
        "cần anh quyết định", "cần chị quyết định", "cần anh/chị quyết định", "cần anh chị quyết định",
        "cần sếp quyết định", "xin ý kiến", "phê duyệt", "vượt thẩm quyền", "không thẩm quyền",
        "không có thẩm quyền", "không có quyền", "need your approval", "need a decision", "needs a decision",
        "need your decision", "please decide", "please approve", "beyond my authority", "请批准", "请决定",
        "需要您决定", "прошу согласовать", "прошу утвердить", "нужно ваше решение",
    }),
}  # fmt: skip
# Future-tense markers: together with a due date they make "will ... by <date>" a strong commitment.
FUTURE_MARKERS = frozenset({
    "sẽ", "i will", "i'll", "we will", "we'll", "will send", "will deliver", "will finish", "will complete",
    "i am going to", "i'm going to", "we are going to", "we're going to", "我会", "我们会",
})  # fmt: skip

# Future tense and a date alone promise nothing: beside a problem ("we will run out of cash by the 20th", "we'll miss
# the deadline") they foretell a risk. A commitment needs a promise of its own ("will send", "due by", "promise").
FORETELLING = frozenset({
    "sẽ", "i will", "i'll", "we will", "we'll", "i am going to", "i'm going to", "we are going to", "we're going to",
    "我会", "我们会", DEADLINE_KEYWORD,
})  # fmt: skip

# Risk classification: the keyword decides first (priority cash > customer > delivery > operations),
# context words in the clause decide for generic keywords such as "trễ" or "delay".
RISK_TYPE_PRIORITY = ("cash", "customer", "delivery", "operations")
RISK_TYPE_BY_KEYWORD: dict[str, tuple[str, ...]] = {
    "cash": (
        "hết tiền", "không có tiền", "vốn hết", "hết vốn", "bị phạt", "phạt tiền", "tiền phạt", "penalty",
        "penalties", "out of cash", "cash crunch", "罚款", "资金紧张", "штраф", "штрафом", "кассовый разрыв",
    ),
    "customer": (
        "hủy", "hủy đơn", "khách hủy", "khiếu nại", "phàn nàn", "cancel", "cancels", "cancelled", "canceled",
        "cancellation", "complaint", "complaints", "complained", "取消", "投诉", "отмена", "отменой", "жалоба",
        "претензия",
    ),
    "delivery": (
        "chờ hàng", "chờ vật tư", "chờ linh kiện", "chờ giao", "chờ về", "thiếu hàng", "hết hàng", "shortage",
        "out of stock", "waiting for parts", "waiting for supplies", "waiting on the supplier", "缺货", "нехватка",
    ),
    "operations": (
        "cách ly", "bị cách ly", "bị thương", "nhập viện", "quá tải", "không đủ nhân sự", "thiếu người",
        "thiếu nhân sự", "sự cố", "short-staffed", "short staffed", "understaffed", "overloaded", "injured",
        "hospitalized", "quarantine", "quarantined", "не хватает", "перегружена",
    ),
}  # fmt: skip
RISK_TYPE_HINTS: dict[str, tuple[str, ...]] = {
    "cash": (
        "tiền", "vốn", "dòng tiền", "thanh toán", "công nợ", "phạt", "cash", "payment", "payments", "оплата",
        "оплаты", "деньги", "付款", "资金",
    ),
    "customer": ("khách", "khách hàng", "customer", "customers", "client", "clients", "клиент", "клиента", "客户"),
    "delivery": (
        "giao hàng", "đơn hàng", "lô hàng", "nhập hàng", "hàng về", "vận chuyển", "vật tư", "linh kiện",
        "nhà cung cấp", "shipment", "shipping", "delivery", "deliveries", "supplier", "suppliers", "parts",
        "materials", "container", "logistics", "поставка", "поставки", "поставщик", "поставщика", "отгрузка",
        "отгрузку", "перевозчик", "供应商", "交付",
    ),
}  # fmt: skip
SEVERITY_WORDS: dict[str, tuple[str, ...]] = {
    "critical": (
        "khẩn cấp", "nguy cấp", "rất nghiêm trọng", "cực kỳ nghiêm trọng", "critical", "emergency", "紧急",
    ),
    "high": ("gấp", "rất gấp", "nghiêm trọng", "urgent", "urgently", "severe", "serious", "asap", "严重"),
    "low": ("nhẹ", "hơi", "một chút", "chút xíu", "minor", "slight", "slightly", "a bit", "a little"),
}  # fmt: skip

# Pulse question words that mark the answer slot each item type naturally belongs to.
SLOT_WORDS: dict[str, tuple[str, ...]] = {
    "commitment": (
        "plan", "plans", "commit", "commitment", "commitments", "will you", "next week", "this week", "tomorrow",
        "goal", "goals", "kế hoạch", "cam kết", "sẽ làm", "dự định", "mục tiêu", "tuần tới", "tuần sau", "ngày mai",
        "计划", "打算", "сделаете", "план", "планы",
    ),
    "risk": (
        "problem", "problems", "blocker", "blockers", "blocked", "issue", "issues", "risk", "risks", "concern",
        "concerns", "challenge", "challenges", "worry", "worried", "vướng", "vướng mắc", "khó khăn", "vấn đề",
        "rủi ro", "trở ngại", "lo ngại", "lo lắng", "sự cố", "阻碍", "风险", "问题", "риски", "мешает", "проблемы",
    ),
    "decision": (
        "need", "needs", "ask", "help", "support", "decide", "decision", "decisions", "approve", "approval",
        "cần", "hỗ trợ", "giúp", "quyết định", "xin ý kiến", "đề xuất", "duyệt", "phê duyệt", "决定", "批准",
        "решение", "нужно",
    ),
}  # fmt: skip

# A risk/commitment keyword right after a negation ("không trễ", "no delay", "not at risk") is not a signal.
NEGATORS = frozenset({
    "không", "ko", "k", "chẳng", "chả", "no", "not", "never", "without", "isn't", "aren't", "wasn't",
    "weren't", "don't", "doesn't", "didn't", "won't", "hasn't", "haven't", "没有", "不", "не", "нет", "без",
})  # fmt: skip
NEGATION_FILLERS = frozenset({
    "có", "bị", "hề", "gì", "is", "are", "was", "were", "be", "been", "any", "a", "an", "major", "big", "much",
    "the",
})  # fmt: skip
