"""Checksum-validated numbers: payment cards, IBANs, US SSNs and national ids (China, Russia, Vietnam).

Every finder pairs a shape with a validation step, so look-alikes (order numbers, timestamps, amounts)
stay readable: cards need Luhn and a known issuer range, IBANs mod-97 and their country's length, SSNs
a valid area/group/serial, national ids their own check digits (python-stdnum where it has them).
Where a number carries no check digit (Vietnam's citizen id) or a weak one, a context word is required.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum import iban as std_iban
from stdnum import luhn
from stdnum.cn import ric as cn_ric
from stdnum.iso7064 import mod_97_10
from stdnum.ru import inn as ru_inn
from stdnum.us import ssn as std_ssn

from extraction_assets.lib.pii.scan import Hit, Scan, digits_of, labelled_business_id, near, squash

# A pattern opens with the digit it needs and tests what stands before it with a lookbehind placed after that digit
# ("\d(?<![0-9A-Za-z]\d)" for "(?<![0-9A-Za-z])\d"): the same test, but the regex engine skips from digit to digit
# instead of trying the whole pattern at every position (half the time of these patterns). Such a pattern is searched
# from each number stretch's first digit on (`Scan.numbers`' lead 0); the IBAN's, from its country code and a
# separator before the check digits (lead 3).

# --- payment cards -----------------------------------------------------------------------------------------------

# (lowest prefix, highest prefix, allowed lengths): published issuer ranges (IIN) of the major networks.
_ISSUERS: tuple[tuple[str, str, frozenset[int]], ...] = (
    ("4", "4", frozenset({13, 16, 19})),  # Visa
    ("51", "55", frozenset({16})),  # Mastercard
    ("2221", "2720", frozenset({16})),  # Mastercard 2-series
    ("34", "34", frozenset({15})),  # American Express
    ("37", "37", frozenset({15})),
    ("300", "305", frozenset(range(14, 20))),  # Diners Club
    ("36", "36", frozenset(range(14, 20))),
    ("38", "39", frozenset(range(16, 20))),
    ("3528", "3589", frozenset(range(16, 20))),  # JCB
    ("1800", "1800", frozenset({15})),  # JCB 15-digit
    ("2131", "2131", frozenset({15})),
    ("1", "1", frozenset({15})),  # UATP
    ("2200", "2204", frozenset(range(16, 20))),  # Mir
    ("50", "50", frozenset(range(12, 20))),  # Maestro
    ("56", "69", frozenset(range(12, 20))),  # Maestro, Discover, UnionPay, RuPay
    ("9704", "9704", frozenset({16, 19})),  # NAPAS (Vietnam)
    ("9792", "9792", frozenset({16})),  # Troy
)
# A word saying "card" admits PANs outside the issuer table; Maestro's 12-digit PANs are as common as any order
# number, so they need it in any case.
_CARD_CONTEXT = re.compile(
    r"(?i)\b(?:cards?|credit|debit|visa|master[^\S\n]?card|maestro|amex|american[^\S\n]+express|discover|jcb"
    r"|diners|unionpay|cc|pan|cvv|cvc|atm|pay|paid|payment|charged?|billing|billed|expir\w*)\b|thẻ|карт|卡"
)
_SHORT_PAN = 12
_CONTEXT_BEFORE = 60
_CONTEXT_AFTER = 30

_CARD = re.compile(
    r"\d(?<![0-9A-Za-z_.,]\d)(?:\d{11,18}"  # contiguous
    r"|\d{3}(?P<s>[ .-])\d{4}(?P=s)\d{4}(?P=s)\d{1,4}(?:(?P=s)\d{3})?"  # 4-4-4-4(-3), 4-4-4-1
    r"|\d{3}(?P<t>[ .-])\d{6}(?P=t)\d{4,5}"  # Amex / Diners 4-6-5, 4-6-4
    r")(?![0-9A-Za-z_]|[.,]\d)"
)
_CARD_SEPARATOR = re.compile(r"[ .-]")
# A card broken by a line wrap: four-digit groups with one or more separators replaced by a line break, or a
# contiguous run split by one (that form is as likely two numbers on two lines, so it needs a card word).
_WRAP = r"[^\S\n]*\r?\n[^\S\n]*"
_WRAP_REACH = 24  # a card's digits and separators on either side of the break
# A line break with a digit (or any other character than ASCII: `str.isdigit` takes superscripts and other digits too)
# among the three characters before it, after spaces and carriage returns, and among the three after it, after spaces:
# where a card can be wrapped (`find_cards` tests each exactly). It opens with the line break, which the engine finds
# fast; looking at every line break of the number stretches in Python took most of the card search's time.
# The class is written as what it leaves out (ASCII but its digits): the same characters as `[\d\x80-\U0010ffff]`
# (every other Unicode digit lies above \x80), but that form's range made `re` fill a table of the 65,536 BMP
# characters once per use: four uses, about 8 ms of the 49 that loading the detectors cost a process.
_DIGIT_OR_OTHER = r"[^\x00-/:-\x7f]"
_DIGITS_AROUND_BREAK = re.compile(
    rf"\n(?:(?<={_DIGIT_OR_OTHER}\n)|(?<={_DIGIT_OR_OTHER}[ \r]\n)|(?<={_DIGIT_OR_OTHER}[ \r][ \r]\n))"
    rf"(?=[ ]{{0,2}}{_DIGIT_OR_OTHER})"
)
_CARD_ACROSS_WRAP = re.compile(
    rf"(?<![0-9A-Za-z_.,])(?:(?:\d{{4}}(?:[ -]|{_WRAP})){{3}}\d{{1,4}}|\d{{4,15}}\r?\n\d{{1,15}})"
    r"(?![0-9A-Za-z_]|[.,]\d)"
)


def is_card_number(digits: str, card_context: bool = False) -> bool:
    """A Luhn-valid PAN; one repeated digit is never issued.

    Without a card word nearby it must also lie in a known issuer range with that range's length, and a
    12-digit PAN needs the word in any case.
    """
    if not 12 <= len(digits) <= 19 or len(set(digits)) == 1 or not luhn.is_valid(digits):
        return False
    if len(digits) == _SHORT_PAN and not card_context:
        return False
    issued = any(lo <= digits[: len(lo)] <= hi and len(digits) in lengths for lo, hi, lengths in _ISSUERS)
    return issued or (card_context and digits[0] != "0")


def find_cards(scan: Scan) -> list[Hit]:
    hits: list[Hit] = []
    text = scan.text
    pos = 0
    while (m := scan.next_number(_CARD, pos, lead=0, digits=12)) is not None:
        start, end = m.span()
        value = m.group()
        digits = digits_of(value)
        context = near(_CARD_CONTEXT, text, start, end, _CONTEXT_BEFORE, _CONTEXT_AFTER)
        if not is_card_number(digits, context) and m.group("s") and len(digits) == 19:
            value = value[:-4]  # a 4-4-4-4 card followed by three more digits that belong to something else
            end -= 4
            digits = digits[:-3]
        if is_card_number(digits, context) and not labelled_business_id(text, start):
            hits.append(Hit("CREDIT_CARD", start, end, 1.0 if context else 0.95, value, digits))
            pos = end
        else:
            # A failed grouped candidate may have swallowed the first group of a real card ("4567 4111 1111 1111
            # 1111"): retry from its second group instead of skipping the whole run.
            gap = _CARD_SEPARATOR.search(value)
            pos = start + gap.end() if gap else end
    for lo, hi in scan.number_stretches:
        for brk in wrap_breaks(text, lo, hi):
            hits.extend(_cards_across_wrap(text, brk))
    return hits


def wrap_breaks(text: str, lo: int, hi: int) -> Iterator[int]:
    """The line breaks in `text[lo:hi]` a card can be wrapped at: a digit among the three characters before one, after
    spaces and carriage returns, and among the three after it, after spaces."""
    for wrap in _DIGITS_AROUND_BREAK.finditer(text, lo, min(len(text), hi + 3)):  # it reads 3 characters after one
        brk = wrap.start()
        if brk >= hi:
            return
        before, after = text[max(0, brk - 3) : brk].rstrip(" \r"), text[brk + 1 : brk + 4].lstrip(" ")
        if before[-1:].isdigit() and after[:1].isdigit():
            yield brk


def _cards_across_wrap(text: str, brk: int) -> list[Hit]:
    """Cards whose digits run across the line break at `brk`."""
    hits: list[Hit] = []
    for m in _CARD_ACROSS_WRAP.finditer(text, max(0, brk - _WRAP_REACH), min(len(text), brk + _WRAP_REACH)):
        value = m.group()
        if not m.start() < brk < m.end():
            continue  # found by the one-line pattern, or another break's
        digits = digits_of(value)
        if not 12 <= len(digits) <= 19 or not luhn.is_valid(digits):
            continue  # the cheap checks first: most digits around a break are two numbers on two lines
        context = near(_CARD_CONTEXT, text, m.start(), m.end(), _CONTEXT_BEFORE, _CONTEXT_AFTER)
        grouped = _CARD_SEPARATOR.search(value) is not None or value.count("\n") > 1 or len(value.split()[0]) == 4
        if (grouped or context) and is_card_number(digits, context) and not labelled_business_id(text, m.start()):
            hits.append(Hit("CREDIT_CARD", m.start(), m.end(), 1.0 if context else 0.9, value, digits))
    return hits


# --- IBAN ----------------------------------------------------------------------------------------------------------

# As people write them: the country code, the check digits and the BBAN, with spaces, dots or dashes anywhere
# between characters (groups of any size, "NO 02 1503 ..."); lower case only when written compact.
# A line break counts as a separator: an IBAN wrapped in a narrow e-mail or a note (mod-97 keeps it strict).
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Z]{2}[ .\-]?\d{2}|[a-z]{2}\d{2})(?:(?:[ .\-]|\r?\n)?[A-Za-z0-9]){8,30}(?![A-Za-z0-9])"
)
_IBAN_SEPARATOR = re.compile(r"[ .\-\r\n]")
_IBAN_MIN_CHARS = 15  # Norway's, the shortest in the registry


def is_iban(compact: str) -> bool:
    """Mod-97 plus the registry's length and BBAN structure for the country.

    The country-specific checks python-stdnum adds (bank-code lists, national check digits) are left out on
    purpose: a list that does not know a bank would leave a valid IBAN in clear.
    """
    if len(compact) < _IBAN_MIN_CHARS or not mod_97_10.is_valid(compact[4:] + compact[:4]):
        return False
    return std_iban.is_valid(compact, check_country=False)


def find_ibans(scan: Scan) -> list[Hit]:
    """IBANs whose checksum holds. The greedy pattern can run on into the next word or the next IBAN ("... 6769
    Thanks", "GB82 ... 32 GB82 ..."): the match is cut back, group by group, until the checksum holds, and the scan
    goes on from where the IBAN ends (from the next word when none holds), so what the match ran into is read too."""
    hits: list[Hit] = []
    position = 0
    while m := scan.next_number(_IBAN, position, lead=3, digits=2):
        value = m.group()
        position = m.start() + 1
        while True:
            compact = _IBAN_SEPARATOR.sub("", value).upper()
            if is_iban(compact):
                hits.append(Hit("IBAN", m.start(), m.start() + len(value), 1.0, value, compact))
                position = m.start() + len(value)
                break
            gap = [g.start() for g in _IBAN_SEPARATOR.finditer(value, 5)]
            if not gap:
                break
            value = value[: gap[-1]]
    return hits


# --- US SSN --------------------------------------------------------------------------------------------------------

_SSN = re.compile(r"(\d(?<![\w.-]\d)\d{2})([- .]?)(\d{2})\2(\d{4})(?![\w-]|\.\d)")
# wrapped at a line break between its groups: masked after a label only
_SSN_WRAPPED = re.compile(
    r"(\d(?<![\w.-]\d)\d{2})([- .]?)(?:\r?\n[ \t]*)?(\d{2})\2(?:\r?\n[ \t]*)?(\d{4})(?![\w-]|\.\d)"
)
_SSN_CONTEXT = re.compile(r"(?i)\bssn\b|\bss#|social[^\S\n]+security|\bsoc\.?[^\S\n]*sec\b")
_SSN_WINDOW = 40


def find_ssns(scan: Scan) -> list[Hit]:
    """A dashed number with a valid area/group/serial, or any 3-2-4 shape (dashes, dots, spaces, none) after a label.

    A labelled number is masked even when the SSA never issues it (advertising numbers such as 219-09-9999):
    whoever wrote "SSN" meant one, and a false positive costs less than a leak.
    """
    hits: list[Hit] = []
    text = scan.text
    for m in scan.numbers(_SSN, lead=0, digits=9):
        start, end = m.span()
        has_context = near(_SSN_CONTEXT, text, start, end, _SSN_WINDOW)
        digits = m.group(1) + m.group(3) + m.group(4)
        if has_context:
            hits.append(Hit("US_SSN", start, end, 0.95, m.group(), digits))
        elif m.group(2) == "-" and std_ssn.is_valid(digits) and not labelled_business_id(text, start):
            hits.append(Hit("US_SSN", start, end, 0.85, m.group(), digits))
    if "\n" in text:
        for m in scan.numbers(_SSN_WRAPPED, lead=0, digits=9):
            if "\n" in m.group() and near(_SSN_CONTEXT, text, m.start(), m.end(), _SSN_WINDOW):
                hits.append(Hit("US_SSN", m.start(), m.end(), 0.9, m.group(), m.group(1) + m.group(3) + m.group(4)))
    return hits


# --- national ids --------------------------------------------------------------------------------------------------

_ID_WINDOW = 40

# China: the 18-character resident identity card number (region code, birth date, ISO 7064 mod 11-2 check).
# Chinese text glues numbers to characters, so the boundaries are ASCII-only.
_CN_RIC = re.compile(r"\d(?<![0-9A-Za-z]\d)\d{16}[\dXx](?![0-9A-Za-z])")


def find_cn_resident_ids(scan: Scan) -> list[Hit]:
    return [
        Hit("CN_RESIDENT_ID", m.start(), m.end(), 0.95, m.group(), m.group().upper())
        for m in scan.numbers(_CN_RIC, lead=0, digits=17)
        if cn_ric.is_valid(m.group())
    ]


# Russia: SNILS (insurance number, XXX-XXX-XXX YY) and a person's 12-digit INN (taxpayer number). A company's
# 10-digit INN is a business id and stays readable.
_SNILS = re.compile(r"\d(?<![0-9A-Za-z-]\d)(?:\d{2}-\d{3}-\d{3}[ -]\d{2}|\d{10})(?![0-9A-Za-z]|-\d)")
_SNILS_CONTEXT = re.compile(r"(?i)снилс|snils|страхов")
_SNILS_UNCHECKED_UP_TO = 1_001_998  # numbers up to 001-001-998 were issued without a check number


def is_snils(digits: str) -> bool:
    """SNILS check number: the weighted digit sum (weights 9..1) mod 101, where 100 reads as 00.

    python-stdnum has no SNILS module; the rule is the Pension Fund's published one.
    """
    if len(digits) != 11 or not digits.isdigit() or int(digits[:9]) <= _SNILS_UNCHECKED_UP_TO:
        return False
    total = sum(int(d) * (9 - i) for i, d in enumerate(digits[:9]))
    return total % 101 % 100 == int(digits[9:])


def find_ru_snils(scan: Scan) -> list[Hit]:
    hits: list[Hit] = []
    for m in scan.numbers(_SNILS, lead=0, digits=11):
        digits = digits_of(m.group())
        formatted = len(m.group()) > len(digits)
        context = near(_SNILS_CONTEXT, scan.text, m.start(), m.end(), _ID_WINDOW)
        if (formatted or context) and is_snils(digits):
            hits.append(Hit("RU_SNILS", m.start(), m.end(), 0.95 if context else 0.85, m.group(), digits))
    return hits


_INN = re.compile(r"\d(?<![0-9A-Za-z]\d)(?:\d(?:[ -]?\d{2}){5}|\d{9})(?![0-9A-Za-z]|[ -]\d)")
# an INN's own label, or a personal id's: "ID number 7707083893" is someone's id whatever its country
_INN_CONTEXT = re.compile(
    r"(?i)\bинн\b|\binn\b|налогоплательщик|taxpayer|\bid[^\S\n]*(?:number|no\b|nr\b|#)|identification[^\S\n]+number"
)
_INN_HINTS = (
    "инн",
    "inn",
    "налогоплательщик",
    "taxpayer",
    "id number",
    "id no",
    "id nr",
    "id#",
    "id #",
    "identification",
)
# a company's own form before its number: a legal entity's 10-digit INN is a business id, readable
_COMPANY_FORM = re.compile(r"(?i)(?<!\w)(?:ооо|оао|зао|пао|ао|нко|llc|ltd|jsc|gmbh)(?!\w)")


def find_ru_inns(scan: Scan) -> list[Hit]:
    """A person's INN (12 digits, two check digits) or a labelled 10-digit one that no company form precedes: one
    random run in a hundred passes the check digits, so a label is needed. The 10-digit number is a legal entity's
    by its format, but one written with no company beside it may be anyone's: masked as an INN, on purpose."""
    if not scan.mentions(_INN_HINTS):
        return []
    hits = []
    for m in scan.numbers(_INN, lead=0, digits=10):
        digits = digits_of(m.group())
        if not near(_INN_CONTEXT, scan.text, m.start(), m.end(), _ID_WINDOW) or not ru_inn.is_valid(digits):
            continue
        if len(digits) == 10 and near(_COMPANY_FORM, scan.text, m.start(), m.end(), _ID_WINDOW):
            continue
        hits.append(Hit("RU_INN", m.start(), m.end(), 0.95, m.group(), digits))
    return hits


# Vietnam: the 12-digit citizen identity number (CCCD: province of birth, century and sex, birth year, serial)
# and the older 9-digit identity card number (CMND). Neither carries a check digit, so a label is required and
# the CCCD must start with a province code.
_VN_PROVINCES = frozenset(
    {1, 2, 4, 6, 8, 10, 11, 12, 14, 15, 17, 19, 20, 22, 24, 25, 26, 27, 30, 31, 33, 34, 35, 36, 37, 38, 40, 42, 44}
    | {45, 46, 48, 49, 51, 52, 54, 56, 58, 60, 62, 64, 66, 67, 68, 70, 72, 74, 75, 77, 79, 80, 82, 83, 84, 86, 87}
    | {89, 91, 92, 93, 94, 95, 96}
)
_VN_ID = re.compile(r"\d(?<![0-9A-Za-z]\d)(?:\d{11}|\d{8})(?![0-9A-Za-z])")
_VN_ID_CONTEXT = re.compile(
    r"(?i)\b(?:cccd|cmnd|cmtnd|căn[^\S\n]+cước|chứng[^\S\n]+minh|định[^\S\n]+danh|citizen[^\S\n]+id"
    r"|national[^\S\n]+id|id[^\S\n]+card|identity[^\S\n]+card)"
)


_VN_ID_HINTS = ("cccd", "cmnd", "cmtnd", "căn", "chứng", "định", "citizen", "national", "id card", "identity")


def find_vn_national_ids(scan: Scan) -> list[Hit]:
    if not scan.mentions(_VN_ID_HINTS):
        return []
    hits: list[Hit] = []
    for m in scan.numbers(_VN_ID, lead=0, digits=9):
        value = m.group()
        if len(value) == 12 and int(value[:3]) not in _VN_PROVINCES:
            continue
        if near(_VN_ID_CONTEXT, scan.text, m.start(), m.end(), _ID_WINDOW):
            hits.append(Hit("VN_NATIONAL_ID", m.start(), m.end(), 0.85, value, squash(value)))
    return hits


# --- bank account numbers ------------------------------------------------------------------------------------------

# Domestic account numbers carry no check digit anyone can verify without the bank, so the label is what makes
# one: "STK", "số tài khoản", "р/с", "расчётный счёт", "account no.", "Konto". Up to four words (the bank's
# name: "Vietcombank", "в ПАО Сбербанк", "nhận tiền mới: Vietcombank") may stand between the label and the number.
_ACCOUNT_LABEL = re.compile(
    r"(?i:(?<![^\W\d_])(?:stk|s[ốo][^\S\n]+tk|(?:s[ốo][^\S\n]+)?t[àa]i[^\S\n]+kho[ảa]n|р/с|р/сч|расч[её]тн\w*[^\S\n]+сч[её]т\w*"
    r"|лицев\w*[^\S\n]+сч[её]т\w*|(?:bank[^\S\n]+)?account[^\S\n]*(?:no|nr|number|#)|(?:bank[^\S\n]+)?acc(?:oun)?t"
    r"[^\S\n]*(?:no|nr|#)|bank[^\S\n]+account|a/c|konto(?:nummer|nr)?)(?![^\W\d_]))"
)
_ACCOUNT_NUMBER = re.compile(r"(?<![\w.,/-])\d(?:[ -]?\d){5,24}(?![\w]|[.,/-]\d)")
# Between the label and the number: punctuation, "No.", "số", and at most three short words (a bank's name).
_ACCOUNT_GAP = re.compile(
    r"[^\S\n]*[.:#№]?[^\S\n]*(?:(?i:no|nr|number|số|№)\.?)?[^\S\n]*[:#]?[^\S\n]*"
    r"(?:[^\W\d]{1,20}[.,:]?[^\S\n]+){0,4}[:#]?[^\S\n]*\Z"
)
_ACCOUNT_WINDOW = 64


# Cheap pre-check on the lower-cased text: every label contains one of these.
_ACCOUNT_HINTS = ("stk", "tk", "khoản", "khoan", "р/с", "сч", "account", "acct", "a/c", "konto")
# The letters the case-blind label pattern takes for a hint's letter though their lower case is another: the long s
# ("s") and the wide Cyrillic es ("с", "р/ᲃ"). A text holding one is read whole, not line by line.
_CASE_BLIND_TWINS = ("ſ", "ᲃ")


def find_bank_accounts(scan: Scan) -> list[Hit]:
    """An account number after its label. Every label holds a hint and no line break, and lies in a number stretch:
    the label pattern (which opens with a lookbehind the engine would try at every position) reads only the parts of
    the number stretches on lines holding a hint."""
    text = scan.text
    if not scan.mentions(_ACCOUNT_HINTS):
        return []
    whole = any(twin in text for twin in _CASE_BLIND_TWINS)
    lines = [(0, len(text))] if whole else scan.lines_holding(_ACCOUNT_HINTS, ignore_case=True)
    hits: list[Hit] = []
    for label in scan.in_lines(_ACCOUNT_LABEL, _overlaps(scan.number_stretches, lines)):
        m = _ACCOUNT_NUMBER.search(text, label.end(), min(len(text), label.end() + _ACCOUNT_WINDOW))
        if m is None or _ACCOUNT_GAP.match(text, label.end(), m.start()) is None:
            continue
        hits.append(Hit("BANK_ACCOUNT", m.start(), m.end(), 0.85, m.group(), digits_of(m.group())))
    return hits


def _overlaps(stretches: list[tuple[int, int]], lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where two sorted lists of spans overlap, in text order."""
    found: list[tuple[int, int]] = []
    i = j = 0
    while i < len(stretches) and j < len(lines):
        lo, hi = max(stretches[i][0], lines[j][0]), min(stretches[i][1], lines[j][1])
        if lo < hi:
            found.append((lo, hi))
        if stretches[i][1] < lines[j][1]:
            i += 1
        else:
            j += 1
    return found
