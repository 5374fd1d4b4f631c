"""Positions in a TODO list: `N`, `last`, `N.M`, `N.last` (1-based), resolved to
indices. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from aidp.core.errors import InvalidPosition
from aidp.core.plain import Plain
from aidp.todos.items import TodoItem, TodoList

LAST: Literal["last"] = "last"
Index = int | Literal["last"]

POSITION_FORMS = "N, last, N.M or N.last (1-based, e.g. 2, last, 1.3, 1.last)"
# ASCII digits only: int() would also take '٣' or '1_0'. Compiled at its first use
# (re's cache), not at every import: a hook's plan never names a position.
_POSITION = (r"(?:(?P<item>[1-9][0-9]*)|(?P<last>last))"
             r"(?:\.(?:(?P<sub>[1-9][0-9]*)|(?P<sublast>last)))?")

class Position(Plain):
    """A position as given (written out, not a dataclass: aidp.core.plain)."""

    __slots__ = _fields = ("item", "subtask", "text")

    def __init__(self, item: Index, subtask: Index | None = None, text: str = "") -> None:
        self.item = item
        self.subtask = subtask
        self.text = text

    def __str__(self) -> str:
        return self.text or (f"{self.item}" + (f".{self.subtask}" if self.subtask else ""))


def parse_position(text: str) -> Position:
    """`N`, `last`, `N.M` or `N.last`; anything else is an InvalidPosition."""
    match = re.fullmatch(_POSITION, text) if isinstance(text, str) else None
    if match is None or (match["last"] and (match["sub"] or match["sublast"])):
        raise InvalidPosition(f"Invalid position {text!r}: use {POSITION_FORMS}")
    item: Index = LAST if match["last"] else int(match["item"])
    sub: Index | None = None
    if match["sub"]:
        sub = int(match["sub"])
    elif match["sublast"]:
        sub = LAST
    return Position(item, sub, text)


class Target(Plain):
    """A resolved position: 0-based indices into the visible items."""

    __slots__ = _fields = ("item", "subtask")

    def __init__(self, item: int, subtask: int | None = None) -> None:
        self.item = item
        self.subtask = subtask

    def label(self) -> str:
        return f"{self.item + 1}" + (f".{self.subtask + 1}" if self.subtask is not None else "")


def _out_of_range(pos: Position, why: str) -> InvalidPosition:
    return InvalidPosition(f"Invalid position {str(pos)!r}: {why}; use {POSITION_FORMS}")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def resolve(items: Sequence[TodoItem], pos: Position, *, insert: bool) -> Target:
    """Indices for `pos` in `items`. For an insert, N (or M) may be one past the end and
    `last` means after the end; otherwise `last` is the final existing one."""
    n = len(items)
    if pos.subtask is None:
        if insert:
            index = n if pos.item == LAST else pos.item - 1
            if index > n:
                raise _out_of_range(
                    pos, f"the list has {_count(n, 'item')}, so N goes from 1 to {n + 1} "
                    f"({n + 1} appends)",
                )
            return Target(index)
        if n == 0:
            raise _out_of_range(pos, "there are no active TODOs")
        index = n - 1 if pos.item == LAST else pos.item - 1
        if index >= n:
            raise _out_of_range(pos, f"the list has {_count(n, 'item')}, so N goes from 1 to {n}")
        return Target(index)
    # A subtask: its item must exist, whatever the command.
    if n == 0:
        raise _out_of_range(pos, "there are no active TODOs, so no item to hold a subtask")
    index = pos.item - 1 if pos.item != LAST else n - 1
    if index >= n:
        raise _out_of_range(pos, f"there is no item {index + 1} (the list has {_count(n, 'item')})")
    m = len(items[index].get("subtasks") or [])
    if insert:
        sub = m if pos.subtask == LAST else pos.subtask - 1
        if sub > m:
            raise _out_of_range(
                pos, f"item {index + 1} has {_count(m, 'subtask')}, so M goes from 1 to {m + 1} "
                f"({index + 1}.{m + 1} appends)",
            )
        return Target(index, sub)
    if m == 0:
        raise _out_of_range(pos, f"item {index + 1} has no subtasks")
    sub = m - 1 if pos.subtask == LAST else pos.subtask - 1
    if sub >= m:
        raise _out_of_range(
            pos, f"item {index + 1} has {_count(m, 'subtask')}, so M goes from 1 to {m}"
        )
    return Target(index, sub)


def locate(todo: TodoList, text: str, *, insert: bool = False) -> Target:
    return resolve(todo.visible, parse_position(text), insert=insert)
