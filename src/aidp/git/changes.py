"""What changed in the tasklist between two versions: `tasks changes`, and the summary
`sync` commits with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:

    from aidp.tasklist.log import Fold, TaskLog

from aidp.backlog import details
from aidp.tasklist.git_runner import file_at, has_commits, repo_of, verify_rev

# --- what changed ------------------------------------------------------------------------

# Task keys that a status change sets; an edit is a change of any other key (the body
# and type included: aidp.backlog.details).
_STATUS_KEYS = frozenset(("status", "updated_at", "started_at", "completed_at", "abandoned_at",
                          "abandoned_reason", "close_reason"))
# How a status change is told (the summary here, the diff driver in git/diff.py).
VERBS = {"in_progress": "started", "done": "done", "abandoned": "abandoned",
          "pending": "reopened"}


def _relevant_prefix(before: bytes, after: bytes) -> tuple[bytes, bytes] | None:
    """When `after` only appended to `before` (the usual case), the lines of `before`
    that matter for the appended ones: those of the tasks they touch, and TODO records.
    A fold of those gives the same answers for every touched task at a fraction of the
    cost of folding a long history. None otherwise."""
    if not after.startswith(before) or (before and not before.endswith(b"\n")):
        return None
    import orjson

    from aidp.tasklist.log import parse_line

    tail = after[len(before):]
    touched: set[bytes] = set()
    for raw in tail.split(b"\n"):
        record = parse_line(raw)
        if record is None:
            continue
        # a task's record; a typed record by its id and the task it names (a note, a
        # dependency, a claim, its body, type, close reason: kinds unknown here too)
        for tid in (record.get("id"), record.get("task") if "type" in record else None):
            if isinstance(tid, str):
                touched.add(orjson.dumps(tid))
    if len(touched) > 512:
        return None
    keep = [raw for raw in before.split(b"\n")
            if b'"type":"todo_' in raw or any(tid in raw for tid in touched)]
    return b"\n".join(keep) + b"\n", tail


def compare(before_data: bytes, after_data: bytes) -> dict[str, Any]:
    """What happened between two versions of the tasklist, from their folded states:
    tasks filed, status changes, edits, tasks no longer there, and TODO lists changed."""
    from aidp.tasklist.fields import fold_bytes

    quick = _relevant_prefix(before_data, after_data)
    if quick is not None:
        prefix, tail = quick
        before = fold_bytes(prefix)
        after = fold_bytes(prefix + tail)
    else:
        before = fold_bytes(before_data)
        after = fold_bytes(after_data)
    held_before, held_after = details.of_fold(before), details.of_fold(after)
    ids = [tid for tid in after.tasks if quick is None or tid not in before.tasks
           or after.tasks[tid] != before.tasks[tid]
           or held_after.get(tid) != held_before.get(tid)]
    filed: list[dict[str, Any]] = []
    status: list[dict[str, Any]] = []
    edited: list[dict[str, Any]] = []
    for tid in ids:
        new = {**after.tasks[tid], **held_after.get(tid, {})}
        old = before.tasks.get(tid)
        if old is not None:
            old = {**old, **held_before.get(tid, {})}
        if old is None:
            filed.append(new)
            if new.get("status") != "pending":
                status.append(_status_change(tid, new, None))
            continue
        if old == new:
            continue
        if old.get("status") != new.get("status"):
            status.append(_status_change(tid, new, old.get("status")))
        fields = {
            key: {"from": old.get(key), "to": new.get(key)}
            for key in sorted(set(old) | set(new) - _STATUS_KEYS)
            if key not in _STATUS_KEYS and old.get(key) != new.get(key)
        }
        if fields:
            edited.append({"id": tid, "description": new.get("description"), "fields": fields})
    removed = [] if quick is not None else [
        {"id": tid, "description": task.get("description")}
        for tid, task in before.tasks.items() if tid not in after.tasks
    ]
    result: dict[str, Any] = {"filed": filed, "status": status, "edited": edited,
                              "removed": removed, "todo": _todo_changes(before, after)}
    result.update(_record_changes(before, after, {t["id"] for t in filed}))
    result["lines"] = _lines_changed(before_data, after_data, quick)
    result["summary"] = summary(result)
    return result


# The typed records that show as a change of their own (the others show through the
# task they go with: its body, type and close reason as edits, its import record with
# the task filed, TODO records as TODO changes, task_fields beside each task change).
_TODO_KINDS = ("todo_list", "todo_head", "todo_item")
_IMPORT = "import_source"


def _record_changes(before: Fold, after: Fold, filed: set[str]) -> dict[str, Any]:
    """The work queue's records new or changed between the two folds — notes,
    dependencies, epic links, claims and releases — and typed records of any other
    kind (one this version does not know, say), which are shown as such, never as
    nothing."""
    from aidp.backlog import queue

    out: dict[str, list[dict[str, Any]]] = {"notes": [], "links": [], "claims": [],
                                            "other": []}
    for rid, record in after.typed.items():
        if before.typed.get(rid) == record:
            continue
        kind, task = record.get("type"), record.get("task")
        if kind in details.KINDS or kind in _TODO_KINDS or (
                kind == _IMPORT and task in filed):
            continue
        head = {"id": task, "description": (after.tasks.get(task) or {}).get("description")
                if isinstance(task, str) else None}
        if kind == queue.NOTE and isinstance(record.get("text"), str):
            out["notes"].append({**head, "text": record["text"],
                                 "author": record.get("author")})
        elif kind == queue.DEP and isinstance(record.get("blocked_by"), str):
            out["links"].append({**head, "kind": "blocked_by", "other": record["blocked_by"],
                                 "removed": record.get("removed") is True})
        elif kind == queue.PARENT:
            parent = record.get("parent")
            out["links"].append({**head, "kind": "parent", "other": parent
                                 if isinstance(parent, str) else None,
                                 "removed": not isinstance(parent, str)})
        elif kind == queue.CLAIM and isinstance(record.get("assignee"), str):
            out["claims"].append({**head, "assignee": record["assignee"],
                                  "released": bool(record.get("released_at"))})
        else:
            out["other"].append({"type": str(kind), "record": rid, "id": task
                                 if isinstance(task, str) else None})
    return out


def _lines_changed(before: bytes, after: bytes, quick: tuple[bytes, bytes] | None
                   ) -> dict[str, int]:
    """How many lines the new version adds and drops, as sets of lines: what a change
    that folds to nothing new (a compact, a repair, a repeated or damaged line) did."""
    if quick is not None:
        return {"added": sum(1 for raw in quick[1].split(b"\n") if raw.strip()),
                "removed": 0}
    old, new = set(before.split(b"\n")) - {b""}, set(after.split(b"\n")) - {b""}
    return {"added": len(new - old), "removed": len(old - new)}


def _status_change(tid: str, task: dict[str, Any], was: object) -> dict[str, Any]:
    return {"id": tid, "description": task.get("description"), "from": was,
            "to": task.get("status")}


def _todo_changes(before: Fold, after: Fold) -> list[dict[str, Any]]:
    from aidp import todos

    old = {t.session: t for t in todos.all_lists(before)}
    out = []
    for todo in sorted(todos.all_lists(after), key=lambda t: t.session):
        was = old.get(todo.session)
        was_items = {i["id"]: i for i in (was.visible if was else [])}
        now_items = {i["id"]: i for i in todo.visible}
        added = [i for n, i in now_items.items() if n not in was_items]
        removed = [i for n, i in was_items.items() if n not in now_items]
        completed = changed = 0
        for n, item in now_items.items():
            prior = was_items.get(n)
            if prior is None or todos.item_out(prior) == todos.item_out(item):
                continue
            if (todos.derived_status(item) == "completed"
                    and todos.derived_status(prior) != "completed"):
                completed += 1
            else:
                changed += 1
        state_changed = was is None or (was.active, was.paused) != (todo.active, todo.paused)
        if added or removed or completed or changed or (state_changed and (was or todo.items)):
            out.append({"session": todo.session, "added": len(added), "removed": len(removed),
                        "completed": completed, "changed": changed,
                        "active": bool(todo.visible), "paused": todo.paused})
    return out


def summary(changes: dict[str, Any]) -> str:
    """`2 filed, 1 done, 1 note, 1 dependency, 3 TODO changes`; for a new version that
    folds to nothing new, what it did to the lines; empty when nothing changed."""
    counts: dict[str, int] = {"filed": len(changes["filed"])}
    for change in changes["status"]:
        if change["from"] is None and change["to"] == "pending":
            continue
        verb = VERBS.get(str(change["to"]), "changed")
        counts[verb] = counts.get(verb, 0) + 1
    counts["edited"] = len(changes["edited"])
    counts["removed"] = len(changes["removed"])
    parts = [f"{n} {word}" for word, n in counts.items() if n]
    claims = changes.get("claims", [])
    for n, word in ((len(changes.get("notes", [])), ("note", "notes")),
                    (sum(1 for link in changes.get("links", []) if link["kind"] == "blocked_by"),
                     ("dependency", "dependencies")),
                    (sum(1 for link in changes.get("links", []) if link["kind"] == "parent"),
                     ("epic link", "epic links")),
                    (sum(1 for c in claims if not c["released"]), ("claim", "claims")),
                    (sum(1 for c in claims if c["released"]), ("release", "releases"))):
        if n:
            parts.append(f"{n} {word[n != 1]}")
    kinds: dict[str, int] = {}
    for record in changes.get("other", []):
        kinds[record["type"]] = kinds.get(record["type"], 0) + 1
    from aidp.core.terminal import inert  # a kind's name comes from the file

    parts += [f"{n} '{inert(kind[:40])}' record{'s' if n != 1 else ''}"
              for kind, n in sorted(kinds.items())]
    todo = sum(t["added"] + t["removed"] + t["completed"] + t["changed"] or 1
               for t in changes["todo"])
    if todo:
        parts.append(f"{todo} TODO change{'s' if todo != 1 else ''}")
    lines = changes.get("lines") or {}
    if not parts and (lines.get("added") or lines.get("removed")):
        moved = [f"{lines[k]} line{'s' if lines[k] != 1 else ''} {k}"
                 for k in ("added", "removed") if lines.get(k)]
        parts.append(f"no change to any task or TODO list ({', '.join(moved)})")
    return ", ".join(parts)


# --- what a merge overwrote ------------------------------------------------------------

_CLOSED = ("done", "abandoned")


def overwritten(base: bytes, ours: bytes, theirs: bytes, merged: bytes) -> list[dict[str, Any]]:
    """Same-field conflicts of a merge: each value that one side (`ours` or `theirs`,
    both from `base`) set and the merge (`merged`) replaced with the other side's. An
    entry: {"id", "description", "field", "side" (whose value was lost), "lost", "kept"};
    for tags, one entry per tag ("lost": "added"/"removed"), with "tag"; "claim_lost"
    when a status change between open states lost to a close it had not seen."""
    from aidp.tasklist.fields import fold_bytes
    from aidp.tasklist.fold import field_value, task_tags

    if ours.startswith(base) and theirs.startswith(base) and base.endswith(b"\n"):
        # The usual case, two sides that appended: only tasks both sides wrote can
        # conflict, and only their lines need folding.
        both = _touched(ours[len(base):]) & _touched(theirs[len(base):])
        if not both:
            return []
        if len(both) <= 256:
            base, ours, theirs, merged = (
                b"\n".join(line for line in data.split(b"\n") if any(t in line for t in both))
                + b"\n" for data in (base, ours, theirs, merged))
    folds = [fold_bytes(data) for data in (base, ours, theirs, merged)]
    was_all, mine_all, other_all, now_all = (fold.tasks for fold in folds)
    held = [details.of_fold(fold) for fold in folds]  # body, type: fields of their own
    out: list[dict[str, Any]] = []
    for tid, now in now_all.items():
        mine, other = mine_all.get(tid), other_all.get(tid)
        if mine is None or other is None:
            continue
        was = was_all.get(tid) or {}
        head = {"id": tid, "description": now.get("description")}
        for group in ("description", "priority", "status"):
            old, a, b, kept = (field_value(r, group) for r in (was, mine, other, now))
            if a in (b, old) or b == old or kept not in (a, b):
                continue
            side, lost = ("ours", a) if kept == b else ("theirs", b)
            if group == "status" and lost[0] == kept[0] == "in_progress":  # type: ignore[index]
                continue  # two claims: which one holds is told apart (outcomes.claim_outcomes)
            entry = {**head, "field": group, "side": side, "lost": lost, "kept": kept}
            if group == "status":
                entry["lost"], entry["kept"] = lost[0], kept[0]  # type: ignore[index]
                entry["claim_lost"] = entry["kept"] in _CLOSED and entry["lost"] not in _CLOSED
            out.append(entry)
        for key, default in ((details.BODY, None), (details.TYPE, details.DEFAULT_TYPE)):
            old, a, b, kept = (keys.get(tid, {}).get(key, default) for keys in held)
            if a in (b, old) or b == old or kept not in (a, b):
                continue
            side, lost = ("ours", a) if kept == b else ("theirs", b)
            out.append({**head, "field": key, "side": side, "lost": lost, "kept": kept})
        old_tags, now_tags = set(task_tags(was)), set(task_tags(now))
        for side, record in (("ours", mine), ("theirs", other)):
            tags = set(task_tags(record))
            for tag in sorted(tags ^ old_tags):
                if (tag in tags) != (tag in now_tags):
                    made = "added" if tag in tags else "removed"
                    out.append({**head, "field": "tags", "side": side, "tag": tag,
                                "lost": made, "kept": "removed" if made == "added" else "added"})
    return out


def _touched(tail: bytes) -> set[bytes]:
    """The ids (as JSON strings) of the tasks whose records `tail` holds."""
    import orjson

    from aidp.tasklist.fold import TASK, read_line

    found = set()
    for raw in tail.split(b"\n"):
        kind, rid, record = read_line(raw)
        if kind == TASK:
            found.add(orjson.dumps(rid))
        elif record is not None and record.get("type") in details.KINDS and isinstance(
                record.get("task"), str):  # its body, type, close reason
            found.add(orjson.dumps(record["task"]))
    return found


def _author(repo: Any, since: str, rev: str) -> str:
    """Who made the latest tasklist commit in since..rev: `Name <email>`."""
    from aidp.tasklist.git_runner import run

    done = run(repo.top, "log", "-1", "--format=%an <%ae>", f"{since}..{rev}", "--",
                repo.tasklist, check=False)
    return done.stdout.strip() if done is not None and done.returncode == 0 else ""


def merge_conflicts(repo: Any, ours: str, theirs: str, merged: bytes) -> list[dict[str, Any]]:
    """`overwritten` for a merge of commit `theirs` into commit `ours` (full hashes)
    that gave the tasklist `merged`; each entry names who made the lost value and the
    kept one ("lost_by", "kept_by": the side's latest tasklist commit's author)."""
    from aidp.tasklist.git_runner import run

    found = run(repo.top, "merge-base", ours, theirs, check=False)
    if found is None or found.returncode != 0 or not found.stdout.strip():
        return []
    base = found.stdout.strip()
    if base in (ours, theirs):
        return []  # one side has all the other's lines: nothing was concurrent
    entries = overwritten(file_at(repo, base), file_at(repo, ours), file_at(repo, theirs),
                          merged)
    if entries:
        names = {"ours": _author(repo, base, ours), "theirs": _author(repo, base, theirs)}
        for entry in entries:
            other = "theirs" if entry["side"] == "ours" else "ours"
            entry["lost_by"], entry["kept_by"] = names[entry["side"]], names[other]
    return entries


def _range_conflicts(repo: Any, low: str, high: str) -> list[dict[str, Any]]:
    """The same-field conflicts of the merges in low..high (the last 20 that joined
    two changed tasklists), oldest first."""
    from aidp.tasklist.git_runner import run

    done = run(repo.top, "rev-list", "--merges", "--parents", "-n", "20", f"{low}..{high}",
                "--", repo.tasklist, check=False)
    if done is None or done.returncode != 0:
        return []
    out: list[dict[str, Any]] = []
    for line in reversed(done.stdout.split("\n")):
        commits = line.split()  # the merge, then its parents
        if len(commits) >= 3:
            for entry in merge_conflicts(repo, commits[1], commits[2],
                                         file_at(repo, commits[0])):
                out.append({**entry, "merge": commits[0]})
    return out


def changes_between(log: TaskLog, spec: str | None) -> dict[str, Any]:
    """`tasks changes [REV[..REV]]`: REV alone is REV to the working tree; an empty side
    of `..` is HEAD; no argument is HEAD to the working tree (what is not committed)."""
    repo = repo_of(log)
    spec = spec if spec not in (None, "") else "HEAD"
    if ".." in spec:
        low, _, high = spec.partition("..")
        low, high = low or "HEAD", high or "HEAD"
    else:
        low, high = spec, None
    if low == "HEAD" and not has_commits(repo):
        old = b""
    else:
        verify_rev(repo, low)
        old = file_at(repo, low)
    if high is None:
        new = log.read_bytes()
    else:
        verify_rev(repo, high)
        new = file_at(repo, high)
    result = compare(old, new)
    has_base = not (low == "HEAD" and not has_commits(repo))
    conflicts = _range_conflicts(repo, low, high or "HEAD") if has_base else []
    return {"from": low, "to": high, **result, "overwritten": conflicts}
