"""SVG charts for the HTML report (`aidp.views.page`): horizontal bars, weekly columns, a
line over time. Drawn as text, so they show without scripts; every label escaped."""

from __future__ import annotations

from html import escape
from typing import Any


def esc(value: object) -> str:
    return escape(value if isinstance(value, str) else str(value), quote=True)


def num(value: int) -> str:
    return f"{value:,}"


def hbars(title: str, rows: list[tuple[str, int, str]], *, width: int = 420) -> str:
    """Horizontal bars: one row per (label, value, colour)."""
    row_h, label_w, value_w = 26, 110, 60
    bar_w = width - label_w - value_w
    largest = max((v for _l, v, _c in rows), default=0)
    height = max(row_h * len(rows), row_h) + 8
    parts = [f'<svg class="chart" role="img" aria-label="{esc(title)}" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}"><title>{esc(title)}</title>']
    if not rows:
        parts.append('<text x="0" y="18" class="muted">nothing yet</text>')
    for i, (label, value, color) in enumerate(rows):
        y = 4 + i * row_h
        w = 0 if largest == 0 else max(2.0, value / largest * bar_w) if value else 0
        parts.append(
            f'<text x="0" y="{y + 16}" class="label">{esc(label)}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 8}" rx="3" '
            f'fill="{color}"><title>{esc(label)}: {num(value)}</title></rect>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 16}" class="value">{num(value)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def weekly(title: str, weeks: list[dict[str, Any]], *, width: int = 860,
           height: int = 240) -> str:
    """Filed vs finished per week: two bars per week."""
    left, bottom, top = 44, 36, 16
    plot_w, plot_h = width - left - 10, height - bottom - top
    largest = max((max(w["filed"], w["finished"]) for w in weeks), default=0) or 1
    step = plot_w / max(len(weeks), 1)
    bar = max(step * 0.36, 1)
    parts = [f'<svg class="chart" role="img" aria-label="{esc(title)}" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}"><title>{esc(title)}</title>',
             _axis(left, top, plot_w, plot_h, largest)]
    for i, week in enumerate(weeks):
        x = left + i * step + step * 0.12
        for j, (key, color) in enumerate((("filed", "#d4a017"), ("finished", "#3a9d4a"))):
            h = week[key] / largest * plot_h
            parts.append(
                f'<rect x="{x + j * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar:.1f}" '
                f'height="{h:.1f}" fill="{color}"><title>week of {esc(week["start"])}: '
                f'{num(week[key])} {key}</title></rect>')
        parts.append(f'<text x="{x + bar:.1f}" y="{height - bottom + 16}" class="tick" '
                     f'text-anchor="middle">{esc(week["start"][5:])}</text>')
    parts.append(_legend(left, height - 6, [("filed", "#d4a017"), ("finished", "#3a9d4a")]))
    parts.append("</svg>")
    return "".join(parts)


def line(title: str, points: list[dict[str, Any]], *, width: int = 860,
         height: int = 240) -> str:
    """Open tasks at the end of each day: an area under a line."""
    left, bottom, top = 44, 36, 16
    plot_w, plot_h = width - left - 10, height - bottom - top
    largest = max((p["open"] for p in points), default=0) or 1
    count = max(len(points) - 1, 1)
    xy = [(left + i / count * plot_w, top + plot_h - p["open"] / largest * plot_h)
          for i, p in enumerate(points)]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    parts = [f'<svg class="chart" role="img" aria-label="{esc(title)}" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}"><title>{esc(title)}</title>',
             _axis(left, top, plot_w, plot_h, largest)]
    if xy:
        base = top + plot_h
        parts.append(f'<polygon class="area" points="{left:.1f},{base:.1f} {path} '
                     f'{xy[-1][0]:.1f},{base:.1f}"/>')
        parts.append(f'<polyline class="line" points="{path}"/>')
        for i in range(0, len(points), 7):
            x, _y = xy[i]
            parts.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" class="tick" '
                         f'text-anchor="middle">{esc(points[i]["date"][5:])}</text>')
        last = points[-1]
        parts.append(f'<circle cx="{xy[-1][0]:.1f}" cy="{xy[-1][1]:.1f}" r="3" '
                     f'class="dot"><title>{esc(last["date"])}: {num(last["open"])} open'
                     f'</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def _axis(left: float, top: float, plot_w: float, plot_h: float, largest: int) -> str:
    return (f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
            f'class="axis"/><line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" '
            f'class="axis"/><text x="{left - 6}" y="{top + 4}" class="tick" '
            f'text-anchor="end">{num(largest)}</text><text x="{left - 6}" y="{top + plot_h}" '
            f'class="tick" text-anchor="end">0</text>')


def _legend(x: float, y: float, items: list[tuple[str, str]]) -> str:
    out = []
    for label, color in items:
        out.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
                   f'<text x="{x + 14}" y="{y}" class="tick">{esc(label)}</text>')
        x += 14 + 8 * len(label) + 16
    return "".join(out)
