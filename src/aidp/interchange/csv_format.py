"""CSV, with the csv module. Export writes every task key (in the stored order) and an
`extra` column holding any other keys as JSON, so that importing aidp's own CSV gives
back the same records. Import also takes a spreadsheet's CSV: a header row naming
columns like `title`/`description`, `status`, `priority`, `tags`/`labels`,
`created_at`; other columns are kept in the import note (docs/guide.md).

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage
return before one) as a formula: export puts a `'` before such a cell, which
spreadsheets show as text (OWASP's advice on CSV injection), unless asked for raw text.
Reading aidp's own CSV back takes that `'` off again, so both round-trip."""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Sequence
from typing import Any

import orjson

from aidp.core.model import TASK_ID_RE, TASK_KEY_ORDER, Record
from aidp.interchange import BadFile, Incoming, build_task, choice, description, tags, timestamp
from aidp.interchange.native import in_filing_order, settle_shown, shown_item

EXTRA = "extra"
COLUMNS = (*TASK_KEY_ORDER, EXTRA)
_KNOWN = frozenset(TASK_KEY_ORDER)

STATUS_WORDS = {
    **dict.fromkeys(("pending", "todo", "to do", "to-do", "open", "new", "backlog",
                     "waiting", "blocked", ""), "pending"),
    **dict.fromkeys(("in_progress", "in progress", "in-progress", "started", "active",
                     "doing", "wip"), "in_progress"),
    **dict.fromkeys(("done", "completed", "complete", "closed", "finished", "resolved",
                     "fixed"), "done"),
    **dict.fromkeys(("abandoned", "cancelled", "canceled", "deleted", "wontfix",
                     "won't fix", "dropped", "rejected", "not planned"), "abandoned"),
}
PRIORITY_WORDS = {
    **dict.fromkeys(("high", "h", "urgent", "critical", "p0", "p1"), "high"),
    **dict.fromkeys(("medium", "m", "normal", "p2", ""), "medium"),
    **dict.fromkeys(("low", "l", "minor", "p3", "p4"), "low"),
}
_TITLE_COLUMNS = ("description", "title", "summary", "name", "task")
# What no cell may hold: control characters but tab and line breaks (a cell may span
# lines). NUL among them: a spreadsheet's "Unicode text" (UTF-16) read as UTF-8 is
# mostly NULs, and the csv module passes them through.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_TAG_COLUMNS = ("tags", "labels", "tag", "label")


# A cell a spreadsheet would take for a formula, after any "'" already there: so the
# "'" export adds is told from one the text had, and import takes off only its own. A
# formula character after white space (a space, a line feed, a no-break space; the
# spreadsheet trims it), a fullwidth or small look-alike (＝ ＋ － ＠, ﹦ ﹢ ﹣ ﹫: some
# spreadsheets fold them to ASCII) and DDE's "|" count too.
_FORMULA = re.compile(r"'*(?:[\t\r]|\s*[=+\-@|\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b])")


def neutral(cell: str) -> str:
    """`cell` as export writes it: a "'" first when a spreadsheet would run it."""
    return "'" + cell if _FORMULA.match(cell) else cell


def unneutral(cell: str) -> str:
    """What `neutral` was given: the "'" it added taken off (raw text is left alone)."""
    return cell[1:] if cell.startswith("'") and _FORMULA.match(cell, 1) else cell


def _tags_cell(values: list[str]) -> str:
    if any("," in t or not t or t != t.strip() for t in values):
        return orjson.dumps(values).decode()  # a tag a comma list cannot carry
    return ",".join(values)


def dump(tasks: Sequence[Record], *, raw: bool = False) -> bytes:
    """aidp's CSV of `tasks`; formula-like cells neutralised (`neutral`) unless `raw`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # The minimal quoting quotes a field holding "\n" (the line terminator) but not one
    # holding a lone "\r", which a reader takes for a line end: such a row is quoted whole.
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(COLUMNS)
    for task in tasks:
        row = []
        for key in TASK_KEY_ORDER:
            value = task.get(key)
            if key == "tags":
                row.append(_tags_cell(list(value or [])))
            elif value is None:
                row.append("")
            elif isinstance(value, str):
                row.append(value)
            else:  # a foreign writer's non-text value: JSON, so it comes back the same
                row.append(orjson.dumps(value).decode())
        others = {k: v for k, v in task.items() if k not in _KNOWN}
        row.append(orjson.dumps(others).decode() if others else "")
        if not raw:
            row = [neutral(cell) for cell in row]
        (quoted if any("\r" in cell for cell in row) else writer).writerow(row)
    return out.getvalue().encode()


def _split_tags(cell: str, where: str) -> list[str]:
    cell = cell.strip()
    if cell.startswith("["):
        try:
            value = orjson.loads(cell)
        except orjson.JSONDecodeError:
            raise BadFile(where, "field 'tags' starts with '[' but is not a JSON list") from None
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise BadFile(where, "field 'tags' must be a list of strings")
        return value
    return [t for t in (part.strip() for part in cell.replace(";", ",").split(",")) if t]


def parse(text: str, name: str) -> list[Incoming]:
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise BadFile(name, f"is not valid CSV ({exc})") from None
    rows_at = _row_lines(text)
    _refuse_controls(rows, rows_at, name)
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise BadFile(f"{name}: line 1", "no header row (column names such as title, status)")
    header = [cell.strip().lower() for cell in rows[0]]
    duplicate = next((c for c in header if c and header.count(c) > 1), None)
    if duplicate:
        raise BadFile(f"{name}: line 1", f"column '{duplicate}' appears twice")
    title = next((c for c in _TITLE_COLUMNS if c in header), None)
    if title is None:
        raise BadFile(f"{name}: line 1", "no title column: name one description, title, "
                                         "summary or name")
    items = []
    seen: dict[str, int] = {}
    for n, row in enumerate(rows[1:], start=1):
        if not any(cell.strip() for cell in row):
            continue
        where = f"{name}: line {rows_at[n] if n < len(rows_at) else n + 1}"
        if len(row) > len(header):
            raise BadFile(where, f"{len(row)} fields but the header names {len(header)}")
        cells = dict(zip(header, row + [""] * (len(header) - len(row)), strict=True))
        line = rows_at[n] if n < len(rows_at) else n + 1
        if TASK_ID_RE.fullmatch(cells.get("id", "").strip()) and "created_at" in cells:
            items.append(_native(cells, where, line))
        else:
            item = _foreign(cells, title, where, line)
            seen[item.key] = seen.get(item.key, 0) + 1
            if seen[item.key] > 1:  # the same row twice: the second is another task
                item.key = f"{item.key}-{seen[item.key]}"
            items.append(item)
    settle_shown(items)
    return in_filing_order(items)


def _refuse_controls(rows: list[list[str]], rows_at: list[int], name: str) -> None:
    """The first cell with a control character (NUL included) refuses the file, naming
    its line, its column and the character: aidp stores none (`tasks add` refuses
    them too), and dropping one would change the text without a word."""
    header = [cell.strip() for cell in rows[0]] if rows else []
    for n, row in enumerate(rows):
        for column, cell in enumerate(row):
            found = _CONTROL.search(cell)
            if found is None:
                continue
            named = f"column {_clip(header[column])!r}" if n and column < len(header) \
                and header[column] else f"column {column + 1}"
            char = found.group()
            what = "a NUL byte (\\x00: is the file UTF-16? save it as UTF-8)" \
                if char == "\0" else f"a control character ({char!r})"
            line = rows_at[n] if n < len(rows_at) else n + 1
            raise BadFile(f"{name}: line {line}", f"{named} holds {what}; only tab and "
                                                  "line breaks are taken")


def _clip(text: str) -> str:
    return _CONTROL.sub("?", text if len(text) <= 40 else text[:39] + "…")


def _row_lines(text: str) -> list[int]:
    """The line each CSV row starts on (a quoted cell may span lines)."""
    starts = []
    reader = csv.reader(io.StringIO(text, newline=""))
    line = 1
    while True:
        starts.append(line)
        try:
            next(reader)
        except StopIteration:
            break
        line = reader.line_num + 1
    return starts


def _native(cells: dict[str, str], where: str, line: int) -> Incoming:
    cells = {key: unneutral(value) for key, value in cells.items()}  # aidp's own export
    record: Record = {}
    for key in TASK_KEY_ORDER:
        value = cells.get(key, "")
        if key == "tags":
            record["tags"] = _split_tags(value, where)
        elif value != "":
            record[key] = value
    extra = cells.get(EXTRA, "").strip()
    if extra:
        try:
            others = orjson.loads(extra)
        except orjson.JSONDecodeError:
            raise BadFile(where, "field 'extra' is not a JSON object") from None
        if not isinstance(others, dict):
            raise BadFile(where, "field 'extra' is not a JSON object")
        record.update({k: v for k, v in others.items() if k not in _KNOWN})
    unknown = {k: v for k, v in cells.items() if k not in _KNOWN and k != EXTRA and v != ""}
    if unknown:
        record.update(unknown)
    # The extra keys, like a listing's keys beside a record, never go into the task
    # record: each into its own record, or the import's note (native.shown_item).
    return shown_item(record, where, line)


def _foreign(cells: dict[str, str], title: str, where: str, line: int) -> Incoming:
    extra: dict[str, Any] = {}
    used = {title}
    fields: dict[str, Any] = {"description": description(cells[title], extra, title, where)}
    if "status" in cells:
        used.add("status")
        fields["status"] = choice(cells["status"], STATUS_WORDS, where, "status")
    if "priority" in cells:
        used.add("priority")
        fields["priority"] = choice(cells["priority"], PRIORITY_WORDS, where, "priority")
    tag_column = next((c for c in _TAG_COLUMNS if c in cells), None)
    if tag_column:
        used.add(tag_column)
        fields["tags"] = tags(_split_tags(cells[tag_column], where), extra, tag_column)
    for key in ("created_at", "updated_at", "started_at", "completed_at", "abandoned_at"):
        if key in cells:
            used.add(key)
            fields[key] = timestamp(cells[key].strip(), where, key)
    for key in ("session", "discovered_during", "abandoned_reason"):
        if key in cells:
            used.add(key)
            fields[key] = cells[key].strip() or None
    for key, value in cells.items():
        if key not in used and key and value.strip():
            extra[key] = value
    task = build_task(fields)
    source_key = cells.get("id", "").strip()
    if not source_key:  # no id: the row's own content names it, stable across imports
        basis = orjson.dumps([cells.get(title, ""), cells.get("created_at", "")])
        source_key = "row-" + hashlib.sha256(basis).hexdigest()[:16]
    return Incoming(source_key, task, extra, line=line)
