"""`aidp setup` + `aidp hook` with the REAL Claude Code, Gemini CLI and Codex (issue 11).

Each CLI runs headless (`claude -p`, `gemini -p`) in a hermetic world against the
scripted model server on 127.0.0.1, with the project settings `aidp setup` wrote and no
AIDP_SESSION: the hooks use the agent's own session id. The scripted model plans with
the CLI's own plan tool, then stops with items pending; the Stop / AfterAgent hook
must push it on until it finishes them, and at most 3 times in a row when it never
does.
"""

from __future__ import annotations

import json

from fakemodel import Scenario, plan, text, todo_write
from harness import AgentWorld, cli_bin

PLAN = [("Write code", "in_progress"), ("Write tests", "pending")]
DONE = [("Write code", "completed"), ("Write tests", "completed")]
PUSH = "You have an active task: Write code"


def finishing() -> Scenario:
    """Plans, stops with items open, is pushed, finishes them, stops."""
    return Scenario.of(plan(PLAN), text("I'll stop here for now."), plan(DONE),
                       text("All done."))


def lazy() -> Scenario:
    """Plans, then only ever stops."""
    return Scenario.of(plan(PLAN), *[text(f"Stopping ({n}).") for n in range(8)])


def set_up(world: AgentWorld, agent: str, *options: str) -> None:
    world.env.pop("AIDP_SESSION", None)  # the hooks must use the agent's session id
    result = world.aidp("setup", agent, *options)
    assert result.exit_code == 0, str(result)
    assert world.aidp("setup", agent, "--check").exit_code == 0


def main_requests(server) -> list:
    return [r for r in server.requests if r.kind == "main"]


def only_session(world: AgentWorld) -> tuple[str, list[tuple[str, str]]]:
    lists = world.json("todo", "list", "--json")
    assert isinstance(lists, list) and len(lists) == 1, lists
    session = lists[0]["session"]
    shown = world.json("--session", session, "todo", "show", "--json")
    return session, [(i["content"], i["status"]) for i in shown["items"]]


def no_hook_records(world: AgentWorld) -> None:
    path = world.project / ".aidp" / "tasklist.jsonl"
    types = {json.loads(line).get("type") for line in path.read_text().splitlines() if line}
    # The TODO list's own records only: hook state stays in .aidp/hooks/, git-ignored.
    assert types <= {"todo_list", "todo_head", "todo_item"}, types
    assert (world.project / ".aidp" / "hooks" / ".gitignore").exists()


# --- Claude Code ----------------------------------------------------------------------


def run_claude(world: AgentWorld, prompt: str, *extra: str):
    argv = [str(cli_bin("claude")), "-p", prompt, "--output-format", "json",
            "--max-turns", "30", *extra]
    # Claude 2.1.332 connects MCP servers without waiting (MCP_CONNECTION_NONBLOCKING
    # unset = on): a server slower to start than the first request (`aidp mcp` takes
    # ~5 s on a loaded machine, backlog 2c1c) is not offered in it, and the model plans
    # without it. Claude's own switch makes it wait (up to MCP_TIMEOUT), as when quiet.
    world.env["MCP_CONNECTION_NONBLOCKING"] = "false"
    result = world.run(argv, timeout=240)
    assert result.exit_code == 0, str(result)
    return json.loads(result.stdout)


def claude_user_texts(request) -> list[str]:
    out = []
    for message in request.body["messages"]:
        if message.get("role") != "user":
            continue
        content = message["content"]
        parts = [content] if isinstance(content, str) else [
            p.get("text", "") for p in content if isinstance(p, dict)]
        out.extend(p for p in parts if p)
    return out


# Claude Code 2.1.332 offers no plan tool headless (no TodoWrite, no TaskCreate): it
# plans with aidp's todo_write, from the server `aidp setup claude --mcp` registers in
# .mcp.json. Headless, the tool is allowed on the command line, as a person would
# approve it once in a session.
MCP_TOOLS = ("--allowedTools", "mcp__aidp__todo_write")


def test_claude_is_pushed_on_until_its_plan_is_done(claude: AgentWorld, fake_model) -> None:
    set_up(claude, "claude", "--mcp")
    fake_model.scenario = finishing()
    answer = run_claude(claude, "Implement the feature", *MCP_TOOLS)
    assert answer["result"] == "All done."
    requests = main_requests(fake_model)
    offered = {t.get("name") for t in requests[0].body.get("tools") or []}
    assert not offered & {"TodoWrite", "TaskCreate"}, offered
    assert "mcp__aidp__todo_write" in requests[0].parsed.deferred, fake_model.describe()
    # SessionStart: the prime text reached the model.
    first = json.dumps(requests[0].body["messages"])
    assert "SessionStart hook additional context: # aidp: your TODO list" in first
    # Stop: refused once, with the continuation prompt as Claude's new user message.
    pushes = [t for t in claude_user_texts(requests[-1]) if PUSH in t]
    # (2.1.332 wraps it in a <system-reminder> saying a hook set up by the user wrote it)
    assert len(pushes) == 1 and f"Stop hook feedback:\n{PUSH}\n" in pushes[0], pushes
    assert "reminder 1 of 3" in pushes[0]
    # The server Claude started keeps the plan in the session the hooks push on.
    session, items = only_session(claude)
    assert session == answer["session_id"]
    assert items == DONE
    no_hook_records(claude)


def trust_claude_folder(world: AgentWorld) -> None:
    """What answering Claude Code's trust dialog once in the project records: its
    project settings (`permissions.allow` included) then apply headless too."""
    config = world.home / ".claude" / ".claude.json"
    known = json.loads(config.read_text()) if config.exists() else {}
    known.setdefault("projects", {})[str(world.project)] = {"hasTrustDialogAccepted": True}
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(known))


def test_claude_plans_with_aidps_tools_that_setup_allowed(claude: AgentWorld,
                                                         fake_model) -> None:
    """Issue 35, item 14: `aidp setup claude --mcp` allows aidp's tools in
    .claude/settings.json (`permissions.allow`), so a headless `claude -p` in a folder
    the user trusts calls `todo_write` with no `--allowedTools` of its own (before, the
    call was refused: "you haven't granted it yet")."""
    set_up(claude, "claude", "--mcp")
    allowed = json.loads((claude.project / ".claude" / "settings.json").read_text())
    assert "mcp__aidp__todo_write" in allowed["permissions"]["allow"]
    trust_claude_folder(claude)
    fake_model.scenario = finishing()
    answer = run_claude(claude, "Implement the feature")  # no --allowedTools
    assert answer["result"] == "All done.", answer
    session, items = only_session(claude)
    assert session == answer["session_id"] and items == DONE, (session, items)
    assert "haven't granted" not in json.dumps(
        [r.body for r in main_requests(fake_model)]), fake_model.describe()


def test_claude_lazy_model_is_pushed_three_times_then_a_new_prompt_resets(
    claude: AgentWorld, fake_model
) -> None:
    set_up(claude, "claude", "--mcp")
    fake_model.scenario = lazy()
    run_claude(claude, "Implement the feature", *MCP_TOOLS)
    pushes = [t for t in claude_user_texts(main_requests(fake_model)[-1]) if PUSH in t]
    assert [("reminder 1 of 3" in p, "reminder 2 of 3" in p, "reminder 3 of 3" in p)
            for p in pushes] == [(True, False, False), (False, True, False),
                                 (False, False, True)]
    session, items = only_session(claude)
    assert items == PLAN  # still open: the turn ended after 3 reminders
    # Resuming with a new prompt: the prime shows the open list, the count starts again.
    fake_model.requests.clear()
    fake_model.scenario = Scenario.of(text("Stopping again."))
    run_claude(claude, "Carry on", "--resume", session)
    requests = main_requests(fake_model)
    context = json.dumps(requests[0].body["messages"])
    assert "1. [IN_PROGRESS] (MEDIUM) Write code" in context
    pushes = [t for t in claude_user_texts(requests[-1]) if PUSH in t]
    assert len(pushes) == 6  # the 3 of the first prompt, then 3 more after the new one
    assert ["reminder 1 of 3" in t for t in pushes[3:]] == [True, False, False]


def test_claude_setup_remove_leaves_no_hooks(claude: AgentWorld, fake_model) -> None:
    set_up(claude, "claude")
    assert claude.aidp("setup", "claude", "--remove").exit_code == 0
    assert not (claude.project / ".claude" / "settings.json").exists()
    fake_model.scenario = Scenario.of(*[text(f"Stopping ({n}).") for n in range(4)])
    run_claude(claude, "Implement the feature")
    requests = main_requests(fake_model)
    assert not any(PUSH in t for t in claude_user_texts(requests[-1]))
    assert "aidp: your TODO list" not in json.dumps(requests[0].body)


# --- Gemini CLI -----------------------------------------------------------------------


def run_gemini(world: AgentWorld, prompt: str):
    world.env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"  # project hooks run in trusted folders
    argv = [str(cli_bin("gemini")), "-p", prompt, "--approval-mode", "yolo",
            "--output-format", "json"]
    result = world.run(argv, timeout=300)
    assert result.exit_code == 0, str(result)
    return json.loads(result.stdout)


def gemini_user_texts(request) -> list[str]:
    return [p["text"] for c in request.body["contents"] if c.get("role", "user") == "user"
            for p in c.get("parts") or [] if isinstance(p.get("text"), str)]


def test_gemini_is_pushed_on_until_its_plan_is_done(gemini: AgentWorld, fake_model) -> None:
    set_up(gemini, "gemini")
    fake_model.scenario = finishing()
    run_gemini(gemini, "Implement the feature")
    requests = main_requests(fake_model)
    assert "write_todos" in json.dumps(requests[0].body.get("tools"))
    first = "\n".join(gemini_user_texts(requests[0]))
    assert "<hook_context># aidp: your TODO list" in first
    pushes = [t for t in gemini_user_texts(requests[-1]) if t.startswith(PUSH)]
    assert len(pushes) == 1 and "reminder 1 of 3" in pushes[0]
    _, items = only_session(gemini)
    assert items == DONE
    no_hook_records(gemini)


def test_gemini_3_plans_with_aidps_todo_write_and_is_pushed_on(gemini: AgentWorld,
                                                               fake_model) -> None:
    """Gemini CLI offers write_todos to no Gemini 3 model (its default): with `aidp setup
    gemini --mcp` the model plans with aidp's todo_write, in the session the hooks use."""
    # What its default ("auto") picks; named, so that no routing request (a classifier
    # call the scripted model cannot answer) comes first.
    gemini.env["GEMINI_MODEL"] = "gemini-3.1-pro-preview"
    set_up(gemini, "gemini", "--mcp")
    fake_model.scenario = finishing()
    run_gemini(gemini, "Implement the feature")
    requests = main_requests(fake_model)
    assert "gemini-3" in requests[0].path, requests[0].path
    assert "write_todos" not in requests[0].tools
    assert "mcp_aidp_todo_write" in requests[0].tools, fake_model.describe()
    pushes = [t for t in gemini_user_texts(requests[-1]) if t.startswith(PUSH)]
    assert len(pushes) == 1 and "reminder 1 of 3" in pushes[0]
    _, items = only_session(gemini)
    assert items == DONE


def test_gemini_lazy_model_is_pushed_at_most_three_times(gemini: AgentWorld,
                                                         fake_model) -> None:
    """Gemini has no cap of its own: aidp's count is the only one."""
    set_up(gemini, "gemini")
    fake_model.scenario = lazy()
    run_gemini(gemini, "Implement the feature")
    requests = main_requests(fake_model)
    pushes = [t for t in gemini_user_texts(requests[-1]) if t.startswith(PUSH)]
    assert len(pushes) == 3 and "reminder 3 of 3" in pushes[-1]
    assert len(requests) == 5  # plan, then 4 stops: 3 refused, the 4th let through
    _, items = only_session(gemini)
    assert items == PLAN


# --- Codex CLI ------------------------------------------------------------------------


def run_codex(world: AgentWorld, prompt: str, *extra: str):
    # Project hooks run only in a trusted project, and only once trusted themselves: this
    # one-off run trusts what `aidp setup codex` wrote, as a user checking it would.
    config = world.home / ".codex" / "config.toml"
    if str(world.project) not in config.read_text():
        config.write_text(config.read_text()
                          + f'\n[projects."{world.project}"]\ntrust_level = "trusted"\n')
    argv = [str(cli_bin("codex")), "exec", "--dangerously-bypass-hook-trust",
            "-c", "tools.update_plan.enabled=true", *extra, "--json", prompt]
    result = world.run(argv, timeout=240)
    assert result.exit_code == 0, str(result)
    return result


def codex_user_texts(request) -> list[str]:
    out = []
    for item in request.body["input"]:
        if isinstance(item, dict) and item.get("role") in ("user", "developer"):
            content = item.get("content")
            parts = [content] if isinstance(content, str) else [
                p.get("text", "") for p in content or [] if isinstance(p, dict)]
            out.extend(p for p in parts if p)
    return out


def test_codex_is_pushed_on_until_its_plan_is_done(codex: AgentWorld, fake_model) -> None:
    set_up(codex, "codex")
    fake_model.scenario = finishing()
    run_codex(codex, "Implement the feature")
    requests = main_requests(fake_model)
    texts = codex_user_texts(requests[-1])
    assert any(t.startswith("# aidp: your TODO list") for t in texts)  # SessionStart
    pushes = [t for t in texts if PUSH in t]
    assert len(pushes) == 1 and "reminder 1 of 3" in pushes[0]
    _, items = only_session(codex)
    assert items == DONE
    no_hook_records(codex)


def test_codex_plan_kept_with_todo_write_is_the_list_its_hooks_push_on(
        codex: AgentWorld, fake_model) -> None:
    """`aidp setup codex --mcp`: the server Codex starts from the project's config (with
    a scrubbed environment, no AIDP_SESSION) keeps the plan in the session the hooks
    use. Headless, its tools are approved on the command line, as a person would
    approve them, and Codex waits for it (`required`)."""
    set_up(codex, "codex", "--mcp")
    assert "[mcp_servers.aidp]" in (codex.project / ".codex" / "config.toml").read_text()
    fake_model.scenario = Scenario.of(todo_write(PLAN), text("I'll stop here for now."),
                                      todo_write(DONE), text("All done."))
    run_codex(codex, "Implement the feature",
              "-c", 'mcp_servers.aidp.default_tools_approval_mode="approve"',
              "-c", "mcp_servers.aidp.required=true")
    requests = main_requests(fake_model)
    assert "mcp__aidp.todo_write" in requests[0].tools, fake_model.describe()
    pushes = [t for t in codex_user_texts(requests[-1]) if PUSH in t]
    assert len(pushes) == 1 and "reminder 1 of 3" in pushes[0], fake_model.describe()
    _, items = only_session(codex)
    assert items == DONE


def test_codex_lazy_model_is_pushed_at_most_three_times(codex: AgentWorld,
                                                        fake_model) -> None:
    set_up(codex, "codex")
    fake_model.scenario = lazy()
    run_codex(codex, "Implement the feature")
    pushes = [t for t in codex_user_texts(main_requests(fake_model)[-1]) if PUSH in t]
    assert len(pushes) == 3 and "reminder 3 of 3" in pushes[-1]
    _, items = only_session(codex)
    assert items == PLAN


def test_gemini_hooks_can_be_turned_off_one_by_one(gemini: AgentWorld, fake_model) -> None:
    """docs/agents.md: `hooksConfig.disabled` names the hook to skip."""
    set_up(gemini, "gemini")
    user_settings = gemini.home / ".gemini" / "settings.json"
    data = json.loads(user_settings.read_text())
    data["hooksConfig"] = {"disabled": ["aidp-continue"]}
    user_settings.write_text(json.dumps(data))
    fake_model.scenario = lazy()
    run_gemini(gemini, "Implement the feature")
    requests = main_requests(fake_model)
    assert "<hook_context># aidp: your TODO list" in "\n".join(gemini_user_texts(requests[0]))
    assert not any(t.startswith(PUSH) for t in gemini_user_texts(requests[-1]))
    _, items = only_session(gemini)
    assert items == PLAN  # the plan hook still ran
