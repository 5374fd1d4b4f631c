"""`tasks stats` in the terminal: the series of `aidp.insights`, drawn with rich.

Only the human `stats` imports this module (and rich with it); `--json` never does.
The drawing fits 80 columns (less on a narrower terminal) and is plain text without
colour (not a terminal, or NO_COLOR): the bars are block characters either way.
"""

from __future__ import annotations

import io
from typing import Any

from aidp.render import STATUS_TITLES, inert

MAX_WIDTH = 80
_EIGHTHS = " ▏▎▍▌▋▊▉"
STATUS_STYLES = {"pending": "yellow", "in_progress": "cyan", "done": "green",
                 "abandoned": "red", "other": "magenta"}
PRIORITY_STYLES = {"high": "red", "medium": "yellow", "low": "green"}


def bar(value: int, largest: int, width: int) -> str:
    """A horizontal bar of `width` cells at most, in eighths of a cell; a value above
    zero always shows at least a sliver."""
    if value <= 0 or largest <= 0 or width <= 0:
        return ""
    eighths = max(1, round(value / largest * width * 8))
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def _number(n: int) -> str:
    return f"{n:,}"


def draw(stats: dict[str, Any], *, color: bool, width: int = MAX_WIDTH) -> str:
    """The whole picture as text (ANSI styles only when `color`)."""
    from rich.console import Console, Group
    from rich.table import Table
    from rich.text import Text

    width = max(40, min(width, MAX_WIDTH))
    out = io.StringIO()
    console = Console(
        file=out, width=width, color_system="standard" if color else None,
        force_terminal=color, no_color=not color, highlight=False, emoji=False,
        legacy_windows=False, soft_wrap=False,
    )

    def heading(text: str) -> Text:
        return Text(text, style="bold")

    def bars(rows: list[tuple[str, int, str]], bar_width: int) -> Table:
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, width=bar_width)
        table.add_column(justify="right", no_wrap=True)
        largest = max((n for _label, n, _style in rows), default=0)
        for label, n, style in rows:
            table.add_row(Text(label), Text(bar(n, largest, bar_width), style=style),
                          Text(_number(n)))
        return table

    half = (width - 3) // 2
    status_rows = [(STATUS_TITLES[s].lower(), int(stats.get(s, 0)), STATUS_STYLES[s])
                   for s in ("pending", "in_progress", "done", "abandoned")]
    if stats.get("other"):
        status_rows.append(("other", int(stats["other"]), STATUS_STYLES["other"]))
    by_priority = stats.get("open_by_priority") or {}
    priority_rows = [(p, int(by_priority.get(p, 0)), PRIORITY_STYLES[p])
                     for p in ("high", "medium", "low")]
    label_width = 11
    count_width = max(len(_number(n)) for _l, n, _s in status_rows + priority_rows)
    side_bar = max(4, half - label_width - count_width - 2)

    parts: list[Any] = [_summary(stats)]
    filters = stats.get("filters") or {}
    shown = _filters_text(filters)
    if shown:
        parts.append(Text(shown, style="dim"))
    parts.append(Text(""))

    top = Table.grid(padding=(0, 3))
    top.add_column(width=half)
    top.add_column(width=half)
    top.add_row(heading("Tasks by status"), heading("Open tasks by priority"))
    top.add_row(bars(status_rows, side_bar), bars(priority_rows, side_bar))
    parts.extend([top, Text("")])

    parts.append(_weeks(stats.get("weeks") or [], width, heading))
    parts.append(Text(""))

    ages = [row for row in stats.get("open_age") or []
            if row["bucket"] != "unknown" or row["count"]]
    age_rows = [(row["bucket"], int(row["count"]), "cyan") for row in ages]
    tags = stats.get("top_tags") or []
    bottom = Table.grid(padding=(0, 3))
    bottom.add_column(width=half)
    bottom.add_column(width=half)
    age_count = max((len(_number(n)) for _l, n, _s in age_rows), default=1)
    tag_rows = [("#" + _clip(inert(t["tag"]), 12), int(t["count"]), "cyan") for t in tags]
    tag_label = max((len(label) for label, _n, _s in tag_rows), default=4)
    tag_count = max((len(_number(n)) for _l, n, _s in tag_rows), default=1)
    bottom.add_row(heading("Age of open tasks"), heading("Top tags (open tasks)"))
    bottom.add_row(
        bars(age_rows, max(4, half - 11 - age_count - 2)),
        bars(tag_rows, max(4, half - tag_label - tag_count - 2)) if tag_rows
        else Text("no tags", style="dim"),
    )
    parts.append(bottom)

    console.print(Group(*parts))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _summary(stats: dict[str, Any]) -> Any:
    from rich.text import Text

    total, open_ = int(stats.get("total", 0)), int(stats.get("open", 0))
    text = Text()
    text.append(f"{_number(total)} tasks", style="bold")
    text.append(f": {_number(open_)} open, {_number(int(stats.get('done', 0)))} done, "
                f"{_number(int(stats.get('abandoned', 0)))} abandoned")
    if stats.get("other"):
        text.append(f", {_number(int(stats['other']))} of another status")
    return text


def _filters_text(filters: dict[str, Any]) -> str:
    shown = []
    if filters.get("since"):
        shown.append(f"filed since {inert(filters['since'])}")
    if filters.get("session"):
        shown.append(f"session {inert(filters['session'])}")
    if filters.get("tags"):
        shown.append("tagged " + " or ".join("#" + inert(t) for t in filters["tags"]))
    return ("Only tasks " + ", ".join(shown)) if shown else ""


def _weeks(weeks: list[dict[str, Any]], width: int, heading: Any) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    label = 10  # "2026-W48 " or "Nov 23"
    counts = max((len(_number(max(w["filed"], w["finished"]))) for w in weeks), default=1)
    bar_width = max(4, (width - label - 2 * counts - 6) // 2)
    largest = max((max(w["filed"], w["finished"]) for w in weeks), default=0)
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True, width=label)
    table.add_column(no_wrap=True, width=bar_width)
    table.add_column(justify="right", no_wrap=True, width=counts)
    table.add_column(no_wrap=True, width=bar_width)
    table.add_column(justify="right", no_wrap=True, width=counts)
    table.add_row(Text("week of", style="dim"), Text("filed", style="yellow"), Text(""),
                  Text("finished", style="green"), Text(""))
    for week in weeks:
        table.add_row(
            Text(week["start"]),
            Text(bar(week["filed"], largest, bar_width), style="yellow"),
            Text(_number(week["filed"])),
            Text(bar(week["finished"], largest, bar_width), style="green"),
            Text(_number(week["finished"])),
        )
    filed = sum(w["filed"] for w in weeks)
    finished = sum(w["finished"] for w in weeks)
    return Group(
        heading(f"Filed vs finished per week (last {len(weeks)} weeks: "
                f"{_number(filed)} filed, {_number(finished)} finished)"),
        table,
    )
