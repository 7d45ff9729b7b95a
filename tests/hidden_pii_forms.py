"""Personal values written in forms that hide them from a detector's pattern (compatibility characters, encodings,
wraps inside quoted replies, a label of another country): twenty of them, each with the value as written, for the
scrubber's unit tests and the end-to-end test that no request to a model holds one.

Test values are the public test numbers (Visa's 4012 8888 8888 1881, an SSN with a valid area, group and serial,
a documentation IPv4, a 555 phone) or built with the published check-digit rule (the INN)."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple


class HiddenForm(NamedTuple):
    name: str
    text: str
    kind: str
    value: str  # as written in `text`: what must be masked, whole


HIDDEN_FORMS: tuple[HiddenForm, ...] = (
    HiddenForm("fullwidth @", "Write to mirela.quist＠example.com today.", "EMAIL", "mirela.quist＠example.com"),
    HiddenForm("small form @", "Write to oskar.lind﹫example.com today.", "EMAIL", "oskar.lind﹫example.com"),
    HiddenForm(
        "fullwidth address",
        "Mail ｐｅｔｒａ＠ｅｘａｍｐｌｅ．ｏｒｇ now",
        "EMAIL",
        "ｐｅｔｒａ＠ｅｘａｍｐｌｅ．ｏｒｇ",
    ),
    HiddenForm(
        "fullwidth card digits",
        "Card ４０１２ ８８８８ ８８８８ １８８１ on file.",
        "CREDIT_CARD",
        "４０１２ ８８８８ ８８８８ １８８１",
    ),
    HiddenForm(
        "fullwidth card run",
        "card ４０１２８８８８８８８８１８８１ ok",
        "CREDIT_CARD",
        "４０１２８８８８８８８８１８８１",
    ),
    HiddenForm(
        "ideographic spaces in a card",
        "Card 4012\u30008888\u30008888\u30001881 on file.",
        "CREDIT_CARD",
        "4012\u30008888\u30008888\u30001881",
    ),
    HiddenForm("fullwidth SSN", "SSN: ５３６-９０-４３１２ thanks", "US_SSN", "５３６-９０-４３１２"),
    HiddenForm("fullwidth hyphens in an SSN", "SSN 536－90－4312 thanks", "US_SSN", "536－90－4312"),
    HiddenForm("fullwidth IPv4", "Server at ２０３.０.１１３.４７ is down.", "IP_ADDRESS", "２０３.０.１１３.４７"),
    HiddenForm("fullwidth dots in an IPv4", "Server at 203．0．113．48 is down.", "IP_ADDRESS", "203．0．113．48"),
    HiddenForm("fullwidth phone", "Call ＋１ ４１５ ５５５ ０１８６ now", "PHONE", "＋１ ４１５ ５５５ ０１８６"),
    HiddenForm(
        "triple-encoded @",
        "Write to ines.rowe%252540example.com today.",
        "EMAIL",
        "ines.rowe%252540example.com",
    ),
    HiddenForm("one-dot leader in a domain", "Write to tove.berg@example․com today.", "EMAIL", "tove.berg@example․com"),
    HiddenForm("card written with dots", "Card 4012.8888.8888.1881 on file.", "CREDIT_CARD", "4012.8888.8888.1881"),
    HiddenForm(
        "SSN wrapped at its dash in a quote",
        "On Monday Bob wrote:\n> my SSN is 536-90\n> -4312 please keep it safe\n",
        "US_SSN",
        "536-90\n> -4312",
    ),
    HiddenForm(
        "SSN wrapped between groups in a quote",
        "On Monday Bob wrote:\n> my SSN is 536 90\n> 4312 please keep it safe\n",
        "US_SSN",
        "536 90\n> 4312",
    ),
    HiddenForm(
        "phone wrapped in a quote",
        "On Monday Bob wrote:\n> call me at +1 415 555\n> 0199 tomorrow morning\n",
        "PHONE",
        "+1 415 555\n> 0199",
    ),
    HiddenForm(
        "phone wrapped at its dash in a quote",
        "On Monday Bob wrote:\n> or on (415) 555-\n> 0143 after six\n",
        "PHONE",
        "(415) 555-\n> 0143",
    ),
    HiddenForm("INN after 'ID number'", "ID number 7707083893 for the contract.", "RU_INN", "7707083893"),
    HiddenForm("INN after 'ID no.'", "Passenger ID no. 500100732259, seat 14C.", "RU_INN", "500100732259"),
)


def plain(text: str) -> str:
    """A text with its hiding undone, for a leak search: compatibility forms as NFKC gives them, encoded "@"s
    decoded, quote prefixes and whitespace gone."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"%(?:25)*40", "@", text)
    return re.sub(r"\s|>", "", text)
