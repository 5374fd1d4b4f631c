"""`tasks stats` fits every width from 40 to 80 columns (docs/guide.md promises 40): no
line longer than the width, and no heading wrapped or cut."""

from __future__ import annotations

import json

import pytest

from aidp.views import charts

HEADINGS = ("Tasks by status", "Open tasks by priority", "Filed vs finished per week",
            "Age of open tasks", "Top tags (open tasks)")


@pytest.fixture
def stats(cli) -> dict:
    for n in range(12):
        assert cli("tasks", "add", f"Task {n}", "-p", ("high", "low")[n % 2],
                   "-t", f"area-with-a-long-name-{n % 3}", "-q").code == 0
    assert cli("tasks", "done", *json.loads(cli("tasks", "list", "--format", "json").out)[0]
               ["id"].split()).code == 0
    return json.loads(cli("tasks", "stats", "--json").out)


def big(stats: dict) -> dict:
    """The same series with counts of a big backlog (10 million)."""
    many = 10_000_000
    out = {**stats, **{k: many for k in ("total", "open", "done", "abandoned", "pending",
                                         "in_progress")}}
    out["open_by_priority"] = {k: many for k in ("high", "medium", "low")}
    out["weeks"] = [{**w, "filed": many, "finished": many} for w in stats["weeks"]]
    out["open_age"] = [{**a, "count": many} for a in stats["open_age"]]
    out["top_tags"] = [{**t, "count": many} for t in stats["top_tags"]]
    return out


@pytest.mark.parametrize("width", [40, 41, 45, 50, 60, 79, 80])
def test_every_line_fits_and_every_heading_is_whole(stats, width) -> None:
    for series in (stats, big(stats)):
        lines = charts.draw(series, color=False, width=width).splitlines()
        too_wide = [line for line in lines if charts.cells(line) > width]
        assert too_wide == [], (width, too_wide)
        for heading in HEADINGS:
            assert any(line.startswith(heading) or f"   {heading}" in line
                       for line in lines), (width, heading)


def test_at_40_the_pairs_stack_and_at_80_they_stand_side_by_side(stats) -> None:
    narrow = charts.draw(stats, color=False, width=40).splitlines()
    assert "Tasks by status" in narrow and "Open tasks by priority" in narrow
    assert "Filed vs finished per week" in narrow
    wide = charts.draw(stats, color=False, width=80).splitlines()
    assert any(line.startswith("Tasks by status") and "Open tasks by priority" in line
               for line in wide)
    assert any(line.startswith("Filed vs finished per week (last 12 weeks: 12 filed, "
                               "1 finished)") for line in wide)
