"""`tenant_files.walk` lists the root a tenant folder at a time, in the order of every entry's path."""

from __future__ import annotations

import os
from pathlib import Path

from extraction_assets.lib.readers.tenant_files import walk


def _tree(root: Path) -> None:
    """Tenants whose names sort apart from their paths ("a" < "a-b" < "a.b" as names, "a-b/" < "a.b/" < "a/" as
    folders), root files beside them, nested and hidden entries, and a hard link from one tenant into another."""
    for rel in ("a/x.txt", "a/sub/y.txt", "a-b/z.txt", "a.b/w.txt", "ab/v.txt", "a-x.txt", "README.md", "a/.hidden"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    os.link(root / "ab/v.txt", root / "a/linked.txt")


def test_the_walk_comes_in_path_order_and_checks_hard_links_per_tenant(tmp_path: Path) -> None:
    _tree(tmp_path)
    entries = list(walk(tmp_path))
    rels = [entry.rel for entry in entries]
    assert rels == sorted(rels), rels
    assert set(rels) >= {"a/x.txt", "a/sub/y.txt", "a-b/z.txt", "a.b/w.txt", "a-x.txt", "README.md", "a/.hidden"}
    problems = {entry.rel: entry.problem for entry in entries if entry.problem}
    assert problems == {
        "a/.hidden": "hidden file (not read)",
        "a/linked.txt": "hard link to a file outside the tenant folder",
        "ab/v.txt": "hard link to a file outside the tenant folder",
    }


def test_a_tenant_folder_is_listed_when_the_walk_comes_to_it(tmp_path: Path) -> None:
    """The walk holds one tenant's listing at a time: a file written into a later tenant's folder while an earlier
    tenant's files are handed on is found (a walk that listed the whole inbox first would miss it)."""
    _tree(tmp_path)
    walking = walk(tmp_path)
    assert next(walking).rel == "README.md"
    assert next(walking).rel == "a-b/z.txt"
    (tmp_path / "ab" / "late.txt").write_text("written after the walk began")
    assert "ab/late.txt" in [entry.rel for entry in walking]
