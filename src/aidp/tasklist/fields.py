"""Field-level merge, beside its rule in aidp.tasklist.fold (docs/file-format.md): what a writer
appends with a task record that changes a task — its `task_fields` companion
(`TaskLog.update` adds them to every change it writes, so no writer can leave one
out) — and the plain fold of a file (`fold_bytes`) with its second pass over the
tasks two clones changed concurrently (`resolve`, with `merge_task`: the exact rule
over all of a task's records, which fold.settle agrees with wherever it decides
alone)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from aidp.core.model import UNKNOWN_TS, Record, canonical
from aidp.tasklist.fold import (
    FIELD_GROUPS,
    FIELDS,
    STATUS_KEYS,
    Fold,
    FoldKey,
    companion_key,
    field_value,
    groups_of,
    key_of,
    no_gc,
    status_class,
    task_tags,
    texts,
)
from aidp.tasklist.line import blocks, parse_line


def companion(before: Record, after: Record) -> Record:
    """The task_fields record that goes, in the same write and just before it, with
    `after`: the next snapshot of the task whose merged state was `before`."""
    fields = [g for g in FIELD_GROUPS if field_value(before, g) != field_value(after, g)]
    record: Record = {"type": FIELDS, "id": f"{FIELDS}:{after['id']}:{os.urandom(4).hex()}",
                      "task": after["id"], "fields": fields}
    if "tags" in fields:
        old, new = task_tags(before), task_tags(after)
        record["tags_added"] = [t for t in new if t not in old]
        record["tags_removed"] = [t for t in old if t not in new]
    if "status" in fields:
        record["from"] = before.get("status")
    record["updated_at"] = after.get("updated_at")
    return record


def with_companions(tasks: Mapping[str, Record], records: list[Record]) -> list[Record]:
    """`records` with a task_fields record just before each task record that changes a
    task of `tasks` (the folded state the change was made from); new tasks need none."""
    out: list[Record] = []
    latest: dict[str, Record] = {}
    for record in records:
        if "type" not in record:
            rid = record["id"]
            before = latest[rid] if rid in latest else tasks.get(rid)
            if before is not None:
                out.append(companion(before, record))
            latest[rid] = record
        out.append(record)
    return out


def fold_bytes(data: bytes, *, freeze: bool = False) -> Fold:
    """The plain fold of a whole file's bytes: `Fold.feed`, then the tasks two clones
    changed concurrently folded again with `resolve`. `freeze`: as no_gc's."""
    fold = Fold()
    with no_gc(freeze=freeze):
        fold.feed(data)
    if fold.conflicted:
        resolve(fold, data)
    return fold


def fold_file(fd: int, end: int, tail: bytes, *, freeze: bool = False) -> Fold:
    """fold_bytes of the file open at `fd`: its whole lines up to `end`, then `tail` (a
    torn last line, or b""), read a block at a time so that its bytes are never all held
    (at 100k events, 30 MB: a peak of 78 MB, not 137)."""
    def read() -> Iterator[bytes]:  # from line 1: again for the conflicted tasks
        yield from (data for _at, data in blocks(fd, 0, end))
        if tail:
            yield tail

    fold = Fold()
    with no_gc(freeze=freeze):
        for data in read():
            fold.feed(data)
    if fold.conflicted:
        fold.tasks.update(merge_all(fold.conflicted, read()))
    return fold


def resolve(fold: Fold, data: bytes) -> None:
    """Fold each of `fold`'s conflicted tasks again from its records with
    merge_task: `data` is what the fold was fed (from line 1)."""
    fold.tasks.update(merge_all(fold.conflicted, [data]))


def merge_all(ids: Iterable[str], blocks: Iterable[bytes]) -> dict[str, Record]:
    """Each of `ids`' tasks folded field by field from all its records (merge_task), for
    the plain fold and the store alike: `blocks` hold the file's lines from line 1 on,
    each block whole lines (the last block's last line may lack its newline)."""
    import re

    order = sorted(ids)
    pattern = re.compile(b"|".join(re.escape(orjson.dumps(tid)) for tid in order))
    entries: dict[str, list[tuple[Record, FoldKey, Record | None]]] = {t: [] for t in order}
    waiting: dict[tuple[Any, Any], Record] = {}
    number = 0
    for data in blocks:
        parts = data.split(b"\n")
        if not parts[-1]:
            parts.pop()  # after the last newline
        if not pattern.search(data):
            number += len(parts)
            continue
        for raw in parts:
            number += 1
            if not pattern.search(raw):
                continue
            record = parse_line(raw)
            if record is None:
                continue
            if record.get("type") == FIELDS:
                found = companion_key(record)
                if found is not None and found[0] in entries:
                    waiting[found] = record
            elif "type" not in record and record.get("id") in entries:
                spec = waiting.pop((record["id"], record.get("updated_at")), None)
                entries[record["id"]].append((record, key_of(record, number), spec))
    return {tid: merge_task(records) for tid, records in entries.items() if records}


def merge_task(entries: list[tuple[Record, FoldKey, Record | None]]) -> Record:
    """The task folded field by field from all its records — (record, fold key,
    companion or None), in any order — as docs/file-format.md states the rule."""
    winner, top = entries[0][0], entries[0][1]
    best: dict[str, tuple[FoldKey, Record]] = {}  # description, priority: latest setter
    slots: dict[str, tuple[FoldKey, Record]] = {}  # status: latest setter per class
    floor: FoldKey | None = None  # latest record that set the tags as a whole
    marks: dict[str, tuple[FoldKey, bool]] = {}  # tag -> latest (key, present)

    def mark(tag: str, at: FoldKey, present: bool) -> None:
        if tag not in marks or at > marks[tag][0]:
            marks[tag] = (at, present)

    for record, key, spec in entries:
        if key > top:
            winner, top = record, key
        for group in groups_of(spec):
            if group == "status":
                slot = status_class(record, spec)
                if slot not in slots or key > slots[slot][0]:
                    slots[slot] = (key, record)
            elif group == "tags":
                if spec is None:
                    if floor is None or key > floor:
                        floor = key
                    for tag in task_tags(record):
                        mark(tag, key, True)
                else:
                    for tag in texts(spec, "tags_added"):
                        mark(tag, key, True)
                    for tag in texts(spec, "tags_removed"):
                        mark(tag, key, False)
            elif group not in best or key > best[group][0]:
                best[group] = (key, record)
    merged = dict(winner)
    for group, (_key, source) in best.items():
        merged[group] = source.get(group)
    if slots:
        chosen = max(slots.values(), key=lambda slot: slot[0])
        closed, informed = slots.get("C"), slots.get("O")
        if (chosen is slots.get("B") and closed is not None
                and (informed is None or closed[0] > informed[0])):
            chosen = closed  # a move between open states that had not seen the close
        for name in STATUS_KEYS:
            merged[name] = chosen[1].get(name)
    if floor is None:  # no record set the tags whole: the winner's stand, but for ops
        for tag in task_tags(winner):
            if tag not in marks:
                marks[tag] = ((UNKNOWN_TS, 0), True)
    present = [(at, tag) for tag, (at, on) in marks.items() if on and (floor is None
                                                                       or at >= floor)]
    shown = set(tag for _at, tag in present)
    merged["tags"] = [t for t in task_tags(winner) if t in shown] + [
        tag for _at, tag in sorted(present) if tag not in task_tags(winner)]
    return canonical(merged)
