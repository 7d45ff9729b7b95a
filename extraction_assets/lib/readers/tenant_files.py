"""Files under a folder of tenant folders (the inbox, the live sessions folder): listed without following a link out
of its tenant, then opened one folder at a time from the root, and only if the open file is the one listed.

A tenant writes into its own folder and nowhere else, so what it may place there is the threat: a symbolic link to
another tenant's file or to a file outside the folder, a tenant folder that is itself a link, a hard link to a file
it cannot read, a FIFO that blocks the reader, or any of these swapped in between the listing and the read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

HIDDEN_FILE, HIDDEN_FOLDER = "hidden file (not read)", "hidden folder (not read)"


class Entry(NamedTuple):
    """One listed entry: where to read it from (a path under the root's real path: a link's target), its POSIX path
    under the root (the link's own name), and either its stat (taken in the listing: an unchanged folder costs one
    stat per file) or the problem that keeps it from being read."""

    path: str
    rel: str
    problem: str | None
    info: os.stat_result | None


class Refused(Exception):
    """A file that is not read at all (not regular, too large, not the file listed); the message says why."""


def walk(root: Path, depth: int | None = None) -> Iterator[Entry]:
    """Every visible entry under `root`, sorted by relative path; folders deeper than `depth` are not entered.

    Only regular files are read. A symbolic link is read only when its real path is a regular file inside
    its own tenant's folder; any other link, device, FIFO or socket is a problem, and its target is never
    opened. The path returned for a link is its target's, so the reader never follows a link itself. A file with
    more hard links than names in its tenant's folder shares its content with a file elsewhere (another
    tenant's, or outside the root): a problem too, since which name came first cannot be told.

    The root is listed a tenant folder at a time (its entries sorted and checked, then handed on): what the walk
    holds is one tenant's listing, not the whole inbox's (a file's stat is most of an entry's ~1 kB). Each of the
    root's entries keys its place by its name, a folder's with a slash after it, so the tenants come in the order
    of their entries' paths.
    """
    top: list[tuple[str, Entry | None, str]] = []  # (sort key, an entry of the root itself, or a folder to list)
    for entry, folder in _listing(root, str(root), "", 1, depth):
        if folder is not None:
            top.append((entry.rel + "/", None, folder))
        else:
            top.append((entry.rel, entry, ""))
    for _, own, folder in sorted(top, key=lambda item: item[0]):
        if own is not None:
            yield from _outside_hard_links([own])
        else:
            yield from sorted(_outside_hard_links(_tenant(root, folder, depth)), key=lambda item: item.rel)


def _tenant(root: Path, folder: str, depth: int | None) -> list[Entry]:
    """Every visible entry under one folder of the root (a tenant's), unsorted."""
    found: list[Entry] = []
    name = os.path.basename(folder)
    stack = [(folder, name + "/", 2)]  # a folder, its path under the root with a trailing slash, its entries' depth
    while stack:
        path, prefix, level = stack.pop()
        for entry, inner in _listing(root, path, prefix, level, depth):
            if inner is not None:
                stack.append((inner, entry.rel + "/", level + 1))
            else:
                found.append(entry)
    return found


def _listing(root: Path, folder: str, prefix: str, level: int, depth: int | None) -> Iterator[tuple[Entry, str | None]]:
    """One folder's entries, each with the path of the folder it is when the walk enters it (else None)."""
    try:
        with os.scandir(folder) as scan:
            entries = list(scan)
    except OSError as exc:
        yield Entry(folder, prefix[:-1] or ".", f"unreadable folder: {os_reason(exc)}", None), None
        return
    for entry in entries:
        rel = prefix + entry.name
        if entry.name.startswith("."):  # counted, never read (.git, .DS_Store, editor files)
            hidden = HIDDEN_FOLDER if entry.is_dir(follow_symlinks=False) else HIDDEN_FILE
            yield Entry(entry.path, rel, hidden, None), None
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                yield _link(root, entry.path, rel), None
            elif stat.S_ISDIR(info.st_mode):
                if depth is None or level < depth:
                    yield Entry(entry.path, rel, None, None), entry.path
            elif stat.S_ISREG(info.st_mode):
                yield Entry(rel, rel, None, info), None
            else:
                yield Entry(entry.path, rel, f"not a regular file ({file_type(info.st_mode)})", None), None
        except OSError as exc:
            yield Entry(entry.path, rel, f"unreadable file: {os_reason(exc)}", None), None


def _outside_hard_links(found: list[Entry]) -> list[Entry]:
    """The listing's entries, a file whose hard links are not all in its tenant's folder turned into a problem."""
    names: Counter[tuple[str, int, int]] = Counter()
    for path, rel, problem, info in found:
        if problem is None and info is not None and path == rel:  # a name, not a symbolic link to one
            names[(rel.split("/")[0], info.st_dev, info.st_ino)] += 1
    return [
        Entry(path, rel, "hard link to a file outside the tenant folder", None)
        if info is not None and info.st_nlink > names[(rel.split("/")[0], info.st_dev, info.st_ino)]
        else Entry(path, rel, problem, info)
        for path, rel, problem, info in found
    ]


def _link(root: Path, link: str, rel: str) -> Entry:
    """Where a symbolic link may be read from, or why not: only a regular file inside the link's tenant folder."""
    parts = rel.split("/")
    try:
        target = os.path.realpath(link, strict=True)
    except FileNotFoundError:
        return Entry(link, rel, "broken symlink", None)
    except OSError as exc:  # a loop, or a folder on the way that cannot be searched
        loop = exc.errno == errno.ELOOP or "loop" in str(exc).lower()
        return Entry(link, rel, "symlink loop" if loop else f"unreadable symlink: {os_reason(exc)}", None)
    real_root = Path(os.path.realpath(root))
    tenant_folder = real_root / parts[0] if len(parts) > 1 else None
    if tenant_folder is None or not Path(target).is_relative_to(tenant_folder):
        return Entry(link, rel, "link outside the tenant folder", None)
    info = os.lstat(target)
    if stat.S_ISDIR(info.st_mode):
        return Entry(link, rel, "symlinked folder not followed", None)
    if not stat.S_ISREG(info.st_mode):
        return Entry(link, rel, f"link to something other than a regular file ({file_type(info.st_mode)})", None)
    return Entry(Path(target).relative_to(real_root).as_posix(), rel, None, info)


def file_type(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"))
    return next((name for test, name in kinds if test(mode)), "block device" if stat.S_ISBLK(mode) else "special file")


def read_regular(path: Path, limit: int, beneath: Path | None = None, walked: os.stat_result | None = None) -> bytes:
    """A regular file's bytes, opened without following a link, and never more than `limit` bytes read.

    With `beneath`, `path` is relative to it and opened one folder at a time, none of them followed if it is a
    link: a folder swapped for a link to another tenant's after the listing cannot lead the read there. `walked` is
    the listing's stat of the file: an open file that is not the one listed (swapped, or its name given to another
    file) is refused. The other checks are made on the open file (not on its name), so a file swapped for a link
    or a FIFO after the listing is refused too.
    """
    fd = _open_beneath(beneath, path) if beneath is not None else os.open(path, _FILE_FLAGS)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"not a regular file ({file_type(info.st_mode)})")
        if walked is not None and (info.st_dev, info.st_ino) != (walked.st_dev, walked.st_ino):
            raise Refused("file replaced after it was listed (read again next run)")
        if info.st_size > limit:
            raise Refused(f"file too large ({info.st_size} bytes, limit {limit})")
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while we read
        raise Refused(f"file too large (more than {limit} bytes)")
    return data


_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _open_beneath(root: Path, path: Path) -> int:
    """A descriptor of `root / path`, each folder on the way opened from the one before it without following a link
    (`O_NOFOLLOW` on the last component alone would follow a folder that became a link)."""
    *folders, name = path.parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for folder in folders:
            try:
                inner = os.open(folder, _FOLDER_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused("a folder on its path is no longer a folder (a link?): not followed") from exc
                raise
            os.close(fd)
            fd = inner
        return os.open(name, _FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
