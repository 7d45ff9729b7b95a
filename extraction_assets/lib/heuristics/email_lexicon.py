"""The words the e-mail pack looks for, per language: each module's routing keywords (strong and weak), the
keywords of a record's attributes (direction, document type, interaction, offer type), the words that mark a
clause's part of a record, and the words of a sender that is not a person.

Phrases are matched on `normalize_for_match` text with `phrases.py`'s rules. Adding a language means adding its
phrases to each table here. Patterns of a fixed shape (a reference number, a promo code, "30% off") stay in the
pack beside the code that reads their groups.
"""

from __future__ import annotations

# Keywords per module: "strong" alone routes the message; "weak" needs company (the pack's `_<module>_applies`).
FINANCE_STRONG = (
    "invoice", "invoices", "receipt", "remittance", "payment received", "payment confirmation", "payment due",
    "amount due", "balance due", "past due", "overdue", "wire transfer", "bank transfer", "refund", "refunded",
    "billing statement", "statement of account", "credit note", "purchase order", "reimbursement", "please pay",
    "please remit", "hóa đơn", "hoá đơn", "thanh toán", "công nợ", "chuyển khoản", "biên lai", "hoàn tiền",
    "phiếu thu", "счет на оплату", "счёт на оплату", "оплата", "оплату", "发票", "付款", "收据", "退款",
)  # fmt: skip
FINANCE_WEAK = (
    "payment", "payments", "paid", "pay", "charge", "charged", "fee", "fees", "surcharge", "quote", "quotation",
    "deposit", "billing", "phụ phí", "báo giá", "chi phí", "стоимость", "费用",
)  # fmt: skip
CRM_STRONG = (
    "nice to meet you", "great meeting you", "introduce you", "introduction", "following up on", "follow up on our",
    "interested in your", "request a quote", "request for quote", "quote request", "schedule a call",
    "schedule a meeting", "set up a meeting", "set up a call", "book a demo", "new customer", "potential client",
    "giới thiệu", "hẹn gặp", "khách hàng mới", "xin báo giá", "встреча", "合作",
)  # fmt: skip
# crm's weak keywords come in two kinds; a relationship message names a party and an interaction.
CRM_PARTY = (
    "customer", "customers", "client", "clients", "partner", "partners", "partnership", "vendor", "supplier",
    "prospect", "proposal", "contract", "khách hàng", "đối tác", "nhà cung cấp", "hợp đồng", "hợp tác", "клиент",
    "договор", "客户",
)  # fmt: skip
CRM_INTERACTION = (
    "meeting", "meet", "call", "follow up", "follow-up", "demo", "contact", "let me know", "get back to",
    "catch up", "cuộc họp", "gặp", "gọi", "liên hệ", "звонок", "会议",
)  # fmt: skip
INTEL_STRONG = (
    "newsletter", "view in browser", "weekly digest", "daily digest", "market update",
    "industry news", "press release", "news release", "breaking news", "bản tin", "điểm tin", "рассылка",
    "новости", "简报", "新闻",
)  # fmt: skip
INTEL_WEAK = (
    "news", "unsubscribe", "report", "reported", "reports", "analysis", "article", "announced", "according to",
    "market", "markets", "industry", "survey", "research", "all rights reserved", "copyright", "tin tức",
    "thị trường", "báo cáo", "ngành", "отчет", "рынок", "报告", "市场",
)  # fmt: skip
PROMOTIONS_STRONG = (
    "promo code", "coupon", "discount code", "use code", "free shipping", "limited time", "offer ends",
    "sale ends", "shop now", "buy one get one", "flash sale", "giảm giá", "khuyến mãi", "ưu đãi", "mã giảm giá",
    "miễn phí vận chuyển", "mua 1 tặng 1", "скидка", "акция", "промокод", "折扣", "优惠", "促销",
)  # fmt: skip
PROMOTIONS_WEAK = (
    "sale", "offer", "deal", "deals", "save", "savings", "exclusive", "special offer", "free",
    "giảm", "tặng", "quà",
)  # fmt: skip
# Record attributes read from keywords: (value, phrases), first match in text order wins.
DIRECTION = {
    "incoming": ("refund", "refunded", "remittance", "credited", "we have paid", "we paid", "paid you",
                 "hoàn tiền", "возврат"),
    "outgoing": ("invoice", "amount due", "balance due", "payment due", "please pay", "please remit",
                 "charge", "fee", "surcharge", "phụ phí", "công nợ", "hóa đơn", "hoá đơn", "báo giá", "quote",
                 "quotation", "счет", "счёт", "发票"),
}  # fmt: skip
DOCUMENT_TYPE = {
    "invoice": ("invoice", "hóa đơn", "hoá đơn", "счет", "счёт", "发票"),
    "receipt": ("receipt", "biên lai", "phiếu thu", "收据"),
    "refund": ("refund", "refunded", "hoàn tiền", "退款"),
    "quote": ("quote", "quotation", "báo giá", "xin báo giá"),
    "statement": ("statement", "statement of account", "công nợ"),
    "payment": ("payment", "paid", "remittance", "transfer", "thanh toán", "chuyển khoản", "оплата", "付款"),
}  # fmt: skip
INTERACTION = {
    "quote_request": ("request a quote", "request for quote", "quote request", "xin báo giá", "pricing"),
    "meeting": ("meeting", "meet", "schedule a call", "call", "demo", "hẹn gặp", "cuộc họp", "gặp", "встреча"),
    "introduction": ("introduce you", "introduction", "nice to meet you", "giới thiệu"),
    "complaint": ("complaint", "disappointed", "khiếu nại", "phàn nàn", "жалоба"),
    "follow_up": ("following up", "follow up", "follow-up", "checking in"),
    "inquiry": ("interested in", "inquiry", "enquiry", "would like to know", "hỏi"),
}  # fmt: skip
OFFER_TYPE = {
    "coupon": ("promo code", "coupon", "discount code", "use code", "mã giảm giá", "промокод"),
    "free_shipping": ("free shipping", "miễn phí vận chuyển"),
    "bundle": ("buy one get one", "mua 1 tặng 1"),
    "free_trial": ("free trial", "dùng thử miễn phí"),
    "discount": ("discount", "giảm giá", "giảm", "скидка", "折扣"),
    "sale": ("sale", "flash sale", "khuyến mãi", "акция", "促销"),
}  # fmt: skip
# Words that mark a clause's part of a record: the total, a due date, an offer's end, a next step.
TOTAL_WORDS = ("total", "amount due", "balance due", "grand total", "tổng", "tổng cộng", "итого", "合计")
DUE_WORDS = (
    "due", "payable", "pay by", "payment by", "no later than", "hạn thanh toán", "hạn chót", "срок оплаты", "付款期限",
)  # fmt: skip
EXPIRY_WORDS = ("ends", "expires", "until", "valid through", "valid until", "hết hạn", "đến hết")
NEXT_STEP_WORDS = (
    "please", "could you", "can you", "let me know", "i will", "i'll", "we will", "we'll", "vui lòng", "xin",
    "nhờ", "sẽ",
)  # fmt: skip
# A sender's display name holding one of these is a team or a mailbox, not a person.
ROLE_WORDS = frozenset({
    "team", "desk", "support", "service", "services", "noreply", "no-reply", "info", "sales", "billing",
    "newsletter", "news", "notifications", "admin", "accounts", "customer", "marketing", "hr", "it",
})  # fmt: skip
