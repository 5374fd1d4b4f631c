"""`tasks list -f csv` and `-f markdown` with awkward titles (issue 14): the CSV is the
csv module's (the same writer as `tasks export -f csv`), reads back with `csv` to the
same fields and imports back to the same tasks; a Markdown table cell can neither end
early (a pipe) nor break the row (a newline)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidp.core.model import format_ts

FIXTURES = [HealthCheck.function_scoped_fixture]
AWKWARD = ["a, b", 'say "hi"', "line one\nline two", "crlf\r\nend", "pipe | here",
           "back\\slash", "ends with \\", "\\|", "'quote", " lead and trail ", "=1+2",
           "tab\there", "ünïcode ✓", "a\u202eb"]
titles = st.text(st.sampled_from([*"ab ,;\"'|\\\n\r\t=-ü✓"]), min_size=1, max_size=12).filter(
    lambda s: s.strip())
tag_lists = st.lists(st.text(st.sampled_from([*"ab,\" ü"]), min_size=1, max_size=4), max_size=3)


def task(n: int, description: str, tags: list[str]) -> dict:
    stamp = format_ts(1_700_000_000_000_000 + n)
    return {"id": f"task_1700000000_{n:08x}", "description": description, "status": "pending",
            "priority": ("high", "medium", "low")[n % 3], "created_at": stamp,
            "updated_at": stamp, "tags": tags, "session": "s,1"}


def write(project: Path, records: list[dict]) -> None:
    path = project / ".aidp" / "tasklist.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def spreadsheet_safe(text: str) -> str:
    """A CSV cell as docs/guide.md says export writes it: a "'" before text that starts
    (after any "'") with =, +, -, @, a tab or a carriage return."""
    return "'" + text if text.lstrip("'")[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def csv_tags(cell: str) -> list[str]:
    """What the CSV says the tags are: comma-separated, or a JSON list when one holds a
    comma (docs/guide.md, Export formats)."""
    return orjson.loads(cell) if cell.startswith("[") else [t for t in cell.split(",") if t]


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURES)
@given(st.lists(st.tuples(titles, tag_lists), min_size=1, max_size=4))
def test_csv_reads_back_with_the_csv_module_to_the_same_fields(cli, project: Path,
                                                               rows) -> None:
    records = [task(n, text, list(dict.fromkeys(t.strip() for t in tags if t.strip())))
               for n, (text, tags) in enumerate(rows)]
    write(project, records)
    result = cli("tasks", "list", "--all", "--sort", "created", "-f", "csv", "--raw")
    assert result.code == 0, result
    got = read_csv(result.out)
    expected = sorted(records, key=lambda r: r["created_at"], reverse=True)
    assert [r["id"] for r in got] == [r["id"] for r in expected]
    for row, record in zip(got, expected, strict=True):
        for key in ("description", "status", "priority", "session", "created_at",
                    "updated_at"):
            assert row[key] == record[key], key
        assert csv_tags(row["tags"]) == record["tags"]
        assert row["extra"] == ""


def test_csv_is_the_export_writer_and_imports_back(cli, project: Path, tmp_path: Path) -> None:
    records = [task(n, text, ["x,y", "plain"] if n % 2 else ["plain"])
               for n, text in enumerate(AWKWARD)]
    write(project, records)
    listed = cli("tasks", "list", "--all", "-f", "csv")
    assert listed.code == 0, listed
    exported = cli("tasks", "export", "-f", "csv")
    assert sorted(listed.out.splitlines()) == sorted(exported.out.splitlines())
    assert [r["description"] for r in read_csv(listed.out)] == [
        spreadsheet_safe(r["description"]) for r in reversed(records)]
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "in.csv").write_text(listed.out, newline="")
    assert cli("--dir", str(copy), "init").code == 0
    imported = cli("--dir", str(copy), "tasks", "import", str(copy / "in.csv"), "--from", "csv")
    assert imported.code == 0, imported
    back = orjson.loads(cli("--dir", str(copy), "tasks", "list", "--all", "--json").out)
    assert {r["id"]: r for r in back} == {r["id"]: r for r in records}


def markdown_cells(text: str) -> list[list[str]]:
    """The table's rows as a CommonMark + GFM-tables parser sees them (markdown-it-py,
    which rich already depends on): each cell's text with escapes undone."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    rows: list[list[str]] = []
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append("".join(c.content for c in token.children or []))
    return rows


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURES)
@given(st.lists(titles, min_size=1, max_size=4))
def test_markdown_cells_keep_their_columns_whatever_the_title(cli, project: Path,
                                                               texts: list[str]) -> None:
    records = [task(n, text, ["t|1"]) for n, text in enumerate(texts)]
    write(project, records)
    result = cli("tasks", "list", "--all", "-f", "markdown")
    assert result.code == 0, result
    assert len(result.out.splitlines()) == len(records) + 2  # header, rule, one per task
    rows = markdown_cells(result.out)
    assert rows[0] == ["id", "status", "priority", "description", "tags", "created_at"]
    by_id = {r["id"]: r for r in records}
    for row in rows[1:]:
        assert len(row) == 6, row
        record = by_id[row[0]]
        shown = record["description"].replace("\r\n", "<br>").replace("\r", "<br>")
        shown = shown.replace("\n", "<br>").replace("\t", "\\x09")
        assert row[3] == shown.strip(" ")  # a cell is trimmed, as Markdown does
        assert row[4] == "t|1"


def test_markdown_escapes_pipes_newlines_and_invisible_characters(cli, project: Path) -> None:
    write(project, [task(0, "a | b\nc \\| d\u202e", [])])
    out = cli("tasks", "list", "-f", "markdown").out.splitlines()
    assert len(out) == 3
    # shown inert (\u202e), its backslash escaped like the stored one: renders as typed
    assert "| a \\| b<br>c \\\\\\| d\\\\u202e |" in out[2]
    assert markdown_cells("\n".join(out))[1][3] == "a | b<br>c \\| d\\u202e"
