"""A connection that lists the statements it is given, for tests that count what a step asks of the warehouse."""

from __future__ import annotations

from typing import Any


class ListedStatements:
    """Passes everything to `con`, appending each statement's text to `said` first."""

    def __init__(self, con: Any, said: list[str]) -> None:
        self._con, self._said = con, said

    def execute(self, sql: str, *args: Any) -> Any:
        self._said.append(sql)
        return self._con.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)
