"""A scripted model server on 127.0.0.1 for the real-agent suite.

It speaks the four APIs today's agent CLIs call:

- Anthropic Messages: `POST /v1/messages` (SSE or JSON), `/v1/messages/count_tokens`;
- OpenAI Responses: `POST /v1/responses` (SSE);
- OpenAI Chat Completions: `POST /v1/chat/completions` (SSE or JSON);
- Gemini: `POST /v1beta/models/M:streamGenerateContent` (SSE with `alt=sse`, else a
  JSON array), `:generateContent`, `:countTokens`; `GET /v1/models`, `/v1beta/models`.

A `Scenario` is an abstract script: conversations of steps such as `plan([...])`,
`shell("aidp todo tick 1")`, `text("...")`, `error(401)`. Each request is rendered in
its dialect with the tool names and argument schemas the CLI itself offered in that
request (`Bash`, `exec_command`, `run_shell_command`, `bash`; `TodoWrite`,
`TaskCreate`/`TaskUpdate`, `update_plan`, `write_todos`, `todowrite`). A plan step
uses the CLI's own plan tool, else aidp's `todo_write` from `aidp mcp` under the name
that CLI gives MCP tools (`mcp__aidp__todo_write`, …: MCP_NAMES); `aidp_tool(...)`
calls one of aidp's MCP tools whatever else is offered. A tool the CLI lists as
deferred (Claude Code's ToolSearch) is loaded first, as a model must: one more
response, `ToolSearch {"query": "select:NAME"}`.

A step the CLI offered no tool for is never sent as a call to a tool that does not
exist (the CLI would refuse it, and a reader could mirror it all the same): the
server answers with a text saying so and logs it (`server.unrendered()`), and the
`fake_model` fixture fails the test.

Which step answers a request is decided from the request alone, so retries and side
requests never shift the script:

- a request that offers no tools is a side request (titles, summaries, quota
  checks): it gets a short plain text — except for a CLI that offers no tools at all
  (aider: `server.tool_less = True`, set by its world);
- the conversation is the first one whose `when` text occurs in the user's messages
  (`when=None` matches any);
- the step is the number of model turns already in the request's history (runs of
  assistant / model / function-call items). Past the end of the script, the answer is
  a plain "Done." so an agent can never loop on the server.

Every request is logged (`server.requests`) for assertions.

The server is also each world's HTTP(S) proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY; with
NO_PROXY for 127.0.0.1): a CLI that tries to reach any other host through it is
refused and logged as kind "outside" (`server.outside()`), and the fixture fails the
test. (A client that ignores the proxy variables is not caught this way.)
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

MODEL = "fake-model"
SIDE_TEXT = "ok"
END_TEXT = "Done."

# --- the abstract script ---------------------------------------------------------------


@dataclass(frozen=True)
class Shell:
    """Run a command with the CLI's own shell tool."""

    command: str


@dataclass(frozen=True)
class PlanCall:
    """Report the whole plan with the CLI's own plan tool: [(content, status)]."""

    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class McpCall:
    """One of aidp's own MCP tools (`aidp mcp`), by its name there (`todo_write`),
    called under the name the CLI gave it."""

    tool: str
    arguments: dict


@dataclass(frozen=True)
class Raw:
    """A tool call by name with the given arguments (for a tool only one CLI has)."""

    name: str
    arguments: dict


Call = Shell | PlanCall | McpCall | Raw


@dataclass(frozen=True)
class Step:
    """One model response: text, tool calls, or an HTTP error."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    error: int | None = None


def text(words: str) -> Step:
    return Step(text=words)


def shell(command: str, words: str = "") -> Step:
    return Step(text=words, calls=(Shell(command),))


def plan(items: Iterable[tuple[str, str]], words: str = "") -> Step:
    return Step(text=words, calls=(PlanCall(tuple(tuple(i) for i in items)),))  # type: ignore[misc]


def aidp_tool(tool: str, arguments: dict, words: str = "") -> Step:
    """A call of aidp's MCP tool `tool` (`todo_write`, `tasks_file`, …)."""
    return Step(text=words, calls=(McpCall(tool, arguments),))


def todo_write(items: Iterable[tuple[str, str]], words: str = "") -> Step:
    """The plan kept with aidp's `todo_write`, even where the CLI has a plan tool."""
    return aidp_tool("todo_write", _todo_write_args(items), words)


def _todo_write_args(items: Iterable[tuple[str, str]]) -> dict:
    return {"items": [{"content": c, "status": s} for c, s in items]}


def raw(name: str, arguments: dict, words: str = "") -> Step:
    return Step(text=words, calls=(Raw(name, arguments),))


def error(status: int) -> Step:
    return Step(error=status)


@dataclass(frozen=True)
class Conversation:
    steps: tuple[Step, ...]
    when: str | None = None  # a text the user's messages must hold


@dataclass(frozen=True)
class Scenario:
    conversations: tuple[Conversation, ...]

    @classmethod
    def of(cls, *steps: Step) -> Scenario:
        """One conversation for whatever prompt comes."""
        return cls((Conversation(tuple(steps)),))

    def conversation(self, user_text: str) -> Conversation | None:
        for conv in self.conversations:
            if conv.when is None or conv.when in user_text:
                return conv
        return None


# --- rendering a step with the tools a CLI offered --------------------------------------


@dataclass
class Response:
    """A concrete model response: text and (tool name, arguments) calls."""

    text: str = ""
    calls: list[tuple[str, dict]] = field(default_factory=list)
    error: int | None = None
    missing: str | None = None  # the step needed a tool the CLI did not offer


def _shell_args(name: str, command: str) -> dict:
    if name == "exec_command":  # codex
        return {"cmd": command}
    if name in ("shell", "local_shell"):  # older codex
        return {"command": ["bash", "-lc", command]}
    return {"command": command, "description": "Run a command"}


SHELL_TOOLS = ("Bash", "exec_command", "shell", "run_shell_command", "bash")
# How each CLI names an MCP server's tool for the model (server `aidp`, tool T):
# Claude Code `mcp__aidp__T`; Codex a Responses namespace `mcp__aidp` holding `T`
# (written here `mcp__aidp.T`); Gemini CLI `mcp_aidp_T`; opencode `aidp_T`; Copilot
# CLI `aidp-T`.
MCP_NAMES = ("mcp__aidp__{}", "mcp__aidp.{}", "mcp_aidp_{}", "aidp_{}", "aidp-{}")


def mcp_name(tool: str, names: set[str]) -> str | None:
    """The name under which the CLI offers aidp's MCP tool `tool`, if it does."""
    return next((n for n in (f.format(tool) for f in MCP_NAMES) if n in names), None)

# Copilot CLI has no plan tool: its plan is rows of a `todos` table written with `sql`.
PLAN_TOOLS = ("TodoWrite", "update_plan", "write_todos", "todowrite", "TaskCreate", "sql")
_SQL_STATUS = {"completed": "done", "in_progress": "in_progress", "pending": "pending"}


def _sql_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _plan_args(name: str, items: tuple[tuple[str, str], ...]) -> dict:
    if name == "update_plan":
        return {"plan": [{"step": c, "status": s} for c, s in items]}
    if name == "write_todos":
        return {"todos": [{"description": c, "status": s} for c, s in items]}
    if name == "todowrite":
        return {"todos": [{"id": str(n), "content": c, "status": s, "priority": "medium"}
                          for n, (c, s) in enumerate(items, 1)]}
    return {"todos": [{"content": c, "status": s, "activeForm": c} for c, s in items]}


def render(steps: Iterable[Step], tools: set[str],
           deferred: frozenset[str] = frozenset()) -> list[Response]:
    """The concrete responses a conversation's steps make for a CLI offering `tools`
    (and `deferred`: tools it names but whose schema the model must load first).

    Claude Code's Tasks API needs two responses for one plan: the TaskCreate calls,
    then TaskUpdate for the statuses that are not `pending` (ids are numbered from 1
    in creation order, as Claude Code numbers them); later plans update by id.
    A deferred tool is loaded with a ToolSearch response before its first call.
    """
    out: list[Response] = []
    task_ids: dict[str, str] = {}
    task_status: dict[str, str] = {}
    names = set(tools) | set(deferred)
    loaded: set[str] = set()

    def load(name: str) -> None:
        if name in deferred and name not in loaded and "ToolSearch" in tools:
            loaded.add(name)
            out.append(Response(calls=[("ToolSearch", {"query": f"select:{name}"})]))

    def missing(what: str) -> Response:
        offered = ", ".join(sorted(names)) or "no tools"
        why = f"the CLI offered no {what} (offered: {offered})"
        return Response(text=f"[fake model] {why}", missing=why)

    for step in steps:
        if step.error is not None:
            out.append(Response(error=step.error))
            continue
        response = Response(text=step.text)
        follow_up: list[tuple[str, dict]] = []
        for call in step.calls:
            if isinstance(call, Raw):
                response.calls.append((call.name, call.arguments))
            elif isinstance(call, Shell):
                name = next((t for t in SHELL_TOOLS if t in tools), None)
                if name is None:
                    response = missing("shell tool")
                    break
                response.calls.append((name, _shell_args(name, call.command)))
            elif isinstance(call, McpCall) or not any(t in tools for t in PLAN_TOOLS):
                # aidp's own tool: asked for, or the plan tool of a CLI that has none.
                tool, arguments = ((call.tool, call.arguments) if isinstance(call, McpCall)
                                   else ("todo_write", _todo_write_args(call.items)))
                name = mcp_name(tool, names)
                if name is None:
                    what = "plan tool" if isinstance(call, PlanCall) else "MCP tool"
                    response = missing(f"{what} (nor aidp's {tool})")
                    break
                load(name)
                response.calls.append((name, arguments))
            else:
                name = next(t for t in PLAN_TOOLS if t in tools)
                if name == "sql":  # one INSERT for new rows, one UPDATE per changed status
                    new = [(c, s) for c, s in call.items if c not in task_ids]
                    for content, status in new:
                        task_ids[content] = f"step-{len(task_ids) + 1}"
                        task_status[content] = status
                    if new:
                        rows = ", ".join(
                            f"({_sql_quote(task_ids[c])}, {_sql_quote(c)}, "
                            f"{_sql_quote(_SQL_STATUS.get(s, 'pending'))})" for c, s in new)
                        response.calls.append(("sql", {
                            "description": "Insert todos",
                            "query": f"INSERT INTO todos (id, title, status) VALUES {rows};"}))
                    for content, status in call.items:
                        if task_status[content] != status:
                            task_status[content] = status
                            response.calls.append(("sql", {
                                "description": "Update todo",
                                "query": f"UPDATE todos SET status = "
                                         f"{_sql_quote(_SQL_STATUS.get(status, 'pending'))} "
                                         f"WHERE id = {_sql_quote(task_ids[content])};"}))
                    continue
                if name != "TaskCreate":
                    response.calls.append((name, _plan_args(name, call.items)))
                    continue
                for content, status in call.items:
                    if content not in task_ids:
                        task_ids[content] = str(len(task_ids) + 1)
                        task_status[content] = "pending"
                        response.calls.append(("TaskCreate", {
                            "subject": content, "description": content, "activeForm": content,
                        }))
                    if task_status[content] != status:
                        task_status[content] = status
                        follow_up.append(("TaskUpdate", {"taskId": task_ids[content],
                                                         "status": status}))
        if response.missing is not None:
            out.append(response)
        elif response.calls and follow_up:
            out.append(response)
            out.append(Response(calls=follow_up))
        else:
            response.calls.extend(follow_up)
            out.append(response)
    return out


# --- reading a request ------------------------------------------------------------------


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_texts(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "content", "parts"):
            if key in content:
                return _texts(content[key])
    return ""


def _turns(kinds: Iterable[str]) -> int:
    """How many model turns: runs of "a" items in a history of "a"/"u" items."""
    return sum(1 for kind, _ in itertools.groupby(kinds) if kind == "a")


@dataclass
class Parsed:
    dialect: str
    tools: set[str]
    user_text: str
    turns: int
    stream: bool
    model: str
    deferred: frozenset[str] = frozenset()  # named, schema not loaded (Claude's ToolSearch)


# Claude Code lists its deferred tools, one name per line, after this sentence in a
# system message; a loaded one is in `tools` with `defer_loading: true`.
_DEFERRED_INTRO = "deferred tools are now available via ToolSearch"


def _deferred(body: dict) -> frozenset[str]:
    names = {t["name"] for t in body.get("tools") or []
             if isinstance(t, dict) and t.get("defer_loading") and isinstance(t.get("name"), str)}
    texts = [_texts(body.get("system"))]
    texts += [_texts(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)]
    for blob in texts:
        at = blob.find(_DEFERRED_INTRO)
        if at < 0:
            continue
        lines = blob[at:].split("\n")[1:]
        for line in itertools.takewhile(lambda line: line.strip() != "", lines):
            if line.strip() and " " not in line.strip():
                names.add(line.strip())
    return frozenset(names)


def parse_request(dialect: str, body: dict, *, stream: bool) -> Parsed:
    if dialect == "anthropic":
        tools = {t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)}
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        user = "\n".join(_texts(m.get("content")) for m in messages if m.get("role") == "user")
        turns = _turns("a" if m.get("role") == "assistant" else "u" for m in messages)
        return Parsed(dialect, tools, user, turns, bool(body.get("stream")), body.get("model", ""),
                      _deferred(body))
    if dialect == "responses":
        tools = set()
        for tool in body.get("tools") or []:
            if isinstance(tool, dict) and tool.get("type") == "namespace":
                # Codex's MCP servers: `mcp__aidp` holding `todo_write` → `mcp__aidp.todo_write`
                tools.update(f"{tool.get('name')}.{inner.get('name')}"
                             for inner in tool.get("tools") or [] if isinstance(inner, dict))
            elif isinstance(tool, dict):
                tools.add(tool.get("name") or tool.get("type", ""))
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        items = [i for i in items if isinstance(i, dict)]
        user = "\n".join(_texts(i.get("content")) for i in items
                         if i.get("role") == "user" or i.get("role") == "developer")

        def kind(item: dict) -> str:
            if item.get("role") == "assistant" or item.get("type") in (
                    "function_call", "reasoning", "local_shell_call", "custom_tool_call"):
                return "a"
            return "u"

        turns = _turns(kind(i) for i in items)
        return Parsed(dialect, tools, user, turns, bool(body.get("stream")), body.get("model", ""))
    if dialect == "chat":
        tools = set()
        for tool in body.get("tools") or []:
            if isinstance(tool, dict):
                fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
                tools.add(fn.get("name", ""))
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        user = "\n".join(_texts(m.get("content")) for m in messages if m.get("role") == "user")
        turns = _turns("a" if m.get("role") == "assistant" else "u" for m in messages)
        return Parsed(dialect, tools, user, turns, stream, body.get("model", ""))
    # gemini
    tools = set()
    for group in body.get("tools") or []:
        if isinstance(group, dict):
            for decl in group.get("functionDeclarations") or group.get("function_declarations") or []:
                if isinstance(decl, dict):
                    tools.add(decl.get("name", ""))
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]

    def user_part_text(c: dict) -> str:
        return "\n".join(p["text"] for p in c.get("parts") or []
                         if isinstance(p, dict) and isinstance(p.get("text"), str))

    user = "\n".join(user_part_text(c) for c in contents if c.get("role", "user") == "user")
    turns = _turns("a" if c.get("role") == "model" else "u" for c in contents)
    return Parsed(dialect, tools, user, turns, stream, "")


# --- the dialects' answers --------------------------------------------------------------

_ERROR_WORDS = {
    400: ("invalid_request_error", "Bad request"),
    401: ("authentication_error", "Invalid API key (fake model server)"),
    403: ("permission_error", "Forbidden (fake model server)"),
    429: ("rate_limit_error", "Rate limited (fake model server)"),
    500: ("api_error", "Internal server error (fake model server)"),
    529: ("overloaded_error", "Overloaded (fake model server)"),
}


def error_body(dialect: str, status: int) -> dict:
    kind, message = _ERROR_WORDS.get(status, ("api_error", f"HTTP {status} (fake model server)"))
    if dialect == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if dialect == "gemini":
        names = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED",
                 400: "INVALID_ARGUMENT"}
        return {"error": {"code": status, "message": message,
                          "status": names.get(status, "INTERNAL")}}
    code = "invalid_api_key" if status == 401 else None
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class Ids:
    def __init__(self) -> None:
        self._n = itertools.count(1)

    def __call__(self, prefix: str) -> str:
        return f"{prefix}_{next(self._n):04d}"


def anthropic_events(resp: Response, model: str, new_id: Ids) -> list[tuple[str, dict]]:
    message = {"id": new_id("msg"), "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1,
                         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
    out: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": message})]
    index = 0
    if resp.text:
        out.append(("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": {"type": "text", "text": ""}}))
        out.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": {"type": "text_delta", "text": resp.text}}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for name, args in resp.calls:
        block = {"type": "tool_use", "id": new_id("toolu"), "name": name, "input": {}}
        out.append(("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": block}))
        out.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": {"type": "input_json_delta",
                                                      "partial_json": json.dumps(args)}}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    stop = "tool_use" if resp.calls else "end_turn"
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 5}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def anthropic_message(resp: Response, model: str, new_id: Ids) -> dict:
    content: list[dict] = []
    if resp.text:
        content.append({"type": "text", "text": resp.text})
    for name, args in resp.calls:
        content.append({"type": "tool_use", "id": new_id("toolu"), "name": name, "input": args})
    return {"id": new_id("msg"), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use" if resp.calls else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def responses_events(resp: Response, model: str, new_id: Ids) -> list[tuple[str, dict]]:
    rid = new_id("resp")
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "in_progress", "output": []}
    out: list[tuple[str, dict]] = [
        ("response.created", {"type": "response.created", "response": base}),
        ("response.in_progress", {"type": "response.in_progress", "response": base}),
    ]
    output: list[dict] = []
    if resp.text:
        mid = new_id("msg")
        index = len(output)
        part = {"type": "output_text", "text": "", "annotations": []}
        item = {"type": "message", "id": mid, "role": "assistant", "status": "in_progress",
                "content": []}
        done_item = {**item, "status": "completed",
                     "content": [{**part, "text": resp.text}]}
        out += [
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": index, "item": item}),
            ("response.content_part.added", {"type": "response.content_part.added",
                                             "item_id": mid, "output_index": index,
                                             "content_index": 0, "part": part}),
            ("response.output_text.delta", {"type": "response.output_text.delta",
                                            "item_id": mid, "output_index": index,
                                            "content_index": 0, "delta": resp.text}),
            ("response.output_text.done", {"type": "response.output_text.done",
                                           "item_id": mid, "output_index": index,
                                           "content_index": 0, "text": resp.text}),
            ("response.content_part.done", {"type": "response.content_part.done",
                                            "item_id": mid, "output_index": index,
                                            "content_index": 0,
                                            "part": {**part, "text": resp.text}}),
            ("response.output_item.done", {"type": "response.output_item.done",
                                           "output_index": index, "item": done_item}),
        ]
        output.append(done_item)
    for name, args in resp.calls:
        index = len(output)
        arguments = json.dumps(args)
        item = {"type": "function_call", "id": new_id("fc"), "call_id": new_id("call"),
                "name": name, "arguments": "", "status": "in_progress"}
        if "." in name:  # a tool in a namespace (an MCP server's, in Codex)
            item["namespace"], item["name"] = name.split(".", 1)
        done_item = {**item, "arguments": arguments, "status": "completed"}
        out += [
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": index, "item": item}),
            ("response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "item_id": item["id"],
                "output_index": index, "delta": arguments}),
            ("response.function_call_arguments.done", {
                "type": "response.function_call_arguments.done", "item_id": item["id"],
                "output_index": index, "arguments": arguments}),
            ("response.output_item.done", {"type": "response.output_item.done",
                                           "output_index": index, "item": done_item}),
        ]
        output.append(done_item)
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    out.append(("response.completed", {"type": "response.completed",
                                       "response": {**base, "status": "completed",
                                                    "output": output, "usage": usage}}))
    return out


def chat_chunks(resp: Response, model: str, new_id: Ids) -> list[dict]:
    cid = new_id("chatcmpl")

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "delta": delta,
                                             "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    if resp.text:
        out.append(chunk({"content": resp.text}))
    for n, (name, args) in enumerate(resp.calls):
        out.append(chunk({"tool_calls": [{"index": n, "id": new_id("call"), "type": "function",
                                          "function": {"name": name,
                                                       "arguments": json.dumps(args)}}]}))
    out.append(chunk({}, "tool_calls" if resp.calls else "stop"))
    out.append({"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model, "choices": [],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    return out


def chat_completion(resp: Response, model: str, new_id: Ids) -> dict:
    message: dict = {"role": "assistant", "content": resp.text or None}
    if resp.calls:
        message["tool_calls"] = [{"id": new_id("call"), "type": "function",
                                  "function": {"name": n, "arguments": json.dumps(a)}}
                                 for n, a in resp.calls]
    return {"id": new_id("chatcmpl"), "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if resp.calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def gemini_response(resp: Response, model: str) -> dict:
    parts: list[dict] = []
    if resp.text:
        parts.append({"text": resp.text})
    for name, args in resp.calls:
        parts.append({"functionCall": {"name": name, "args": args}})
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": model or MODEL}


# --- the server -------------------------------------------------------------------------


@dataclass
class Request:
    """One logged request: what came and how it was answered."""

    method: str
    path: str
    dialect: str
    body: Any
    headers: dict[str, str]
    kind: str = ""  # main | side | tokens | models | unknown
    step: int | None = None
    status: int = 200
    answer: Response | None = None

    @property
    def tools(self) -> set[str]:
        return self.parsed.tools if self.parsed else set()

    parsed: Parsed | None = None


class FakeModelServer:
    """`with FakeModelServer(scenario) as server:` → server.url, server.requests."""

    def __init__(self, scenario: Scenario | None = None) -> None:
        self.scenario = scenario or Scenario.of(text(END_TEXT))
        # A CLI that offers the model no tools at all (aider): its requests are main
        # requests, not side requests.
        self.tool_less = False
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._ids = Ids()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---

    def start(self) -> FakeModelServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- what tests look at ---

    def main_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.kind == "main"]

    def unrendered(self) -> list[str]:
        """Why a scripted step could not be sent: a tool the CLI did not offer."""
        with self._lock:
            return [r.answer.missing for r in self.requests
                    if r.answer is not None and r.answer.missing is not None]

    def outside(self) -> list[Request]:
        """Attempts to reach a host other than this server (through the proxy)."""
        with self._lock:
            return [r for r in self.requests if r.kind == "outside"]

    def tools_offered(self) -> set[str]:
        found: set[str] = set()
        for request in self.main_requests():
            found |= request.tools
        return found

    def describe(self) -> str:
        """One line per request, for a failing test's message."""
        with self._lock:
            return "\n".join(
                f"{r.method} {r.path} [{r.kind}] step={r.step} -> {r.status}"
                + (f" calls={[n for n, _ in r.answer.calls]}" if r.answer else "")
                for r in self.requests
            )

    # --- answering ---

    def answer(self, dialect: str, parsed: Parsed) -> tuple[str, int | None, Response]:
        if not parsed.tools and not self.tool_less:
            return "side", None, Response(text=SIDE_TEXT)
        conversation = self.scenario.conversation(parsed.user_text)
        if conversation is None:
            return "main", None, Response(text=END_TEXT)
        responses = render(conversation.steps, parsed.tools, parsed.deferred)
        # A tool-less CLI makes one request per invocation, and its history holds
        # example and repo-map turns of its own: it is always at the first step.
        step = 0 if self.tool_less else parsed.turns
        if step >= len(responses):
            return "main", step, Response(text=END_TEXT)
        return "main", step, responses[step]


class _Handler(BaseHTTPRequestHandler):
    owner: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    # --- plumbing ---

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") in ("gzip", "zstd", "br"):
            raw = _decompress(raw, self.headers.get("Content-Encoding", ""))
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def _log(self, dialect: str, body: Any) -> Request:
        request = Request(self.command, self.path, dialect, body,
                          {k.lower(): v for k, v in self.headers.items()})
        with self.owner._lock:
            self.owner.requests.append(request)
        return request

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status >= 500:
            # Clients that honour it (opencode, the OpenAI and Anthropic SDKs) retry
            # after 0.1 s instead of backing off for a minute; every retry still shows.
            self.send_header("retry-after-ms", "100")
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: Iterable[tuple[str | None, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for name, data in events:
            payload = data if isinstance(data, str) else json.dumps(data)
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {payload}\n\n".encode())
            self.wfile.flush()

    # --- routes ---

    def _outside(self) -> bool:
        """A proxied request for another host: refused and logged. A proxied request for
        this server itself is served as if it came directly."""
        if self.command == "CONNECT":
            target = self.path
        elif self.path.startswith(("http://", "https://")):
            url = urlparse(self.path)
            if url.hostname in ("127.0.0.1", "localhost") and url.port == self.owner.port:
                self.path = url.path + (f"?{url.query}" if url.query else "")
                return False
            target = self.path
        else:
            return False
        request = self._log("outside", None)
        request.kind, request.status, request.path = "outside", 403, target
        self.close_connection = True
        self._json(403, {"error": {"message": f"no traffic outside 127.0.0.1: {target}"}})
        return True

    def do_CONNECT(self) -> None:
        self._outside()

    def do_GET(self) -> None:
        if self._outside():
            return
        path = urlparse(self.path).path
        request = self._log("models", None)
        request.kind = "models"
        if path.startswith("/v1beta/models"):
            self._json(200, {"models": [{"name": f"models/{MODEL}",
                                         "supportedGenerationMethods": ["generateContent"]}]})
        elif path.endswith("/models"):
            self._json(200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}]})
        else:
            request.kind, request.status = "unknown", 404
            self._json(404, {"error": {"message": f"no route {path}"}})

    def do_POST(self) -> None:
        if self._outside():
            return
        url = urlparse(self.path)
        path = url.path
        body = self._body()
        if path.endswith("/messages/count_tokens"):
            request = self._log("anthropic", body)
            request.kind = "tokens"
            self._json(200, {"input_tokens": 10})
            return
        if path.endswith("/messages"):
            self._answer("anthropic", body, stream=bool(body.get("stream")))
        elif path.endswith("/responses"):
            self._answer("responses", body, stream=bool(body.get("stream", True)))
        elif path.endswith("/chat/completions"):
            self._answer("chat", body, stream=bool(body.get("stream")))
        elif ":countTokens" in path:
            request = self._log("gemini", body)
            request.kind = "tokens"
            self._json(200, {"totalTokens": 10})
        elif ":streamGenerateContent" in path:
            sse = parse_qs(url.query).get("alt") == ["sse"]
            self._answer("gemini", body, stream=True, gemini_sse=sse)
        elif ":generateContent" in path:
            self._answer("gemini", body, stream=False)
        else:
            request = self._log("unknown", body)
            request.kind, request.status = "unknown", 404
            self._json(404, {"error": {"message": f"no route {path}"}})

    def _answer(self, dialect: str, body: Any, *, stream: bool, gemini_sse: bool = False) -> None:
        request = self._log(dialect, body)
        if not isinstance(body, dict):
            request.kind, request.status = "unknown", 400
            self._json(400, error_body(dialect, 400))
            return
        parsed = parse_request(dialect, body, stream=stream)
        model = parsed.model or MODEL
        kind, step, resp = self.owner.answer(dialect, parsed)
        request.parsed, request.kind, request.step, request.answer = parsed, kind, step, resp
        if resp.error is not None:
            request.status = resp.error
            self._json(resp.error, error_body(dialect, resp.error))
            return
        new_id = self.owner._ids
        if dialect == "anthropic":
            if stream:
                self._sse(anthropic_events(resp, model, new_id))
            else:
                self._json(200, anthropic_message(resp, model, new_id))
        elif dialect == "responses":
            self._sse(responses_events(resp, model, new_id))
        elif dialect == "chat":
            if stream:
                self._sse([(None, c) for c in chat_chunks(resp, model, new_id)]
                          + [(None, "[DONE]")])
            else:
                self._json(200, chat_completion(resp, model, new_id))
        else:
            answer = gemini_response(resp, model)
            if gemini_sse:
                self._sse([(None, answer)])
            elif stream:
                self._json(200, [answer])
            else:
                self._json(200, answer)


def _decompress(raw: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        import gzip

        return gzip.decompress(raw)
    if encoding == "zstd":
        try:
            import zstandard  # type: ignore[import-not-found]
        except ImportError:
            return raw
        return zstandard.ZstdDecompressor().decompress(raw, max_output_size=64 << 20)
    return raw


Predicate = Callable[[Request], bool]
