"""Credentials: provider API keys, JWTs, bearer tokens, private key blocks and `password=` / `secret:` pairs.

A key's shape identifies it on its own; a `key=value` pair masks the value and keeps the key, so the
text still says that a password was there.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from extraction_assets.lib.pii.scan import Hit, Scan, squash

_CREDENTIAL_KEYS = (
    r"password|passwd|pwd|passphrase|secret|apikey|api[_-]?key|(?:secret|access|private)[_-]?key|token"
    r"|mật[^\S\n]+khẩu|пароль"
)


class _CredentialPattern(NamedTuple):
    """A secret's shape; `groups` names the part to mask (none = all), `hints` are cheap lower-case pre-checks."""

    pattern: re.Pattern[str]
    groups: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()


# Every provider key below starts with one of these (lower-cased).
_PROVIDER_KEY_HINTS: tuple[str, ...] = ("sk-", "sk_", "rk_", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_PROVIDER_KEY_HINTS += ("github_pat_", "glpat-", "xox", "aiza", "eyj")

_CREDENTIAL_PATTERNS: tuple[_CredentialPattern, ...] = (
    # PEM private key blocks (a truncated paste is masked to the end of the text).
    _CredentialPattern(
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)", re.S
        ),
        hints=("private key-----",),
    ),
    # Provider keys and JWTs: the shape alone identifies them.
    _CredentialPattern(
        re.compile(
            r"(?<![\w-])(?:sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}"  # OpenAI / Anthropic style
            r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
            r"|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"  # GitHub
            r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
            r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
            r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
            r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"  # JWT
            r")(?![\w-])"
        ),
        hints=_PROVIDER_KEY_HINTS,
    ),
    # Bearer tokens: mask the token, keep the scheme.
    _CredentialPattern(
        re.compile(r"(?i:\bbearer)[^\S\n]+(?P<v>[A-Za-z0-9\-._~+/]{8,}=*)"), groups=("v",), hints=("bearer",)
    ),
    # key=value / key: value pairs: mask the value only.
    _CredentialPattern(
        re.compile(
            rf"(?i:(?<![^\W_])(?:{_CREDENTIAL_KEYS}))(?![\w-])[\"']?[^\S\n]*[:=][^\S\n]*"
            r"(?:(?i:bearer)[^\S\n]+)?"
            r"(?:\"(?P<v1>[^\"\n]{1,512})\"|'(?P<v2>[^'\n]{1,512})'|(?P<v3>[^\s\"',;&{}()<>\[\]]{1,512}))"
        ),
        groups=("v1", "v2", "v3"),
        hints=("pass", "pwd", "secret", "key", "token", "khẩu", "пароль"),
    ),
)


def find_credentials(scan: Scan) -> list[Hit]:
    hits: list[Hit] = []
    for pattern, groups, hints in _CREDENTIAL_PATTERNS:
        if hints and not scan.mentions(hints):
            continue
        within = (
            pattern.finditer(scan.text)
            if pattern.flags & re.S
            else scan.in_lines(pattern, scan.lines_holding(hints, ignore_case=True))
        )
        for m in within:
            group = next((g for g in groups if m.group(g) is not None), 0)
            start, end = m.span(group)
            value = m.group(group)
            hits.append(Hit("CREDENTIAL", start, end, 0.8 if groups else 0.99, value, squash(value)))
    return hits
