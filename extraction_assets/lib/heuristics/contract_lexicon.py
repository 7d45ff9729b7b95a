"""The words the contract reader looks for, per language (pre-screening: dictionaries and trigger words, no model).

Phrases are lower case and matched on the scan view (spaces, quotes and OCR look-alikes folded); a
trailing ``*`` marks a stem ("неустойк*" matches every case form), otherwise the phrase ends at a word
boundary. Adding a language means adding one ``Lexicon`` here and naming its script in ``LEXICONS``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "COUNTRY_OF_PROVINCE",
    "CURRENCIES",
    "EN",
    "FEDERAL_LAWS",
    "JURISDICTION_ALIASES",
    "LEXICONS",
    "RU",
    "Lexicon",
]


@dataclass(frozen=True)
class Lexicon:
    language: str
    day_first: bool  # how a numeric date such as 03/04/2026 is read
    title_words: tuple[str, ...]  # a document's title names its kind: "... agreement", "договор ..."
    kind_ends_title: bool  # ... last ("LICENSE AGREEMENT"), not first ("ДОГОВОР ПОСТАВКИ")
    amends: tuple[str, ...]  # a title naming an amendment: its dates are the amendment's, not the contract's
    title_cut: tuple[str, ...]  # where the preamble begins on the title's line: "... AGREEMENT This Agreement is"
    contract_types: dict[str, tuple[str, ...]]  # contract type -> phrases that name it
    header_end: tuple[str, ...]  # where the preamble (parties, date) ends and the terms begin
    entity_forms: tuple[str, ...]  # legal forms that mark a party's name
    party_roles: tuple[str, ...]  # "hereinafter referred to as", "именуемое в дальнейшем"
    name_continuations: tuple[str, ...]  # words a party's name may go on with: "and its Affiliates", "d/b/a"
    # words a party's definition may give it another name or its successors with ("together with its successors and
    # assigns", "d/b/a Time Life Music", "operating with the service name ..."): a reader may take them as the name's
    name_qualifiers: tuple[str, ...]
    agreement_date: tuple[str, ...]  # phrases right before the date the contract was made
    start_date: tuple[str, ...]  # phrases right before the date the contract takes effect
    start_defined: tuple[str, ...]  # a defined term right after the start date: '(the "Effective Date")'
    end_date: tuple[str, ...]  # phrases right before the date the contract ends
    period_start: tuple[str, ...]  # "from" in "from <date> to <date>": a period's start ...
    period_end: tuple[str, ...]  # ... and the words right before its end
    end_defined: tuple[str, ...]  # a defined term right after the end date: '(the "Expiration Date")'
    term_words: tuple[str, ...]  # an end date's sentence speaks of the contract's term
    recurring_periods: tuple[str, ...]  # ... and not of a year or quarter that recurs in it ("Contract Year")
    amount: tuple[str, ...]  # phrases shortly before the contract's total amount
    governing_law: tuple[str, ...]  # phrases that open a governing-law clause, the one saying it governs first
    law_of: tuple[str, ...]  # phrases right before the jurisdiction's name ("laws of the State of")
    not_governing_law: tuple[str, ...]  # "organized under the laws of": a party's origin, not the contract's law
    this_contract: tuple[str, ...]  # how the contract speaks of itself ("this agreement", "настоящий договор")
    # words before another contract's capitalized title ("pursuant to the Subscription Agreement dated ...", "that
    # certain Note Purchase Agreement"): a date after it is that contract's; none for a language whose titles are
    # not capitalized words before the kind
    other_contract: tuple[str, ...]
    date_terms: tuple[str, ...]  # a defined term naming one of the contract's own dates: '(the "Effective Date")'
    signatures: tuple[str, ...]  # where the signature block begins (its dates say when the contract was signed)
    signed_on: tuple[str, ...]  # phrases right before the date of signing, anywhere: "Signed and effective this"
    clauses: dict[str, tuple[str, ...]]  # clause flag field -> phrases that show the clause
    convenience: tuple[str, ...]  # a termination clause that says it needs no cause
    weak_convenience: tuple[str, ...]  # ... that needs none, by implication ("at any time")
    for_cause: tuple[str, ...]  # a termination sentence naming a breach or default is for cause
    aftermath: tuple[str, ...]  # a sentence about what follows a termination grants no right to terminate ...
    terminate_right: tuple[str, ...]  # ... unless it grants one too ("may terminate"; "upon termination" comes after)
    notice_only: tuple[str, ...]  # termination on notice alone ("upon sixty (60) days' written notice") needs no cause
    conditions: tuple[str, ...]  # a termination right that waits on an event ("if", "in the event") needs a cause


# fmt: off
EN = Lexicon(
    language="en",
    day_first=False,
    title_words=("agreement", "contract", "amendment", "addendum", "memorandum of understanding", "license"),
    kind_ends_title=True,
    amends=("amendment", "amended", "addendum", "supplement*"),
    title_cut=("by and between", "between", "dated", "made and entered", "this"),
    contract_types={
        "supply": ("supply agreement", "supply contract", "manufacturing agreement", "manufacturing and supply"),
        "sale": ("purchase agreement", "sale agreement", "sales agreement", "purchase and sale", "stock purchase"),
        "services": (
            "services agreement", "service agreement", "outsourcing", "hosting", "maintenance", "consulting",
            "consultancy", "support agreement", "management agreement", "processing agreement",
        ),
        "license": ("license", "licence", "licensing"),
        "distribution": ("distribution", "distributor", "reseller", "resale", "dealer"),
        "agency": ("agency agreement", "agent agreement", "sales representative", "commission agreement"),
        "marketing": ("marketing", "promotion", "sponsorship", "endorsement", "advertising"),
        "cooperation": ("cooperation", "collaboration", "alliance", "joint venture", "partnership"),
        "transportation": ("transportation", "transport agreement", "carriage", "shipping", "freight"),
        "lease": ("lease", "rental agreement", "sublease"),
        "loan": ("loan agreement", "credit agreement", "promissory note", "security agreement"),
        "employment": ("employment agreement", "employment contract"),
        "nda": ("non-disclosure", "nondisclosure", "confidentiality agreement"),
        "construction": ("construction contract", "construction agreement", "development agreement"),
    },
    header_end=("whereas", "recitals", "now, therefore", "now therefore", "background", "1. definitions"),
    entity_forms=(
        "inc", "inc.", "incorporated", "llc", "l.l.c.", "ltd", "ltd.", "limited", "corporation", "corp", "corp.",
        "company", "co.", "l.p.", "lp", "llp", "n.a.", "gmbh", "s.a.", "plc", "ag", "b.v.", "n.v.", "pty", "s.p.a.",
    ),
    party_roles=("hereinafter referred to as", "hereinafter called", "hereinafter", "referred to as"),
    agreement_date=(
        "dated as of", "dated", "made and entered into as of", "made and entered into on", "made and entered into",
        "entered into as of", "entered into on", "entered on", "made as of", "made on", "made this", "executed on",
        "date:", "as of",
    ),
    start_date=(
        "effective as of", "effective date", "effective on", "effective from", "effective this",
        "shall become effective on", "commence on", "commences on", "commencing on", "commencement date",
        "shall commence on", "beginning on",
    ),
    start_defined=("effective date", "commencement date"),
    end_date=(
        "expire on", "expires on", "expiring on", "shall expire on", "terminate on", "terminates on", "until",
        "through", "ending on", "end on", "expiration date", "expiring", "expiry date",
        "termination date",
    ),
    period_start=("from",),
    period_end=("to", "through", "thru", "until"),
    end_defined=("expiration date", "expiry date", "termination date"),
    term_words=("term", "expir*", "termination date"),
    recurring_periods=("calendar year", "calendar quarter", "contract year", "fiscal year", "fiscal quarter",
                       "lease year", "year\" means", "year\" shall mean", "quarter\" means"),
    amount=(
        "total contract price", "total price", "total amount", "total consideration", "aggregate amount",
        "aggregate purchase price", "purchase price", "contract price", "in the amount of", "a sum of",
        "the sum of", "fee of", "total fees", "consideration of",
    ),
    governing_law=("govern*", "construed", "interpreted", "in accordance with the law*", "according to the law*",
                   "controlled by", "applicable law", "shall apply", "applies"),
    law_of=("laws of the state of", "laws of the commonwealth of", "laws of the province of", "law of the state of",
            "laws of the", "laws of", "law of the", "law of", "legislation of the", "legislation of"),
    not_governing_law=("organized under", "organised under", "incorporated under", "existing under", "standing under",
                       "formed under", "chartered under"),
    signatures=("in witness whereof", "signed and effective", "authorized signature", "signature", "/s/", "by:"),
    name_continuations=("and its", "and their", "or its", "together with", "including its", "on behalf of", "d/b/a",
                        "dba", "f/k/a", "formerly", "doing business as", "acting through", "a division of"),
    name_qualifiers=("successors", "assigns", "d/b/a", "doing business as", "trading as", "operating with",
                     "operating under", "a division of", "f/k/a", "formerly"),
    signed_on=("signed and effective this", "signed this", "executed this", "signed on", "executed on"),
    this_contract=("this agreement", "this contract", "the agreement", "this amendment", "hereunder", "hereof"),
    other_contract=("the", "a", "an", "that certain", "certain", "such", "said", "to", "under", "of", "pursuant to"),
    date_terms=("effective*", "agreement", "commencement", "execution", "amendment", "expir*", "termination", "date*",
                "term"),
    clauses={
        # a penalty the contract sets, not one it mentions ("under penalty of perjury", "fines or penalties")
        "penalty_clause": ("liquidated damages", "late fee", "late charge", "as a penalty", "pay a penalty",
                           "a penalty of", "penalty equal to", "penalty in the amount of", "penalty fee"),
        "termination_clause": (
            "terminate this agreement", "terminate the agreement", "may terminate", "right to terminate",
            "termination of this agreement", "terminate this contract", "termination for convenience",
            "may be terminated",
        ),
        "arbitration_clause": ("arbitration", "arbitrator*", "arbitral"),
    },
    convenience=("for convenience", "without cause", "for any reason", "for no reason", "non-cause"),
    weak_convenience=("at any time", "sole discretion"),
    for_cause=("breach*", "default*", "fail*", "insolven*", "bankrupt*", "with cause", "for cause", "mutual consent",
               "mutual agreement", "mutual written", "mutually agree*", "change of control", "change in control"),
    aftermath=("surviv*", "upon termination", "upon the termination", "upon any termination", "upon expiration",
               "on termination", "on the termination", "on any termination", "on expiration",
               "effect of termination", "effects of termination", "after termination", "following termination",
               "following the termination", "following any termination",
               "expiration or termination", "termination or expiration", "in the event of termination"),
    terminate_right=("may terminate", "may be terminated", "right to terminate", "entitled to terminate",
                     "terminate this agreement", "terminate the agreement", "terminate this contract"),
    notice_only=("days notice", "days' notice", "days written notice", "days' written notice",
                 "days prior written notice", "days' prior written notice", "day prior written notice",
                 "day written notice", "day notice", "day's notice", "day's written notice",
                 "day's prior written notice", "months notice", "months' notice",
                 "months written notice", "months' written notice", "months prior written notice",
                 "months' prior written notice", "following a written notice",
                 # the notice's lead time said without "written": "90 days' prior notice", "3 months advance notice"
                 "days prior notice", "days' prior notice", "days advance notice", "days' advance notice",
                 "days advance written notice", "days' advance written notice", "months prior notice",
                 "months' prior notice", "months advance notice", "months' advance notice",
                 "months advance written notice", "months' advance written notice"),
    conditions=("if", "in the event", "unless", "upon the occurrence", "provided that", "in case", "should"),
)

RU = Lexicon(
    language="ru",
    day_first=True,
    title_words=("договор", "контракт", "соглашение", "дополнительное соглашение"),
    kind_ends_title=False,
    amends=("дополнительное соглашение", "изменени*"),
    title_cut=("между", "настоящий", "заключили"),
    contract_types={
        "supply": ("договор поставки", "контракт поставки", "поставки"),
        "sale": ("купли-продажи", "купли продажи"),
        "services": ("оказания услуг", "возмездного оказания", "на оказание услуг", "абонентского обслуживания"),
        "construction": ("подряда", "строительного подряда", "подрядных работ"),
        "lease": ("аренды", "субаренды", "лизинга"),
        "loan": ("займа", "кредитный договор", "кредита"),
        "license": ("лицензионный", "лицензионного"),
        "distribution": ("дилерский", "дистрибьюторский", "дистрибуции"),
        "agency": ("агентский", "поручения", "комиссии"),
        "employment": ("трудовой договор", "трудового договора"),
        "nda": ("о неразглашении", "о конфиденциальности"),
        "transportation": ("перевозки", "транспортной экспедиции", "экспедиции"),
        "cooperation": ("о сотрудничестве", "о совместной деятельности"),
    },
    header_end=("1. предмет", "предмет договора", "1. общие положения", "общие положения", "1. термины"),
    entity_forms=(
        "ооо", "оао", "зао", "пао", "ао", "ип", "чуп", "уп", "одо", "сооо", "иооо", "чтуп", "тоо", "гуп", "муп",
        "фгуп", "общество с ограниченной ответственностью", "открытое акционерное общество",
        "закрытое акционерное общество", "публичное акционерное общество", "акционерное общество",
        "индивидуальный предприниматель", "частное унитарное предприятие", "унитарное предприятие",
    ),
    party_roles=("именуем*", "в дальнейшем"),
    agreement_date=("г.", "от", "дата заключения", "дата:"),
    start_date=("вступает в силу с", "действует с", "срок действия договора с", "с момента", "начало действия"),
    start_defined=("дата вступления в силу",),
    end_date=("по", "до", "действует до", "срок действия до", "окончание действия"),
    period_start=("с",),
    period_end=("по", "до"),
    end_defined=("дата окончания",),
    term_words=("срок*", "действ*"),
    recurring_periods=(),
    amount=(
        "сумма договора", "цена договора", "общая сумма", "общая стоимость", "стоимость", "составляет",
        "на сумму", "в размере", "цена",
    ),
    governing_law=("регулиру*", "применим* прав*", "применяется право", "подлежит применению"),
    law_of=("законодательством", "законодательству", "законодательства", "правом", "право"),
    not_governing_law=("зарегистрирован*",),
    signatures=("подписи сторон", "реквизиты и подписи", "адреса и реквизиты", "подписи"),
    name_continuations=(),
    name_qualifiers=(),
    signed_on=("подписан*", "дата подписания"),
    this_contract=("настоящ* договор*", "договор*", "отношени* сторон", "настоящ* контракт*", "настоящ* соглашени*"),
    other_contract=(),
    date_terms=("дат*", "срок*", "договор*"),
    clauses={
        "penalty_clause": ("неустойк*", "штраф*", "пени", "пеня", "пеню"),
        "termination_clause": ("расторгн*", "расторжени*", "односторонн* отказ*", "отказаться от исполнения"),
        "arbitration_clause": ("арбитражн*", "третейск*", "мкас", "международн* арбитраж*"),
    },
    convenience=("без объяснения причин", "без указания причин"),
    weak_convenience=("в любое время", "по своему усмотрению"),
    for_cause=("нарушени*", "неисполнени*", "ненадлежащ*"),
    aftermath=("после расторжени*", "при расторжени*"),
    terminate_right=("вправе расторгнуть", "может быть расторгнут", "право расторгнуть"),
    notice_only=("уведомив*", "предупредив*", "письменного уведомления за"),
    conditions=("если", "в случае", "при условии"),
)

# fmt: on
LEXICONS: dict[str, Lexicon] = {"en": EN, "ru": RU}

# Currency tokens (matched on the scan view) and their ISO codes; longer tokens first so "бел. руб." wins
# over "руб.". Plain "руб." is the Russian rouble unless the text says Belarusian.
# fmt: off
CURRENCIES: tuple[tuple[str, str], ...] = (
    ("белорусских рубл*", "BYN"), ("белорусский рубл*", "BYN"), ("бел. руб*", "BYN"), ("бел.руб*", "BYN"),
    ("byn", "BYN"), ("byr", "BYN"), ("российских рубл*", "RUB"), ("рубл*", "RUB"), ("руб.", "RUB"), ("руб", "RUB"),
    ("rub", "RUB"), ("rur", "RUB"), ("₽", "RUB"), ("долларов сша", "USD"), ("доллар*", "USD"), ("usd", "USD"),
    ("us$", "USD"), ("$", "USD"), ("u.s. dollars", "USD"), ("dollars", "USD"), ("евро", "EUR"), ("eur", "EUR"),
    ("euro*", "EUR"), ("€", "EUR"), ("gbp", "GBP"), ("£", "GBP"), ("pounds sterling", "GBP"), ("cny", "CNY"),
    ("rmb", "CNY"), ("юан*", "CNY"), ("kzt", "KZT"), ("тенге", "KZT"),
)
# fmt: on

# Short names of jurisdictions, spelled out so one place has one name.
# A federal law a contract names beside a state's ("the laws of the United States of America and of the State of
# Texas", "the State of Texas, U.S.A."): the state's is the contract's governing law.
FEDERAL_LAWS = frozenset({"united states", "united states of america"})

JURISDICTION_ALIASES: dict[str, str] = {
    "prc": "People's Republic of China",
    "p.r.c": "People's Republic of China",
    "usa": "United States",
    "u.s": "United States",
    "u.s.a": "United States",
    "united states of america": "United States",
    "uk": "United Kingdom",
    "u.k": "United Kingdom",
    "english": "England",
    "german": "Germany",
    "french": "France",
    "swiss": "Switzerland",
    "dutch": "Netherlands",
    "рф": "Российская Федерация",
    "рб": "Республика Беларусь",
}

# A province named without its country ("the laws of the Province of Ontario") is named as when both are printed
# ("Ontario, Canada"): one place, one name. A state of the United States is named alone, as contracts name it.
# fmt: off
COUNTRY_OF_PROVINCE: dict[str, str] = dict.fromkeys((
    "alberta", "british columbia", "manitoba", "new brunswick", "newfoundland and labrador", "nova scotia", "ontario",
    "prince edward island", "quebec", "québec", "saskatchewan", "northwest territories", "nunavut", "yukon",
), "Canada")
# fmt: on
