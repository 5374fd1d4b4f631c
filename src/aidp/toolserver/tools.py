"""The tools of `aidp mcp`: their schemas, the check of a call's arguments against
them, and the call itself on aidp's use cases (aidp.app: plans, filing, listing, the
queue, claims, changes).

Nothing here knows MCP's wire: `call` takes a tool name and its arguments and returns
an `Outcome` (the texts to give back, and whether the call was refused). A call is
checked whole before anything is read or written, so a refused call writes nothing.
Every refusal is one line naming the argument and what it accepts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from aidp.app.project import Project, StoreReader
from aidp.backlog.details import MAX_BODY, TYPES
from aidp.core.errors import AidpError
from aidp.core.model import MAX_DESCRIPTION, MAX_REASON, MAX_TAG, PRIORITIES, STATUSES
from aidp.todos.items import MAX_ITEM_LENGTH, MAX_ITEMS  # the one bound on a plan

ITEM_STATUSES = ("pending", "in_progress", "completed")
LIST_STATUSES = (*STATUSES, "open", "all")
MAX_TAGS = 20
MAX_LIMIT = 1000
LIST_DEFAULT_LIMIT = 50  # a listing costs the agent tokens: the newest 50 unless asked
READY_DEFAULT_LIMIT = 10

_PRIORITY = {"type": "string", "enum": list(PRIORITIES)}
_LIMIT = {"type": "integer", "minimum": 0, "maximum": MAX_LIMIT}
_ID = {"type": "string", "minLength": 4, "maxLength": 100,
       "description": "Full task id or 4+ leading hex characters of it"}

# name → (description, input schema). Kept small: every agent pays for these in tokens
# on every request (tools/list is under 6,000 characters; tests/test_mcp.py checks it).
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "todo_write": (
        "Replace your TODO list (your working plan for this session) with these items, "
        "in order. Send the whole list each time; mark an item in_progress when you "
        "start it and completed when done. An empty list clears it.",
        {"type": "object", "properties": {"items": {
            "type": "array", "maxItems": MAX_ITEMS, "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "minLength": 1,
                                "maxLength": MAX_ITEM_LENGTH},
                    "status": {"type": "string", "enum": list(ITEM_STATUSES)},
                    "activeForm": {"type": "string"},
                    "priority": _PRIORITY,
                },
                "required": ["content", "status"],
                "additionalProperties": False,
            }}},
         "required": ["items"], "additionalProperties": False},
    ),
    "todo_read": (
        "Your TODO list for this session.",
        {"type": "object", "properties": {}, "additionalProperties": False},
    ),
    "tasks_file": (
        "File a task in the project's persistent backlog (work for later or for others). "
        "A task with the same description that is still open is returned, not filed again. "
        "body: what whoever picks it up needs (steps, acceptance criteria; Markdown).",
        {"type": "object", "properties": {
            "description": {"type": "string", "minLength": 1, "maxLength": MAX_DESCRIPTION},
            "priority": _PRIORITY,
            "tags": {"type": "array", "maxItems": MAX_TAGS,
                     "items": {"type": "string", "minLength": 1, "maxLength": MAX_TAG}},
            "type": {"type": "string", "enum": list(TYPES)},
            "body": {"type": "string", "maxLength": MAX_BODY},
         }, "required": ["description"], "additionalProperties": False},
    ),
    "tasks_show": (
        "One backlog task whole: its body, notes, type, claim and links (what it waits "
        "on, blocks, its epic and children). Read a task before you work on it.",
        {"type": "object", "properties": {"id": _ID}, "required": ["id"],
         "additionalProperties": False},
    ),
    "tasks_list": (
        f"Backlog tasks, newest first: open ones unless status says otherwise; at most "
        f"limit (default {LIST_DEFAULT_LIMIT}).",
        {"type": "object", "properties": {
            "status": {"type": "string", "enum": list(LIST_STATUSES)},
            "tag": {"type": "string", "minLength": 1, "maxLength": MAX_TAG},
            "limit": _LIMIT,
         }, "additionalProperties": False},
    ),
    "tasks_ready": (
        f"Tasks ready to work on (pending, unclaimed, not blocked), best first; at most "
        f"limit (default {READY_DEFAULT_LIMIT}).",
        {"type": "object", "properties": {"limit": _LIMIT}, "additionalProperties": False},
    ),
    "tasks_claim": (
        "Take a backlog task: it goes in_progress with you as its assignee, for a lease "
        "your tool calls renew. Without id, the first ready task.",
        {"type": "object", "properties": {"id": _ID}, "additionalProperties": False},
    ),
    "tasks_update": (
        "Set a backlog task's status (done when finished, with how as reason if you like; "
        "abandoned with a reason).",
        {"type": "object", "properties": {
            "id": _ID,
            "status": {"type": "string", "enum": list(STATUSES)},
            "reason": {"type": "string", "minLength": 1, "maxLength": MAX_REASON},
         }, "required": ["id", "status"], "additionalProperties": False},
    ),
}


class Refused(Exception):
    """A call whose arguments are outside its tool's schema: one line, nothing done."""


@dataclass
class Outcome:
    texts: list[str] = field(default_factory=list)
    is_error: bool = False


@dataclass
class Place:
    """Where the calls work: the project, opened once per server (its tasklist read
    afresh at each call: `TaskLog.read` reuses its fold while the file is unchanged),
    and how to name the session. The session is asked for at each call (the agent's
    hooks may name another after the server started: a new conversation in the same
    agent process); what it is asked of is found once (`default_place`)."""

    project: Project
    session: Callable[[], str]
    opened: list[bool] = field(default_factory=list, repr=False, compare=False)
    # Who the calls act as (AIDP_ACTOR, else git's user.email: asked once), and the
    # keeper of that actor's leases while the client calls (docs/guide.md, "Leases").
    actor: list[Callable[[], str]] = field(default_factory=list, repr=False, compare=False)
    keeper: list[Any] = field(default_factory=list, repr=False, compare=False)

    @property
    def root(self) -> Path:
        return self.project.root

    def who(self) -> Callable[[], str]:
        if not self.actor:
            from aidp.backlog import queue

            self.actor.append(queue.actor_lookup(self.root))
        return self.actor[0]


# --- checking arguments against a schema -------------------------------------------------


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null"


_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def check(schema: dict[str, Any], value: object, where: str) -> None:
    """Raise Refused naming `where` when `value` is outside `schema` (the subset of JSON
    Schema the tools use: type, enum, lengths, bounds, properties, items)."""
    wanted = schema.get("type")
    if wanted is not None and not _TYPES[wanted](value):
        raise Refused(f"Invalid argument '{where}': expected {_article(wanted)}, "
                      f"got {_kind(value)}")
    if "enum" in schema and value not in schema["enum"]:
        shown = orjson.dumps(value).decode()[:60]
        raise Refused(f"Invalid argument '{where}': {shown} is not one of "
                      f"{', '.join(schema['enum'])}")
    if isinstance(value, str):
        shortest = schema.get("minLength", 0)
        if shortest and not value.strip():
            raise Refused(f"Invalid argument '{where}': it is empty")
        if len(value.strip()) < shortest:
            raise Refused(f"Invalid argument '{where}': {len(value.strip())} characters; "
                          f"at least {shortest} are needed")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise Refused(f"Invalid argument '{where}': {len(value)} characters; at most "
                          f"{schema['maxLength']} are accepted")
    elif isinstance(value, int) and not isinstance(value, bool):
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            raise Refused(f"Invalid argument '{where}': {value}; use a whole number from "
                          f"{low} to {high}")
    elif isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise Refused(f"Invalid argument '{where}': {len(value)} entries; at most "
                          f"{schema['maxItems']} are accepted")
        for n, entry in enumerate(value):
            check(schema.get("items", {}), entry, f"{where}[{n}]")
    elif isinstance(value, dict):
        known = schema.get("properties", {})
        prefix = f"{where}." if where else ""
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in known:
                    accepted = ", ".join(known) or "no arguments"
                    raise Refused(f"Unknown argument '{prefix}{key}': accepted are {accepted}")
        for key in schema.get("required", ()):
            if key not in value:
                raise Refused(f"Missing argument '{prefix}{key}'")
        for key, sub in known.items():
            if key in value:
                check(sub, value[key], f"{prefix}{key}")


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


# --- the calls ---------------------------------------------------------------------------


def call(place: Place, name: str, arguments: dict[str, Any] | None) -> Outcome:
    """Run one tool call; every failure is an Outcome with is_error and one line."""
    args = {} if arguments is None else arguments
    try:
        if name not in TOOLS:
            raise Refused(f"Unknown tool '{name}': use one of {', '.join(TOOLS)}")
        check(TOOLS[name][1], args, "")
        texts = _CALLS[name](place, args)
    except (Refused, AidpError) as exc:
        return Outcome([" ".join(str(exc).split())], is_error=True)
    except Exception as exc:  # a model gets one line, never a traceback
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        return Outcome([f"aidp could not do it: {reason}"], is_error=True)
    return Outcome(texts + _keep_leases(place))


def _keep_leases(place: Place) -> list[str]:
    """While the client calls, the leases of what it claimed are renewed (each at most
    once per half lease), and a task it lost is told, once, after the call's result."""
    if not place.opened:
        return []  # no call has opened the tasklist: nothing of ours to renew
    if not place.keeper:
        from aidp.app.leases import lease_keeper

        place.keeper.append(lease_keeper(place.project, place.who()))
    try:
        lost: list[str] = place.keeper[0].tick()
    except AidpError:
        return []  # the call itself was done; the next one renews
    return lost


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


def _project(place: Place) -> Project:
    if not place.root.is_dir():
        raise Refused(f"The project folder {place.root} does not exist (check AIDP_DIR)")
    if not place.opened:
        place.opened.append(True)
    return place.project


def _todo_write(place: Place, args: dict[str, Any]) -> list[str]:
    from aidp import todos
    from aidp.app.plans import write_plan
    from aidp.core.model import validate_description

    entries = []
    for n, item in enumerate(args["items"]):
        try:
            content = validate_description(" ".join(item["content"].split()))
        except AidpError as exc:
            raise Refused(f"Invalid argument 'items[{n}].content': {_reason(exc)}") from None
        entry = {"content": content, "status": item["status"]}
        if "priority" in item:
            entry["priority"] = item["priority"]
        entries.append(entry)
    project = _project(place)
    return [_json(todos.show_json(write_plan(project, place.session(), entries)))]


def _reason(exc: Exception) -> str:
    """`Invalid description: it is empty; …` → `it is empty; …`."""
    text = " ".join(str(exc).split())
    head, sep, rest = text.partition(": ")
    return rest if sep and head.startswith("Invalid") else text


def _todo_read(place: Place, args: dict[str, Any]) -> list[str]:
    from aidp import todos
    from aidp.app.plans import read_plan

    project = _project(place)
    return [_json(todos.show_json(read_plan(project, place.session())))]


def _tasks_file(place: Place, args: dict[str, Any]) -> list[str]:
    from aidp.app.filing import file_task, filed_shown
    from aidp.backlog.details import clean_body
    from aidp.core.model import validate_description, validate_tag

    try:
        description = validate_description(args["description"])
    except AidpError as exc:
        raise Refused(f"Invalid argument 'description': {_reason(exc)}") from None
    tags = []
    for n, tag in enumerate(args.get("tags", [])):
        try:
            tags.append(validate_tag(tag))
        except AidpError as exc:
            raise Refused(f"Invalid argument 'tags[{n}]': {_reason(exc)}") from None
    body = args.get("body")
    if body is not None:
        try:
            body = clean_body(body)
        except AidpError as exc:
            raise Refused(f"Invalid argument 'body': {_reason(exc)}") from None
    project, session = _project(place), place.session()
    filed = file_task(project, description, priority=args.get("priority", "medium"),
                      tags=list(dict.fromkeys(tags)), session=session,
                      discovered_during=f"{session} (aidp mcp)", unless_open=True,
                      body=body, task_type=args.get("type"))
    texts = [_json(filed_shown(project, filed, linked=False, body=body,
                               task_type=args.get("type")) if filed.filed else filed.task)]
    if not filed.filed:
        texts.append(f"Not filed again: open task {filed.short_id} has the same description")
    return texts


def _tasks_list(place: Place, args: dict[str, Any]) -> list[str]:
    from aidp.app.listing import listed_shown
    from aidp.backlog.tasks import Query
    from aidp.core.model import OPEN_STATUSES

    status = args.get("status", "open")
    statuses = (OPEN_STATUSES if status == "open" else None if status == "all"
                else (status,))
    query = Query(statuses=statuses, tags=(args["tag"],) if "tag" in args else (),
                  limit=args.get("limit", LIST_DEFAULT_LIMIT))
    return [_json(listed_shown(_project(place), query))]


def _tasks_ready(place: Place, args: dict[str, Any]) -> list[str]:
    from aidp.app.queue_view import ready_tasks

    found = ready_tasks(_project(place), limit=args.get("limit", READY_DEFAULT_LIMIT))
    return [_json(found.shown)]


def _tasks_claim(place: Place, args: dict[str, Any]) -> list[str]:
    from aidp.app.claiming import claim_task

    texts: list[str] = []  # the one that lost this task hears who holds it now
    claimed = claim_task(_project(place), args.get("id"), lookup=place.who(),
                         session=place.session(), on_lost=texts.extend)
    _told(place, texts)
    return [_json(claimed.shown), *texts]


def _told(place: Place, lines: list[str]) -> None:
    """Lines said in a call's result are not said again by the lease keeper."""
    if place.keeper:
        place.keeper[0].told.update(lines)


def _tasks_update(place: Place, args: dict[str, Any]) -> list[str]:
    from aidp.app.changing import transition
    from aidp.app.shown import shown_now

    if "reason" in args and args["status"] not in ("done", "abandoned"):
        raise Refused("Invalid argument 'reason': it goes only with status done or "
                      "abandoned")
    project = _project(place)
    done = transition(project, [args["id"]], args["status"], reason=args.get("reason"))
    _told(place, done.lost)
    change = done.changes[0]
    texts = [_json(shown_now(project, [change.task])[0]), *done.lost]
    if not change.changed:
        texts.append(f"Nothing changed: the task was already {args['status']}")
    return texts


def _tasks_show(place: Place, args: dict[str, Any]) -> list[str]:
    from aidp.app.shown import show_task

    detail = show_task(_project(place), args["id"])
    _told(place, detail.lost)
    return [_json(detail.shown), *detail.lost]


_CALLS: dict[str, Callable[[Place, dict[str, Any]], list[str]]] = {
    "todo_write": _todo_write,
    "todo_read": _todo_read,
    "tasks_file": _tasks_file,
    "tasks_show": _tasks_show,
    "tasks_list": _tasks_list,
    "tasks_ready": _tasks_ready,
    "tasks_claim": _tasks_claim,
    "tasks_update": _tasks_update,
}


def default_place(*, root: Path, session: str | None = None) -> Place:
    """The project `root` (the CLI's: --dir, else AIDP_DIR, else found from the working
    directory), opened once, and the session as docs/mcp.md ("Which list") names it:
    --session or    AIDP_SESSION, else the session aidp's hooks use for the agent that started this
    server, else the person's own (docs/todo.md, "Sessions")."""
    explicit = session or os.environ.get("AIDP_SESSION")
    project = Project(root, session=explicit, reader=StoreReader(background=True))
    agents: list[int] = []  # the processes that may be the agent: found once

    def current() -> str:
        from aidp.agent.hook.state import ancestors, session_of_agent

        if explicit:
            return explicit
        if not agents:  # the agent started this server: its parent (or, through a
            agents.extend(ancestors(os.getpid(), 2) or [0])  # shell, the one above)
        for pid in agents:
            hooked = session_of_agent(root, pid) if pid else None
            if hooked is not None:
                return hooked
        return project.session()

    return Place(project, current)
