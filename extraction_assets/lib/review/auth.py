"""Who is acting: reviewers and API callers authenticated by a token, and the command line's operating-system user.

The audit trail's "who" must never be what a person types. The review page and the interview API both take it
from here: a bearer token (`Authorization: Bearer <token>`) or, for a browser, HTTP Basic with the reviewer's
name and token. Tokens come from configuration (`EXTRACTION_REVIEW_AUTH`, a YAML file) where only their SHA-256
is kept, so the file, the warehouse and the logs never hold a token in clear:

    principals:
      - name: linh              # recorded in audit_log as the actor
        tenant: acme            # the only tenant this token reads or changes
        token_sha256: 5c1f...   # `extraction-assets review token --name linh --tenant acme` prints a new one
    cli_administrators: [ops]   # operating-system users who may record a change under another name (--by)

Tokens are random 256-bit strings, so one SHA-256 is enough to keep them at rest (no salt or stretching needed,
as for any high-entropy API key). The command line records the operating-system user (from the process's user
id, not from `$USER`, which anyone can set); only a configured administrator may name someone else.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import pwd
import secrets
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError, field_validator

from extraction_assets.lib.private_files import write_private

AUTH_ENV = "EXTRACTION_REVIEW_AUTH"
_HEX64 = frozenset("0123456789abcdef")


class AuthError(ValueError):
    """The configuration cannot be used, or a person may not act as they ask; the message says why."""


class Principal(BaseModel):
    """An authenticated reviewer or API caller, and the one tenant it acts in."""

    model_config = {"frozen": True}

    name: str
    tenant: str


class PrincipalEntry(Principal):
    token_sha256: str

    @field_validator("token_sha256")
    @classmethod
    def _is_a_hash(cls, value: str) -> str:
        value = value.strip().lower()
        if len(value) != 64 or not set(value) <= _HEX64:
            raise ValueError("token_sha256 must be the 64 hex digits of a token's SHA-256 (never the token itself)")
        return value


class AuthConfig(BaseModel):
    principals: list[PrincipalEntry] = Field(default_factory=list)
    cli_administrators: list[str] = Field(default_factory=list)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh random token (shown once; only its hash goes into the configuration)."""
    return secrets.token_urlsafe(32)


DEFAULT_AUTH_PATH = Path(".data") / "review-auth.yaml"  # where `review add-reviewer` writes without the variable


def auth_path() -> Path:
    """The reviewers' file: `$EXTRACTION_REVIEW_AUTH`, else `.data/review-auth.yaml` (what `make` runs beside)."""
    configured = os.environ.get(AUTH_ENV, "").strip()
    return Path(configured) if configured else DEFAULT_AUTH_PATH


def load_auth(path: Path | None = None) -> AuthConfig:
    """The configuration file (default: `auth_path()`); none there means nobody can sign in."""
    if path is None:
        path = auth_path()
        if not os.environ.get(AUTH_ENV, "").strip() and not path.exists():
            return AuthConfig()
    import yaml  # here: the review commands that only read load no YAML parser

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return AuthConfig.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise AuthError(f"{path}: not a usable review authentication file: {exc}") from exc


class Authenticator:
    """Finds the principal a request's `Authorization` header proves; None when it proves nobody.

    Made `from_file`, it reads the reviewers' file again whenever the file changed (its size, modification time or
    inode; one `stat` per request), so a reviewer added while the server runs signs in at once, and one removed is
    refused at once. A file that no longer parses keeps the reviewers last read, and says why (`problem`).
    """

    def __init__(self, config: AuthConfig, path: Path | None = None) -> None:
        self.path = path
        self.problem: str | None = None
        self._stamp = self._file_stamp()
        self._use(config)

    @classmethod
    def from_file(cls, path: Path) -> Authenticator:
        return cls(load_auth(path), path)

    def _use(self, config: AuthConfig) -> None:
        self.config = config
        self._by_hash = {p.token_sha256: Principal(name=p.name, tenant=p.tenant) for p in config.principals}

    def _file_stamp(self) -> tuple[int, int, int] | None:
        if self.path is None:
            return None
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return stat.st_size, stat.st_mtime_ns, stat.st_ino

    def refresh(self) -> None:
        """Read the reviewers' file again if it changed since it was read."""
        stamp = self._file_stamp()
        if self.path is None or stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            self._use(load_auth(self.path) if stamp else AuthConfig())
            self.problem = None
        except AuthError as exc:  # a half-written or broken file: keep who could sign in, and say why
            self.problem = str(exc)

    def by_token(self, token: str) -> Principal | None:
        self.refresh()
        presented = hash_token(token)
        for known, principal in self._by_hash.items():  # compare every hash in constant time
            if hmac.compare_digest(known, presented):
                return principal
        return None

    def from_header(self, authorization: str | None) -> Principal | None:
        """`Bearer <token>`, or `Basic base64(name:token)` whose name is the token's own."""
        scheme, _, credentials = (authorization or "").strip().partition(" ")
        if scheme.lower() == "bearer":
            return self.by_token(credentials.strip())
        if scheme.lower() == "basic":
            try:
                name, _, token = base64.b64decode(credentials.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return None
            principal = self.by_token(token)
            same_name = principal is not None and hmac.compare_digest(principal.name.encode(), name.encode())
            return principal if same_name else None
        return None


class FormTokens:
    """Each reviewer's own form token: an HMAC of their name and tenant under a secret the server draws when it
    starts. A page's forms carry the token of whoever the page was drawn for, and a form is taken only with the
    token of whoever signed in to send it, so no reviewer can make another's browser post a decision (which would be
    audited under the other's name), and a token seen by one reviewer is of no use for another."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def token_for(self, principal: Principal) -> str:
        message = f"{principal.tenant}\x1f{principal.name}".encode()
        return base64.urlsafe_b64encode(hmac.new(self._secret, message, hashlib.sha256).digest()).decode().rstrip("=")

    def valid(self, principal: Principal, token: str) -> bool:
        return hmac.compare_digest(self.token_for(principal).encode(), token.encode())


def os_user() -> str:
    """The operating-system user running this process (its user id's name; `$USER` can say anything)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:  # a user id without a passwd entry (some containers)
        return f"uid:{os.geteuid()}"


def cli_actor(on_behalf_of: str | None, config: AuthConfig) -> tuple[str, str | None]:
    """Who the command line records, and a note saying who entered it when an administrator names someone else."""
    user = os_user()
    if not on_behalf_of or on_behalf_of.strip() == user:
        return user, None
    if user not in config.cli_administrators:
        raise AuthError(
            f"only an administrator may record a change under another name; {user!r} is not one "
            f"(cli_administrators in ${AUTH_ENV})"
        )
    return on_behalf_of.strip(), f"entered by administrator {user}"


def add_reviewer(path: Path, name: str, tenant: str) -> str:
    """A new token for `name` in `tenant`, its hash written into the reviewers' file (created readable by its owner
    only; a reviewer already there gets the new token instead of the old one); the token, to show once."""
    import yaml  # the YAML parser loads for a change to the file

    config = load_auth(path) if path.exists() else AuthConfig()
    token = new_token()
    kept = [p for p in config.principals if (p.name, p.tenant) != (name, tenant)]
    entry = PrincipalEntry(name=name, tenant=tenant, token_sha256=hash_token(token))
    data = config.model_copy(update={"principals": [*kept, entry]}).model_dump()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return token
