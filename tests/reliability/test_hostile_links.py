"""A cloned repository plants links, FIFOs and git attributes (issue 27, items 1, 2, 9
and 10): aidp never writes or deletes through a link, never hangs on a FIFO, and still
reads the tasks of a tasklist whose git attributes were overridden.

Every test builds an attacker's repository with real git, clones it, and runs `aidp`
as a subprocess in the clone (the `hostile` fixture, tests/reliability/conftest.py).
`test_every_writer_refuses_every_planted_thing` walks the table WRITERS: a new file
aidp writes in a project gets a row there."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from aidp.agent.hook.state import state_path

TASK = {"id": "t-0001", "description": "an honest task", "status": "pending",
        "priority": "medium", "tags": [], "created_at": "2026-01-01T00:00:00.000000Z",
        "updated_at": "2026-01-01T00:00:00.000000Z"}
TASKLIST = orjson.dumps(TASK) + b"\n"
BAIT = '$(touch "$HOME/pwned")'
OLD = 1_000_000_000  # 2001: older than any state aidp keeps


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (links not followed) with its bytes: what must not
    change outside the clone."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def agent_script(hostile, text: str = "nothing to do") -> str:
    """An agent command that prints `text` and exits: what `aidp run` starts."""
    script = hostile.home / "agent.py"
    script.write_text(f"print({text!r})\n", encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def error_lines(result) -> list[str]:
    return [line for line in result.err.splitlines() if line.startswith("Error: ")]


def test_a_clone_lists_the_attackers_tasks(hostile) -> None:
    """The fixture itself: a committed tasklist is read in the clone."""
    hostile.write(".aidp/tasklist.jsonl", TASKLIST)
    hostile.clone()
    result = hostile.aidp("tasks", "list")
    assert result.code == 0 and "an honest task" in result.out, result


# --- item 1: writes through a committed link --------------------------------------------


def test_item1_run_writes_no_transcript_through_a_linked_runs_folder(hostile) -> None:
    """`.aidp/runs -> ~/.bashrc.d`: the transcript (carrying the attacker's task text)
    is not written there; the run says why, once, and goes on."""
    sourced = hostile.home / ".bashrc.d"
    sourced.mkdir()
    hostile.write(".aidp/tasklist.jsonl", orjson.dumps({**TASK, "description": BAIT}) + b"\n")
    hostile.link(".aidp/runs", sourced)
    hostile.clone()
    result = hostile.aidp("run", "go", "--agent", agent_script(hostile),
                          "--max-continuations", "0")
    assert list(sourced.iterdir()) == []
    assert ".aidp/runs: it is a symbolic link" in result.err, result
    assert (hostile.victim / ".aidp" / "runs").is_symlink()


def test_item1_gitignore_linked_to_gitconfig_gets_nothing(hostile) -> None:
    """`.aidp/.gitignore -> ~/.gitconfig`: neither `run` (which adds `runs/` to an old
    .gitignore) nor `init` (which adds config.local.toml) appends to it."""
    gitconfig = hostile.home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = me\n")
    hostile.write(".aidp/tasklist.jsonl", TASKLIST)
    hostile.link(".aidp/.gitignore", gitconfig)
    hostile.clone()
    hostile.aidp("run", "go", "--agent", agent_script(hostile), "--max-continuations", "0")
    init = hostile.aidp("init")
    assert gitconfig.read_text() == "[user]\n\tname = me\n"
    assert init.code == 1 and len(error_lines(init)) == 1, init
    assert ".gitignore: it is a symbolic link" in init.err, init
    listed = hostile.aidp("tasks", "list")
    assert listed.code == 0 and "an honest task" in listed.out


# --- item 2: the hook-state sweep -------------------------------------------------------


def test_item2_sweep_deletes_nothing_through_a_linked_hooks_folder(hostile) -> None:
    """`.aidp/hooks -> ~/.docker`: SessionStart sweeps old state, and must not unlink
    the user's old `*.json` files there."""
    docker = hostile.home / ".docker"
    docker.mkdir()
    config = docker / "config.json"
    config.write_text('{"auths": {}}')
    os.utime(config, (OLD, OLD))
    hostile.write(".aidp/tasklist.jsonl", TASKLIST)
    hostile.link(".aidp/hooks", docker)
    hostile.clone()
    payload = '{"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}'
    result = hostile.aidp("hook", "claude", "SessionStart", stdin=payload)
    assert result.code == 0, result
    assert config.read_text() == '{"auths": {}}'
    assert sorted(p.name for p in docker.iterdir()) == ["config.json"]


def test_item2_sweep_keeps_files_it_did_not_write(hostile) -> None:
    """In a real `.aidp/hooks`, an old file aidp never names (a committed one, a link
    to a file outside) is kept; only old state files of aidp's own naming go."""
    outside = hostile.outside / "keep.json"
    outside.write_text("{}")
    os.utime(outside, (OLD, OLD))
    hostile.write(".aidp/tasklist.jsonl", TASKLIST)
    hostile.write(".aidp/hooks/notes.json", "{}")
    hostile.link(".aidp/hooks/claude-x-00000000.json", outside)
    clone = hostile.clone()
    hooks = clone / ".aidp" / "hooks"
    stale = hooks / "claude-old-0badc0de.json"
    stale.write_text("{}")
    for path in (hooks / "notes.json", stale):
        os.utime(path, (OLD, OLD))
    payload = '{"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}'
    assert hostile.aidp("hook", "claude", "SessionStart", stdin=payload).code == 0
    assert (hooks / "notes.json").exists() and outside.read_text() == "{}"
    assert (hooks / "claude-x-00000000.json").is_symlink()
    assert not stale.exists()


# --- every writer, every kind of planted thing ------------------------------------------

CLAUDE_START = '{"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}'


@dataclass(frozen=True)
class Writer:
    """A file (or folder) aidp writes in a project, and a command that writes it.

    `path`: relative to the clone; `folder`: it is a folder aidp makes and writes in
    (then the planted thing replaces the folder); `refuses`: the command fails with one
    line naming it (exit 1) rather than going on without it (best-effort state: cache,
    hook state, transcript); `damage`: append a torn line first (repair has work);
    `idle`: kinds of planted thing after which the command finds nothing to do (exit 0,
    nothing written: asserted for every row)."""

    path: str
    args: tuple[str, ...]
    folder: bool = False
    refuses: bool = True
    damage: bool = False
    stdin: str | None = None
    run_agent: bool = False
    idle: tuple[str, ...] = ()


WRITERS = [
    Writer(".aidp/tasklist.jsonl", ("tasks", "add", BAIT)),
    Writer(".aidp/tasklist.jsonl.lock", ("tasks", "add", BAIT)),
    Writer(".aidp/.gitignore", ("init",)),
    # A linked .aidp/ with no tasklist behind it: nothing to repair.
    Writer(".aidp/backups", ("tasks", "repair"), folder=True, damage=True,
           idle=("linked parent folder",)),
    Writer(".aidp/cache", ("tasks", "list"), folder=True, refuses=False),
    Writer(".aidp/cache/log.stamp", ("tasks", "add", BAIT), refuses=False),
    Writer(".aidp/hooks", ("hook", "claude", "SessionStart"), folder=True, refuses=False,
           stdin=CLAUDE_START),
    # The state file of session s1: its name is predictable (aidp.agent.hook.state.state_path).
    Writer(str(state_path(Path("."), "claude", "s1")), ("hook", "claude", "SessionStart"),
           refuses=False, stdin=CLAUDE_START),
    Writer(".aidp/runs", ("run", "go", "--max-continuations", "0"), folder=True,
           refuses=False, run_agent=True),
    Writer(".gitattributes", ("init",)),
    Writer(".claude/settings.json", ("setup", "claude")),
    Writer(".gemini/settings.json", ("setup", "gemini")),
    Writer(".codex/hooks.json", ("setup", "codex")),
    Writer("CLAUDE.md", ("setup", "claude", "--instructions")),
    Writer(".mcp.json", ("setup", "claude", "--mcp")),
    Writer(".codex/config.toml", ("setup", "codex", "--mcp")),
]
KINDS = ["link to a file outside", "link to a folder outside", "dangling link", "fifo",
         "linked parent folder"]


def plant(clone: Path, outside: Path, writer: Writer, kind: str) -> Path:
    """Put `kind` where `writer` writes in `clone` (a FIFO as a plain file: git cannot
    store one, the test makes it in the clone); the path that must stay as planted."""
    target = clone / writer.path
    if kind == "linked parent folder":
        parent = Path(writer.path).parent
        if str(parent) == ".":
            parent = Path(".aidp") if writer.path.startswith(".aidp") else Path(writer.path)
        target = clone / (parent if not writer.folder else writer.path)
        if writer.path.startswith(".aidp/") and writer.folder:
            target = clone / ".aidp"  # the folder's own parent: .aidp itself
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        import shutil

        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link to a file outside":
        (outside / "victim").write_text("the user's file\n")
        target.symlink_to(outside / "victim")
    elif kind in ("link to a folder outside", "linked parent folder"):
        (outside / "dir").mkdir(exist_ok=True)
        (outside / "dir" / "old.json").write_text("{}")
        os.utime(outside / "dir" / "old.json", (OLD, OLD))
        target.symlink_to(outside / "dir", target_is_directory=True)
    elif kind == "dangling link":
        target.symlink_to(outside / "missing")
    else:
        target.write_text("a FIFO in the clone\n")
    return target


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: f"{w.path} ({w.args[0]})")
def test_every_writer_refuses_every_planted_thing(hostile, writer: Writer, kind: str) -> None:
    """Links are committed by the attacker (git stores them); a FIFO, which git cannot
    store, is made in the clone (by a build script, say)."""
    tasklist = TASKLIST + (b"{torn\n" if writer.damage else b"")
    hostile.write(".aidp/tasklist.jsonl", tasklist)
    hostile.write(".aidp/.gitignore", "*.lock\ncache/\nruns/\nbackups/\nhooks/\n")
    if writer.path == ".aidp/cache/log.stamp":
        hostile.write(".aidp/cache/.gitignore", "*\n")
    planted = plant(hostile.attacker, hostile.outside, writer, kind)
    clone = hostile.clone()
    planted = clone / planted.relative_to(hostile.attacker)
    if kind == "fifo":
        planted.unlink()
        os.mkfifo(planted)
    before = snapshot(hostile.outside)
    args = list(writer.args)
    if writer.run_agent:
        args += ["--agent", agent_script(hostile)]
    result = hostile.aidp(*args, stdin=writer.stdin)  # a FIFO that hung would time out
    assert "Traceback" not in result.err, result
    assert snapshot(hostile.outside) == before, f"written outside: {result}"
    assert not (hostile.outside / "missing").exists(), f"created outside: {result}"
    assert planted.is_symlink() or planted.is_fifo(), "the planted thing was replaced"
    if writer.refuses and kind not in writer.idle:
        assert result.code == 1, result
        assert len(error_lines(result)) == 1, result
        assert any(word in result.err for word in (
            "symbolic link", "not a regular file", "not a folder", "Is a directory")), result
    listed = hostile.aidp("tasks", "list")
    if kind != "linked parent folder" and not writer.path.startswith(".aidp/tasklist"):
        assert listed.code == 0 and "an honest task" in listed.out, listed


# --- item 10: an undecodable .gitattributes ---------------------------------------------


def test_item10_init_with_a_latin1_gitattributes(hostile) -> None:
    """`.gitattributes` in Latin-1: init adds its rules as bytes, leaving the user's
    lines byte for byte, with no traceback."""
    latin = "# r\xe9sum\xe9s\n*.txt text\n".encode("latin-1")
    hostile.write(".gitattributes", latin)
    clone = hostile.clone()
    result = hostile.aidp("init")
    assert result.code == 0 and "Traceback" not in result.err, result
    data = (clone / ".gitattributes").read_bytes()
    assert data.startswith(latin)
    assert b".aidp/tasklist.jsonl merge=union\n" in data
    assert hostile.aidp("tasks", "add", "works").code == 0


def test_item10_init_refused_early_leaves_no_aidp_folder(hostile) -> None:
    """A refusal init can foresee (a linked .gitattributes, a FIFO) comes before
    .aidp/ is made: nothing half-made is left."""
    (hostile.outside / "attributes").write_text("* text\n")
    hostile.link(".gitattributes", hostile.outside / "attributes")
    hostile.write("README", "hello\n")
    clone = hostile.clone()
    result = hostile.aidp("init")
    assert result.code == 1 and len(error_lines(result)) == 1, result
    assert ".gitattributes: it is a symbolic link" in result.err
    assert not (clone / ".aidp").exists()
    assert (hostile.outside / "attributes").read_text() == "* text\n"


# --- item 9: git attributes that override aidp's ----------------------------------------


def commit_attributes_after(hostile, rules: str, where: str = ".aidp/.gitattributes") -> None:
    """Commit the tasklist first, then the attributes on their own: the clone checks the
    tasklist out through them (re-encoded, for working-tree-encoding)."""
    hostile.write(".aidp/tasklist.jsonl", TASKLIST)
    hostile.write(".gitattributes", ".aidp/tasklist.jsonl merge=union diff=aidp\n")
    hostile.git("add", "-A", cwd=hostile.attacker)
    hostile.git("commit", "-q", "-m", "tasks", cwd=hostile.attacker)
    hostile.write(where, rules)
    hostile.git("add", where, cwd=hostile.attacker)
    hostile.git("commit", "-q", "-m", "attributes", cwd=hostile.attacker)


@pytest.mark.parametrize("encoding", ["UTF-16", "UTF-16LE", "UTF-16BE"])
def test_item9_a_utf16_tasklist_is_read_and_never_written(hostile, encoding: str) -> None:
    """`working-tree-encoding=UTF-16 -merge` in a committed .aidp/.gitattributes: the
    clone's tasklist is UTF-16 (with a BOM, or without one for LE/BE). Its tasks are
    listed, the override is named in one line, and no write corrupts it."""
    commit_attributes_after(hostile, f"tasklist.jsonl working-tree-encoding={encoding} "
                                     "-merge\n")
    clone = hostile.clone(commit=False)
    tasklist = clone / ".aidp" / "tasklist.jsonl"
    before = tasklist.read_bytes()
    assert b"\0" in before  # git really checked it out re-encoded
    listed = hostile.aidp("tasks", "list")
    assert listed.code == 0 and "an honest task" in listed.out, listed
    notes = [line for line in listed.err.splitlines() if "working-tree-encoding" in line]
    assert len(notes) == 1 and "-merge" in notes[0], listed
    assert "damaged" not in listed.err, listed
    for args in (("tasks", "add", "more"), ("tasks", "done", "t-0001"), ("tasks", "repair"),
                 ("tasks", "compact")):
        result = hostile.aidp(*args)
        assert result.code == 1 and len(error_lines(result)) == 1, (args, result)
        assert "writes UTF-8 only" in result.err, result
        assert tasklist.read_bytes() == before
    assert hostile.git("status", "--porcelain") == ""


def test_item9_a_merge_override_is_named_and_tasks_read(hostile) -> None:
    commit_attributes_after(hostile, "*.jsonl binary\n")
    hostile.clone()
    listed = hostile.aidp("tasks", "list")
    assert listed.code == 0 and "an honest task" in listed.out, listed
    notes = [line for line in listed.err.splitlines() if "git attributes" in line]
    assert len(notes) == 1 and "-merge" in notes[0] and ".aidp/.gitattributes" in notes[0]
    added = hostile.aidp("tasks", "add", "still works")
    assert added.code == 0, added


def test_item9_init_names_the_override(hostile) -> None:
    commit_attributes_after(hostile, "tasklist.jsonl merge=ours filter=evil\n")
    hostile.clone()
    result = hostile.aidp("init")
    assert result.code == 0, result
    notes = [line for line in result.err.splitlines() if "git attributes" in line]
    assert len(notes) == 1, result
    assert "merge=ours" in notes[0] and "filter=evil" in notes[0]


@pytest.mark.parametrize("where,rules", [
    (".aidp/.gitattributes", "* !merge\n"),
    (".gitattributes", ".aidp/tasklist.jsonl merge=union diff=aidp\n"
                       ".aidp/tasklist.jsonl !merge\n"),
])
def test_item9_a_merge_reset_to_unspecified_is_named(hostile, where: str, rules: str) -> None:
    """`!merge` leaves merge unspecified (git's text merge: conflicts), and `git
    check-attr -a` lists nothing for it: init and reads name it all the same."""
    commit_attributes_after(hostile, rules, where)
    hostile.clone()
    assert hostile.git("check-attr", "merge", ".aidp/tasklist.jsonl").endswith(
        ": merge: unspecified\n")
    for args in (("init",), ("tasks", "list")):
        result = hostile.aidp(*args)
        assert result.code == 0, (args, result)
        notes = [line for line in result.err.splitlines() if "git attributes" in line]
        assert len(notes) == 1 and "!merge (unspecified, not merge=union" in notes[0], result
        assert where in notes[0]
    assert "an honest task" in hostile.aidp("tasks", "list").out


def test_item9_reads_start_no_git_unless_an_attributes_file_names_the_tasklist(
        hostile) -> None:
    """Reads are the hot path: common attributes (`* text=auto eol=lf`, other files'
    rules) are looked at without starting git; git check-attr runs only for a line
    that could override the tasklist's attributes."""
    log = hostile.home / "git-calls"
    real_git = shutil.which("git")
    assert real_git is not None
    wrapper = hostile.home / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real_git}" "$@"\n')
    wrapper.chmod(0o755)
    env = {"PATH": f"{wrapper.parent}{os.pathsep}{hostile.env['PATH']}"}
    commit_attributes_after(hostile, "* text=auto eol=lf\n*.png binary\n",
                            where=".gitattributes")
    hostile.clone()
    listed = hostile.aidp("tasks", "list", env=env)
    assert listed.code == 0 and "an honest task" in listed.out and listed.err == "", listed
    assert "check-attr" not in (log.read_text() if log.exists() else "")
    hostile.write(".aidp/.gitattributes", "*.jsonl -merge\n")
    hostile.clone()
    listed = hostile.aidp("tasks", "list", env=env)
    assert "-merge" in listed.err and "check-attr" in log.read_text(), listed


def test_item1_a_committed_aidp_link_to_another_projects_tasklist_gets_nothing(
        hostile) -> None:
    """`.aidp -> ../other/.aidp` committed by the repository, where the user keeps
    another project with a tasklist: no write of this clone lands there (a link the
    user made themselves is still followed: docs/security.md)."""
    other = hostile.outside / "other" / ".aidp"
    other.mkdir(parents=True)
    (other / "tasklist.jsonl").write_bytes(TASKLIST)
    hostile.link(".aidp", other)
    hostile.write("README", "hi\n")
    hostile.clone()
    for args in (("tasks", "add", BAIT), ("tasks", "done", "t-0001"), ("init",)):
        result = hostile.aidp(*args)
        assert result.code == 1 and len(error_lines(result)) == 1, (args, result)
        assert "committed to the repository" in result.err, result
    assert (other / "tasklist.jsonl").read_bytes() == TASKLIST
    assert sorted(p.name for p in other.iterdir()) == ["tasklist.jsonl"]


def test_setup_refuses_before_it_writes_anything(hostile) -> None:
    """Every file setup would change is checked before any is written: a link at the
    MCP settings left the hooks file written behind "nothing was written"."""
    target = hostile.outside / "theirs.json"
    target.write_text("{}\n")
    hostile.write(".aidp/tasklist.jsonl", TASKLIST)
    hostile.link(".mcp.json", target)
    hostile.clone()
    ran = hostile.aidp("setup", "claude", "--mcp", "--instructions")
    assert ran.code == 1 and len(error_lines(ran)) == 1, ran
    assert "symbolic link" in ran.err and "nothing was written" in ran.err
    assert hostile.git("status", "--porcelain", "--untracked-files=all") == ""
    assert not (hostile.victim / ".claude").exists()
    assert not (hostile.victim / "CLAUDE.md").exists()
    assert target.read_text() == "{}\n"


def test_item9_a_planted_byte_order_mark_without_an_attribute_is_damage_not_an_encoding(
        hostile) -> None:
    """A committed UTF-8 tasklist whose first bytes are FE FF (a UTF-16 byte order mark)
    and no attribute that re-encodes it: git checks it out as committed, so those bytes
    damage the first line only. (They used to make aidp read the whole file as UTF-16:
    every task gone, every write refused.)"""
    other = {**TASK, "id": "t-0002", "description": "a second task"}
    hostile.write(".aidp/tasklist.jsonl", b"\xfe\xff" + TASKLIST + orjson.dumps(other) + b"\n")
    hostile.clone()
    listed = hostile.aidp("tasks", "list")
    assert listed.code == 0 and "a second task" in listed.out, listed
    assert "skipped 1 damaged line" in listed.err, listed
    added = hostile.aidp("tasks", "add", "still writable")
    assert added.code == 0, added
    repair = hostile.aidp("tasks", "repair", "--dry-run")
    assert "line 1" in repair.out, repair


def test_no_writer_writes_through_a_committed_aidp_link(hostile) -> None:
    """Every command that writes, with `.aidp -> ../other/.aidp` committed: the other
    project is left byte for byte (no line, no lock, no state, no transcript); a
    tasklist writer refuses with one line, best-effort state is skipped."""
    other = hostile.outside / "other" / ".aidp"
    other.mkdir(parents=True)
    (other / "tasklist.jsonl").write_bytes(TASKLIST + b"{torn\n")
    hostile.link(".aidp", other)
    hostile.write("README", "hi\n")
    hostile.clone()
    incoming = hostile.outside / "in.csv"
    incoming.write_text("title,status\nimported,pending\n")
    before = snapshot(other.parent)
    refusing = [("tasks", "add", BAIT), ("tasks", "done", "t-0001"),
                ("tasks", "claim", "t-0001", "--as", "me"), ("todo", "add", BAIT),
                ("tasks", "repair"), ("tasks", "compact"),
                ("tasks", "import", str(incoming), "--from", "csv"), ("init",)]
    for args in refusing:
        result = hostile.aidp(*args)
        assert result.code == 1 and len(error_lines(result)) == 1, (args, result)
        assert "committed to the repository" in result.err, (args, result)
    stop = '{"session_id": "s1", "hook_event_name": "Stop", "last_assistant_message": "x"}'
    for args, stdin in ((("hook", "claude", "SessionStart"), CLAUDE_START),
                        (("hook", "claude", "Stop"), stop),
                        (("run", "go", "--max-continuations", "0",
                          "--agent", agent_script(hostile)), None)):
        result = hostile.aidp(*args, stdin=stdin)
        assert "Traceback" not in result.err, (args, result)
    assert snapshot(other.parent) == before
    assert sorted(p.name for p in other.iterdir()) == ["tasklist.jsonl"]


def test_reads_through_a_committed_aidp_link_leave_the_other_project_alone(hostile) -> None:
    """A read builds the store's cache next to the tasklist (`.aidp/cache/`) once the
    tasklist is large: through `.aidp -> ../other/.aidp` that would write into the other
    project. Reads through a linked `.aidp` fold the file plainly and write nothing."""
    other = hostile.outside / "other" / ".aidp"
    other.mkdir(parents=True)
    big = b"".join(
        b'{"id":"task_1795000000_%08x","description":"task %d","status":"pending",'
        b'"priority":"medium","created_at":"2026-11-18T11:06:40.001002Z",'
        b'"updated_at":"2026-11-18T11:06:40.001002Z","tags":[]}\n' % (i, i)
        for i in range(600))  # well past the size from which reads use the store
    (other / "tasklist.jsonl").write_bytes(big)
    hostile.link(".aidp", other)
    hostile.write("README", "hi\n")
    hostile.clone()
    before = snapshot(other.parent)
    for _ in range(2):
        listed = hostile.aidp("tasks", "list", "--json")
        assert listed.code == 0, listed
        assert len(orjson.loads(listed.out)) == 600
    assert snapshot(other.parent) == before
    assert sorted(p.name for p in other.iterdir()) == ["tasklist.jsonl"]
