"""`tasks stats` in the terminal: the series of `aidp.backlog.insights` as bar charts.

The layout is computed here once, as lines of (text, style) spans, fitting 80 columns
(less on a narrower terminal). On a colour terminal rich prints them (it knows the
terminal's colour system); without colour — piped, or NO_COLOR — the same lines are
joined as plain text, and rich is not even imported: scripts and CI that read the
charts pay nothing for it (bench/RESULTS.md).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from aidp.core.terminal import inert
from aidp.views.render import STATUS_TITLES

MAX_WIDTH = 80
MIN_WIDTH = 40
GAP = 3  # between the two side-by-side charts
_EIGHTHS = " ▏▎▍▌▋▊▉"
STATUS_STYLES = {"pending": "yellow", "in_progress": "cyan", "done": "green",
                 "abandoned": "red", "other": "magenta"}
PRIORITY_STYLES = {"high": "red", "medium": "yellow", "low": "green"}

Span = tuple[str, str | None]
Line = list[Span]


def bar(value: int, largest: int, width: int) -> str:
    """A horizontal bar of `width` cells at most, in eighths of a cell; a value above
    zero always shows at least a sliver."""
    if value <= 0 or largest <= 0 or width <= 0:
        return ""
    eighths = max(1, round(value / largest * width * 8))
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def cells(text: str) -> int:
    """Terminal cells `text` takes: wide (CJK, emoji) characters take two."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _width(line: Line) -> int:
    return sum(cells(text) for text, _style in line)


def _pad(line: Line, width: int) -> Line:
    short = width - _width(line)
    return [*line, (" " * short, None)] if short > 0 else line


def _number(n: int) -> str:
    return f"{n:,}"


def _clip(text: str, limit: int) -> str:
    if cells(text) <= limit:
        return text
    out = ""
    for char in text:
        if cells(out + char) > limit - 1:
            break
        out += char
    return out + "…"


def bars(rows: list[tuple[str, int, str]], width: int) -> list[Line]:
    """Label, bar and count per row, `width` cells in all."""
    if not rows:
        return []
    label_w = max(cells(label) for label, _n, _s in rows)
    count_w = max(len(_number(n)) for _l, n, _s in rows)
    bar_w = max(4, width - label_w - count_w - 2)
    largest = max(n for _l, n, _s in rows)
    lines = []
    for label, n, style in rows:
        drawn = bar(n, largest, bar_w)
        lines.append([(label + " " * (label_w - cells(label)) + " ", None),
                      (drawn, style), (" " * (bar_w - len(drawn)) + " ", None),
                      (_number(n).rjust(count_w), None)])
    return lines


def side_by_side(left: list[Line], right: list[Line], half: int) -> list[Line]:
    out = []
    for n in range(max(len(left), len(right))):
        a = left[n] if n < len(left) else []
        b = right[n] if n < len(right) else []
        out.append([*_pad(a, half), (" " * GAP, None), *b] if b else a)
    return out


def pair(left: tuple[str, list[tuple[str, int, str]], str],
         right: tuple[str, list[tuple[str, int, str]], str], width: int) -> list[Line]:
    """Two charts (title, rows, what to say when there are none): side by side when both
    fit half the width, titles included; else one below the other (a narrow terminal
    never wraps or cuts a title)."""
    def chart(title: str, rows: list[tuple[str, int, str]], none: str, room: int) -> list[Line]:
        return [[(title, "bold")], *(bars(rows, room) if rows else [[(none, "dim")]])]

    half = (width - GAP) // 2
    a, b = chart(*left, half), chart(*right, half)
    if max(_width(line) for line in (*a, *b)) <= half:
        return side_by_side(a, b, half)
    return [*chart(*left, width), [], *chart(*right, width)]


def layout(stats: dict[str, Any], width: int = MAX_WIDTH) -> list[Line]:
    width = max(MIN_WIDTH, min(width, MAX_WIDTH))
    lines: list[Line] = _summary(stats, width)
    shown = _filters_text(stats.get("filters") or {})
    if shown:
        lines += _wrapped(shown, width, "dim")
    lines.append([])

    status_rows = [(STATUS_TITLES[s].lower(), int(stats.get(s, 0)), STATUS_STYLES[s])
                   for s in ("pending", "in_progress", "done", "abandoned")]
    if stats.get("other"):
        status_rows.append(("other", int(stats["other"]), STATUS_STYLES["other"]))
    by_priority = stats.get("open_by_priority") or {}
    priority_rows = [(p, int(by_priority.get(p, 0)), PRIORITY_STYLES[p])
                     for p in ("high", "medium", "low")]
    if by_priority.get("other"):
        priority_rows.append(("other", int(by_priority["other"]), STATUS_STYLES["other"]))
    lines += pair(("Tasks by status", status_rows, ""),
                  ("Open tasks by priority", priority_rows, ""), width)
    lines.append([])
    lines += _weeks(stats.get("weeks") or [], width)
    lines.append([])

    age_rows = [(row["bucket"], int(row["count"]), "cyan") for row in stats.get("open_age") or []
                if row["bucket"] != "unknown" or row["count"]]
    tag_rows = [("#" + _clip(inert(t["tag"]), 14), int(t["count"]), "cyan")
                for t in stats.get("top_tags") or []]
    lines += pair(("Age of open tasks", age_rows, ""),
                  ("Top tags (open tasks)", tag_rows, "no tags"), width)
    return lines


def _summary(stats: dict[str, Any], width: int) -> list[Line]:
    """`7 tasks: 4 open, 0 done, 3 abandoned`, broken after a comma where too wide."""
    total, open_ = int(stats.get("total", 0)), int(stats.get("open", 0))
    parts = [f"{_number(open_)} open", f"{_number(int(stats.get('done', 0)))} done",
             f"{_number(int(stats.get('abandoned', 0)))} abandoned"]
    if stats.get("other"):
        parts.append(f"{_number(int(stats['other']))} of another status")
    words = [part + "," for part in parts[:-1]] + parts[-1:]
    noun = "task" if total == 1 else "tasks"
    lines: list[Line] = [[(f"{_number(total)} {noun}", "bold"), (":", None)]]
    for word in words:
        if _width(lines[-1]) + 1 + cells(word) > width:
            lines.append([(" ", None)])  # the next line, indented
        lines[-1].append((" " + word, None))
    return lines


def _wrapped(text: str, width: int, style: str | None) -> list[Line]:
    """`text` broken between words where too wide, the next lines indented by one: a
    totals line is never cut (`(last 12 weeks: 1,200 filed, 120 finish…` at 40)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and cells(lines[-1]) + 1 + cells(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append((" " if lines else "") + word)
    return [[(_clip(line, width), style)] for line in lines]


def _filters_text(filters: dict[str, Any]) -> str:
    shown = []
    if filters.get("since"):
        shown.append(f"filed since {inert(filters['since'])}")
    if filters.get("session"):
        shown.append(f"session {inert(filters['session'])}")
    if filters.get("tags"):
        shown.append("tagged " + " or ".join("#" + inert(t) for t in filters["tags"]))
    return ("Only tasks " + ", ".join(shown)) if shown else ""


def _weeks(weeks: list[dict[str, Any]], width: int) -> list[Line]:
    label_w = 10  # 2026-11-23
    count_w = max((len(_number(max(w["filed"], w["finished"]))) for w in weeks), default=1)
    bar_w = max(2, (width - label_w - 2 * count_w - 5) // 2)
    largest = max((max(w["filed"], w["finished"]) for w in weeks), default=0)
    filed = sum(w["filed"] for w in weeks)
    finished = sum(w["finished"] for w in weeks)
    title = "Filed vs finished per week"
    totals = f"(last {len(weeks)} weeks: {_number(filed)} filed, {_number(finished)} finished)"
    heading: list[Line] = ([[(f"{title} {totals}", "bold")]]
                           if cells(title) + 1 + cells(totals) <= width
                           else [[(title, "bold")], *_wrapped(totals, width, "dim")])
    lines: list[Line] = [*heading,
                         [("week of".ljust(label_w) + " ", "dim"),
                          ("filed".ljust(bar_w + count_w + 2), "yellow"), ("finished", "green")]]
    for week in weeks:
        a = bar(week["filed"], largest, bar_w)
        b = bar(week["finished"], largest, bar_w)
        lines.append([
            (week["start"].ljust(label_w) + " ", None),
            (a, "yellow"), (" " * (bar_w - len(a)) + " ", None),
            (_number(week["filed"]).rjust(count_w) + " ", None),
            (b, "green"), (" " * (bar_w - len(b)) + " ", None),
            (_number(week["finished"]).rjust(count_w), None),
        ])
    return lines


def draw(stats: dict[str, Any], *, color: bool, width: int = MAX_WIDTH) -> str:
    """The charts as text; ANSI styles (through rich) only when `color`."""
    lines = layout(stats, width)
    if not color:
        return "\n".join("".join(text for text, _s in line).rstrip() for line in lines)
    import io

    from rich.console import Console
    from rich.text import Text

    out = io.StringIO()
    console = Console(file=out, width=max(MIN_WIDTH, min(width, MAX_WIDTH)),
                      force_terminal=True, highlight=False, emoji=False, markup=False,
                      soft_wrap=True, legacy_windows=False)
    for line in lines:
        text = Text(no_wrap=True, end="\n")
        for part, style in line:
            text.append(part, style=style)
        text.rstrip()
        console.print(text)
    return out.getvalue().rstrip("\n")
