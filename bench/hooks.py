#!/usr/bin/env python3
"""Every event an agent's hook sends `aidp hook`, counted in instructions against the floor.

    .venv/bin/python bench/hooks.py                                  # this checkout, 1k tasks
    .venv/bin/python bench/hooks.py --tree OLD/src --tree NEW/src --sizes 100,1000

bench/instructions.py's project (a clone of a repository holding the generated backlog,
no AIDP_DIR) and its count (valgrind's cachegrind, `--cache-sim=no`: the instructions
the process executed, steady whatever the machine's load). For Claude Code, Gemini CLI
and Codex: the session start, a user prompt, the plan tool's call (a plan of two items,
one open: the same each time, so nothing is written after the first) and a stop, twice:
in a session with no TODO list (the stop is let through) and in the plan's session (the
stop is refused with the continuation prompt; a prompt before it, not counted, resets
the count of refusals). Each command runs once before it is counted (bytecode, caches).
The target (issue 40): every event ≤ 1.2x the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import instructions  # noqa: E402 - bench/instructions.py: the project and the count
import userland  # noqa: E402 - bench/userland.py: aidp as its users run it

# Per agent: (its events: start, prompt, plan, stop), the payload key of a prompt and of
# the turn's last reply, and its plan tool's call.
_TWO = [("Write the failing test", "completed"), ("Make it pass", "in_progress")]
AGENTS = {
    "claude": (("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"),
               "last_assistant_message",
               {"tool_name": "TodoWrite", "tool_input": {"todos": [
                   {"content": c, "status": s, "activeForm": c} for c, s in _TWO]},
                "tool_response": {}}),
    "gemini": (("SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"),
               "prompt_response",
               {"tool_name": "write_todos", "tool_input": {"todos": [
                   {"description": c, "status": s} for c, s in _TWO]}}),
    "codex": (("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"),
              "last_assistant_message",
              {"tool_name": "update_plan", "tool_input": {"plan": [
                  {"step": c, "status": s} for c, s in _TWO]}}),
}


def cases(agent: str, cwd: Path) -> list[tuple[str, str, dict[str, object],
                                               dict[str, object] | None]]:
    """(label, event, payload, payload sent first and not counted)."""
    (start, prompt, plan, stop), reply, call = AGENTS[agent]
    idle, busy = f"bench-hooks-{agent}", f"bench-hooks-{agent}-plan"
    prompted = {"session_id": busy, "hook_event_name": prompt, "prompt": "Go on."}
    return [
        (start, start, {"session_id": idle, "hook_event_name": start, "source": "startup",
                        "cwd": str(cwd), "transcript_path": str(cwd.parent / "t.jsonl")}, None),
        (prompt, prompt, {"session_id": idle, "hook_event_name": prompt,
                          "prompt": "Go on."}, None),
        (f"{plan} ({call['tool_name']})", plan,
         {"session_id": busy, "hook_event_name": plan, **call}, None),
        (f"{stop}, no list", stop, {"session_id": idle, "hook_event_name": stop,
                                    "stop_hook_active": False, reply: "Done."}, None),
        (f"{stop}, refused", stop, {"session_id": busy, "hook_event_name": stop,
                                    "stop_hook_active": False, reply: "Done."}, prompted),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000", help="task counts (default 1000)")
    parser.add_argument("--tree", action="append", default=[],
                        help="a checkout's src, first on PYTHONPATH (repeat; default: the "
                        "installed aidp)")
    parser.add_argument("--agents", default=",".join(AGENTS), help="default: all three")
    args = parser.parse_args()
    python, script = sys.executable, userland.console_script()[0]
    print(f"`python bench/hooks.py {' '.join(sys.argv[1:])}`".replace(" `", "`"),
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load "
          f"{os.getloadavg()[0]:.2f})\n")
    print("| tasks | tree | hook | instructions | floor | aidp − floor | x floor |")
    print("|---:|---|---|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        clone, base_env = instructions.project(size)
        for tree in args.tree or [""]:
            env = dict(base_env, **({"PYTHONPATH": str(Path(tree).resolve())} if tree else {}))
            floor_argv = [python, str(userland.FLOOR), "cmd3", "--json"]
            userland.run(floor_argv, env, clone)
            floor = instructions.instructions(floor_argv, env, clone)
            for agent in args.agents.split(","):
                for label, event, payload, first in cases(agent, clone):
                    argv = [python, script, "hook", agent, event]
                    data = json.dumps(payload).encode()
                    for warm in (first, payload, first):  # bytecode, caches; then reset
                        if warm is not None:
                            userland.run([*argv[:-1], str(warm["hook_event_name"])], env,
                                         clone, stdin=json.dumps(warm).encode())
                    count = instructions.instructions(argv, env, clone, data)
                    print(f"| {size:,} | {tree or 'installed'} | {agent} {label} | "
                          f"{count / 1e6:.1f} M | {floor / 1e6:.1f} M | "
                          f"{(count - floor) / 1e6:+.1f} M | {count / floor:.3f} |", flush=True)
    print(f"\nload after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
