"""The prompts `aidp run` sends: the user's prompt with the TODO list, the open backlog
and the working instructions; and the continuation prompt for a lazy agent. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from aidp.core.model import Record, ts_of
from aidp.core.when import age

BACKLOG_LIMIT = 20  # tasks shown in a prompt; the agent can list the rest itself

INSTRUCTIONS = """\
## Keeping track of your work with aidp

Your TODO list and the project backlog are kept by `aidp` (in .aidp/tasklist.jsonl).
Run these commands yourself; they already work on this session's list:

- `aidp todo show` — your TODO list, as above
- `aidp todo add "STEP"` (`aidp todo add 1.last "SUBSTEP"` for a checklist item)
- `aidp todo start N` — mark item N in progress
- `aidp todo tick N` or `aidp todo tick N.M` — mark an item or checklist item completed
- `aidp todo pause "REASON"` — you are blocked and need the user
- `aidp tasks list` · `aidp tasks add "DESCRIPTION" -p high` · `aidp tasks done ID`

You can also write these signals in your reply, one per line, anywhere in a line:

- File task: "DESCRIPTION" priority: high tags: a,b
  — files work you found but will not do now (priority: high, medium or low, and tags
  are optional; priority comes before tags). What whoever picks it up needs to know
  (steps, acceptance criteria, context) goes in a fenced block tagged body on the lines
  right after that line (Markdown, up to 64 KiB; a body holding ``` fences with ````):
  ```body
  DETAILS
  ```
- Update task: ID status: done
  — ID from the backlog (or its first 4+ hex characters); status: pending,
  in_progress, done or abandoned, optionally followed by reason: "WHY"
- Todo pause: "REASON"
  — you are blocked and need the user; aidp stops pushing you until the next prompt

Work through your TODO list: make concrete progress and tick each item as you finish
it. Do not stop while items are open unless you are blocked.
"""


def backlog_lines(tasks: Sequence[Record], now: int, *, limit: int = BACKLOG_LIMIT) -> list[str]:
    """Open tasks as prompt lines (the caller sorts them, highest priority first)."""
    lines = []
    for task in tasks[:limit]:
        status = task.get("status", "pending")
        state = "" if status == "pending" else f", {status}"
        tags = " ".join(f"#{t}" for t in task.get("tags") or [])
        line = (
            f"- {task.get('id')} [{task.get('priority', 'medium')}{state}] "
            f"{task.get('description', '')} ({age(ts_of(task, 'created_at'), now)})"
        )
        lines.append(line + (f" {tags}" if tags else ""))
    if len(tasks) > limit:
        lines.append(f"- … and {len(tasks) - limit} more (run `aidp tasks list` to see all)")
    return lines


MCP_INSTRUCTIONS = """\
You also have aidp's MCP tools (`todo_write`, `todo_read`, `tasks_file`, `tasks_show`,
`tasks_ready`, `tasks_claim`, `tasks_update`, `tasks_list`) on this same TODO list and
backlog; `tasks_show` gives a task whole (its body, notes, links) before you work on it. If you
have no TODO or plan tool of your own, keep your plan with `todo_write`: send the whole
list each time, with each item's status (pending, in_progress, completed).
"""


def build(user_prompt: str, *, todo_text: str, backlog: Sequence[Record], now: int,
          ready: int | None = None, mcp_tools: bool = False) -> str:
    """The prompt for a user turn. With `ready`, the first `ready` tasks of `backlog` are
    the ones ready to work on now, and they are shown first, apart from the rest. With
    `mcp_tools`, the agent was given `aidp mcp`, and is told to plan with it when it has
    no plan tool of its own."""
    if backlog and ready is not None:
        first = "\n".join(backlog_lines(backlog[:ready], now)) or "Nothing is ready now."
        rest = backlog[ready:]
        backlog_block = (f"## Ready to work on ({ready}, best first; "
                         f"`aidp tasks claim ID` takes one)\n\n{first}")
        if rest:
            more = "\n".join(backlog_lines(rest, now, limit=max(BACKLOG_LIMIT - ready, 5)))
            backlog_block += (f"\n\n## Other open tasks ({len(rest)}: in progress, or "
                              f"waiting on others)\n\n{more}")
    elif backlog:
        open_tasks = "\n".join(backlog_lines(backlog, now))
        backlog_block = f"## Open backlog ({len(backlog)}, highest priority first)\n\n{open_tasks}"
    else:
        backlog_block = "## Open backlog\n\nNo open tasks."
    return "\n\n".join(
        [
            user_prompt.strip("\n"),
            f"## Your TODO list\n\n{todo_text}",
            backlog_block,
            INSTRUCTIONS.rstrip("\n"),
            *([MCP_INSTRUCTIONS.rstrip("\n")] if mcp_tools else []),
        ]
    ) + "\n"


def continuation(content: str, *, todo_text: str) -> str:
    """The prompt for a lazy agent; its first line names the item to work on."""
    first = " ".join(content.split())
    return (
        f"You have an active task: {first}\n"
        "\n"
        "You stopped while items on your TODO list are still open. Make concrete progress "
        "on this task now: change the code, run the checks, and tick each item with "
        "`aidp todo tick N` as you finish it. If you are blocked and need the user, say "
        'Todo pause: "REASON" (or run `aidp todo pause "REASON"`).\n'
        "\n"
        f"## Your TODO list\n\n{todo_text}\n"
    )


# --- run --backlog ------------------------------------------------------------------------


def _closing(tid: str) -> str:
    return (
        f"- finished: run `aidp tasks done {tid}` (or write `Update task: {tid} status: done`)\n"
        f"- cannot or should not be done: `aidp tasks abandon {tid} \"REASON\"`\n"
        f"- you must stop before it is finished: `aidp tasks release {tid}` (it goes back "
        "to the queue)\n"
        "The task is not done while your TODO list has open items: tick each one "
        "(`aidp todo tick N`) as you finish it."
    )


def backlog_task(task: Record, *, actor: str, guidance: str | None = None,
                 parent: str | None = None, blockers: Sequence[str] = (),
                 notes: Sequence[Record] = (), body: str | None = None) -> str:
    """The user prompt for one task of `aidp run --backlog`: the task, its context (its
    body whole), and how to close it."""
    tid = task.get("id", "")
    tags = " ".join(f"#{t}" for t in task.get("tags") or [])
    lines = [
        f"Work on this backlog task, claimed for you (as {actor}):",
        "",
        f"  {tid} [{task.get('priority', 'medium')}] {task.get('description', '')}"
        + (f" {tags}" if tags else ""),
    ]
    if parent:
        lines.append(f"  part of the epic: {parent}")
    for blocker in blockers:
        lines.append(f"  done before it: {blocker}")
    for note in notes:
        who = f"{note['author']}: " if note.get("author") else ""
        lines.append(f"  note: {who}{note.get('text', '')}")
    if body:
        lines += ["", "The task's details (its body):", "", body]
    lines += ["", "Plan it in your TODO list (`aidp todo add \"STEP\"`) and do it. Close the "
              f"task {tid} when you are through:", _closing(tid)]
    if guidance:
        lines += ["", guidance]
    return "\n".join(lines)


def backlog_continuation(task: Record, *, todo_text: str, gate: bool = False) -> str:
    """The follow-up for a backlog task that is still open; its first line names it."""
    tid = task.get("id", "")
    first = " ".join(str(task.get("description", "")).split())
    why = (
        f"You marked task {tid} done, but your TODO list still has open items: a task is "
        "not done while they are open. Finish them (or delete the ones that no longer "
        "apply), then close the task again."
        if gate else
        f"You stopped while backlog task {tid} is still open. Make concrete progress on it "
        "now, or close it."
    )
    return (
        f"You have an active task: {first} ({tid})\n\n{why}\n{_closing(tid)}\n\n"
        f"## Your TODO list\n\n{todo_text}\n"
    )
