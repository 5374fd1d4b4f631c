"""`aidp tasks stats`: charts for people, the same series in --json, and filters."""

from __future__ import annotations

import json
import re

from aidp.core.model import format_ts, now_micros

ANSI = re.compile(r"\x1b\[")


def add(cli, *args: str) -> str:
    result = cli("tasks", "add", *args, "-q")
    assert result.code == 0, result
    return result.out.strip()


def test_stats_json_keeps_the_counts_and_adds_the_series(cli) -> None:
    a = add(cli, "Fix the parser", "-t", "bug", "-p", "high")
    add(cli, "Write docs", "-t", "docs", "-t", "bug")
    b = add(cli, "Old idea", "-p", "low")
    assert cli("tasks", "done", a).code == 0
    assert cli("tasks", "abandon", b, "No longer needed").code == 0
    result = cli("tasks", "stats", "--json")
    assert result.code == 0 and result.err == ""
    stats = json.loads(result.out)
    assert (stats["total"], stats["pending"], stats["in_progress"], stats["done"],
            stats["abandoned"], stats["open"]) == (3, 1, 0, 1, 1, 1)
    assert stats["open_by_priority"] == {"high": 0, "medium": 1, "low": 0, "other": 0}
    assert len(stats["weeks"]) == 12
    this_week = stats["weeks"][-1]
    assert (this_week["filed"], this_week["done"], this_week["abandoned"],
            this_week["finished"]) == (3, 1, 1, 2)
    assert stats["open_age"][0] == {"bucket": "under 1 day", "min_days": 0, "max_days": 1,
                                    "count": 1}
    assert stats["top_tags"] == [{"tag": "bug", "count": 1}, {"tag": "docs", "count": 1}]
    assert stats["filters"] == {"since": None, "session": None, "tags": []}


def test_human_stats_draw_bars_in_80_columns_without_colour_when_piped(cli) -> None:
    for n in range(30):
        add(cli, f"Task number {n}", "-t", f"area{n % 4}", "-p", ("high", "low")[n % 2])
    result = cli("tasks", "stats")
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    assert not ANSI.search(result.out)
    assert max(len(line) for line in lines) <= 80
    assert lines[0] == "30 tasks: 30 open, 0 done, 0 abandoned"
    text = result.out
    for heading in ("Tasks by status", "Open tasks by priority", "Filed vs finished per week",
                    "Age of open tasks", "Top tags (open tasks)"):
        assert heading in text
    pending = next(line for line in lines if line.startswith("pending"))
    assert re.fullmatch(r"pending +█+ 30 +high +█+ 15", pending.rstrip())
    assert "#area0" in text
    week = next(line for line in lines if line.startswith(format_ts(now_micros())[:4]) and "█" in line)
    assert re.search(r"█+\s+30\s", week)


def test_no_color_is_honoured_even_on_a_terminal(cli, monkeypatch) -> None:
    from aidp.views import charts

    add(cli, "Something", "-t", "x")
    stats = json.loads(cli("tasks", "stats", "--json").out)
    coloured = charts.draw(stats, color=True)
    plain = charts.draw(stats, color=False)
    assert ANSI.search(coloured) and not ANSI.search(plain)
    assert ANSI.sub("", re.sub(r"\x1b\[[0-9;]*m", "", coloured)).splitlines()[0] == \
        plain.splitlines()[0]
    narrow = charts.draw(stats, color=False, width=60)
    assert max(len(line) for line in narrow.splitlines()) <= 60


def test_filters_by_tag_session_and_since(cli) -> None:
    add(cli, "Tagged", "-t", "bug")
    add(cli, "Untagged")
    assert cli("--session", "other", "tasks", "add", "Elsewhere").code == 0
    by_tag = json.loads(cli("tasks", "stats", "--tag", "bug", "--json").out)
    assert by_tag["total"] == 1 and by_tag["filters"]["tags"] == ["bug"]
    by_session = json.loads(cli("tasks", "stats", "--session", "other", "--json").out)
    assert by_session["total"] == 1
    future = json.loads(cli("tasks", "stats", "--since", "2999-01-01", "--json").out)
    assert future["total"] == 0 and future["weeks"][-1]["filed"] == 0
    human = cli("tasks", "stats", "--tag", "bug")
    assert human.code == 0 and "Only tasks tagged #bug" in human.out


def test_a_bad_since_is_refused_with_the_accepted_forms(cli) -> None:
    result = cli("tasks", "stats", "--since", "someday")
    assert result.code == 2
    assert result.err.startswith("Error: Invalid --since 'someday': use an ISO date")
    assert result.out == ""


def test_empty_backlog_stats(cli) -> None:
    result = cli("tasks", "stats")
    assert result.code == 0 and result.out.startswith("0 tasks: 0 open")
    assert "no tags" in result.out


def test_piped_charts_do_not_import_rich(cli) -> None:
    """Scripts and CI read the charts without colour: they never pay rich's import."""
    from tests.test_startup import imported, offenders

    add(cli, "Something", "-t", "x")
    assert offenders(imported("tasks", "stats"), "tasks") == []
    assert offenders(imported("tasks", "stats", "--tag", "x", "--json"), "tasks") == []


def test_a_priority_this_version_does_not_know_is_counted_as_other(cli, project) -> None:
    """A newer writer's priority is neither dropped from the counts nor a crash:
    `open_by_priority` adds up to `open`. No priority at all is the default, medium."""
    add(cli, "Known priority", "-p", "high")
    path = project / ".aidp" / "tasklist.jsonl"
    line = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    urgent = {**line, "id": line["id"][:-4] + "beef", "priority": "urgent",
              "description": "From a newer writer"}
    bare = {k: v for k, v in line.items() if k != "priority"}
    bare.update(id=line["id"][:-4] + "cafe", description="No priority at all")
    with path.open("a", encoding="utf-8") as handle:
        for record in (urgent, bare):
            handle.write(json.dumps(record) + "\n")
    stats = json.loads(cli("tasks", "stats", "--json").out)
    assert stats["open"] == 3
    assert stats["open_by_priority"] == {"high": 1, "medium": 1, "low": 0, "other": 1}
    human = cli("tasks", "stats")
    assert human.code == 0 and "Traceback" not in human.err
    assert re.search(r"other\b.*\b1\b", human.out), human.out


def test_every_view_reads_a_stored_priority_the_same_way(cli, project) -> None:
    """model.priority_key, the one rule (review14 item 8): missing or null is medium (a
    null key counts as left out: docs/file-format.md, "Task records"); exactly high/medium/low are themselves;
    anything else ("HIGH", "urgent") is `other`, ◇ — in list, stats (plain fold and
    snapshot), prime, and the --priority filters of list and ready; sorting ranks
    `other` with medium."""
    add(cli, "Seed", "-p", "low")
    path = project / ".aidp" / "tasklist.jsonl"
    seed = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    stored = {"0001": None, "0002": "HIGH", "0003": "urgent", "0004": "high", "0005": ...}
    with path.open("a", encoding="utf-8") as handle:
        for n, (suffix, value) in enumerate(stored.items()):
            record = {**seed, "id": f"task_{1795000000 + n}_{suffix}aaaa",
                      "description": f"P {value}", "priority": value}
            if value is ...:
                del record["priority"]
            handle.write(json.dumps(record) + "\n")
    expected = {"P None": "medium", "P HIGH": "other", "P urgent": "other",
                "P high": "high", "P Ellipsis": "medium", "Seed": "low"}
    marker = {"high": "▲", "medium": "●", "low": "▼", "other": "◇"}
    for round_ in ("plain", "snapshot"):  # the second read answers from the snapshot
        listed = cli("tasks", "list")
        assert listed.code == 0, listed
        for description, key in expected.items():
            row = next(r for r in listed.out.splitlines() if description in r)
            assert marker[key] in row, (round_, row)
        stats = json.loads(cli("tasks", "stats", "--json").out)
        assert stats["open_by_priority"] == {"high": 1, "medium": 2, "low": 1, "other": 2}
        prime = cli("prime").out
        for description, key in expected.items():
            assert re.search(rf"\[{key}\] {description}\b", prime), (description, prime)
        for key in ("high", "medium", "low"):
            shown = {t["description"]
                     for t in json.loads(cli("tasks", "list", "-p", key, "--json").out)}
            assert shown == {d for d, k in expected.items() if k == key}
            ready = {t["description"]
                     for t in json.loads(cli("tasks", "ready", "-p", key, "--json").out)}
            assert ready == shown
    order = [t["description"] for t in json.loads(cli("tasks", "ready", "--json").out)]
    assert order[0] == "P high" and order[-1] == "Seed"  # other/none rank as medium
