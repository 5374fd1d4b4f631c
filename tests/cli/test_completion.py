"""Shell completion, driven the way the shells drive it.

bash's script runs `aidp` with COMP_WORDS/COMP_CWORD and `_AIDP_COMPLETE=complete_bash`;
zsh's and fish's with `_TYPER_COMPLETE_ARGS` (the line so far) and complete_zsh /
complete_fish. Most tests set those variables and run aidp in process; one sources the
real bash script in a real bash. `--install-completion` writes only into the test's
own HOME (conftest)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def bash_complete(cli, monkeypatch):
    """complete("aidp tasks d") → the words bash would offer for the last word."""

    def complete(line: str) -> list[str]:
        words = line.split(" ")
        monkeypatch.setenv("_AIDP_COMPLETE", "complete_bash")
        monkeypatch.setenv("COMP_WORDS", line)
        monkeypatch.setenv("COMP_CWORD", str(len(words) - 1))
        try:
            result = cli()
        finally:
            for name in ("_AIDP_COMPLETE", "COMP_WORDS", "COMP_CWORD"):
                monkeypatch.delenv(name)
        assert result.code == 0 and result.err == "", result
        return result.out.split()

    return complete


@pytest.fixture
def backlog(cli):
    ids = {}
    for name, args in (("parser", ("Fix the parser", "-t", "core")),
                       ("docs", ("Write the docs", "-t", "docs")),
                       ("old", ("An old idea",))):
        ids[name] = cli("tasks", "add", *args, "--json").out
    ids = {name: json.loads(out)["id"] for name, out in ids.items()}
    cli("tasks", "done", ids["old"])
    return ids


def short(tid: str) -> str:
    return tid.rpartition("_")[2][:4]


def test_commands_and_subcommands(bash_complete) -> None:
    assert bash_complete("aidp ta") == ["tasks"]
    assert set(bash_complete("aidp ")) >= {"tasks", "todo", "init", "run", "sync", "prime"}
    assert sorted(bash_complete("aidp tasks re")) == ["ready", "release", "reopen", "repair"]
    assert bash_complete("aidp todo ti") == ["tick"]


def test_options_of_the_command_on_the_line(bash_complete) -> None:
    assert bash_complete("aidp tasks list --so") == ["--sort"]
    assert {"--status", "--since", "--session", "--sort"} == set(bash_complete("aidp tasks list --s"))
    assert "--install-completion" in bash_complete("aidp --")


def test_statuses_priorities_and_formats(bash_complete) -> None:
    assert bash_complete("aidp tasks list --status ") == [
        "pending", "in_progress", "done", "abandoned", "open", "all"]
    assert bash_complete("aidp tasks list -s in") == ["in_progress"]
    # Whatever the case typed (Typer's public `autocompletion=` matches case-sensitively:
    # one reason cli/completion.py gives its completions itself).
    assert bash_complete("aidp tasks list -s IN") == ["in_progress"]
    assert bash_complete("aidp tasks list a") == ["abandoned", "all"]  # the STATUS argument
    assert bash_complete("aidp tasks add x -p ") == ["high", "medium", "low"]
    assert bash_complete("aidp tasks list -f j") == ["json", "jsonl"]
    assert bash_complete("aidp tasks export -f t") == ["taskwarrior"]
    assert bash_complete("aidp tasks import x --from g") == ["github"]
    assert bash_complete("aidp setup ") == ["claude", "gemini", "codex"]
    assert bash_complete("aidp hook gemini A") == ["AfterTool", "AfterAgent"]
    assert "claude" in bash_complete("aidp run --agent ")


def test_task_ids_are_the_short_ids_of_the_tasks_the_command_acts_on(bash_complete,
                                                                      backlog) -> None:
    open_ones = sorted([short(backlog["parser"]), short(backlog["docs"])])
    assert sorted(bash_complete("aidp tasks done ")) == open_ones
    assert bash_complete("aidp tasks reopen ") == [short(backlog["old"])]
    assert len(bash_complete("aidp tasks show ")) == 3
    # Already named on the line: not offered again.
    assert bash_complete(f"aidp tasks done {short(backlog['parser'])} ") == [short(backlog["docs"])]
    # A prefix narrows; more of the id than the short form keeps the id completable.
    hex_part = backlog["docs"].rpartition("_")[2]
    assert short(backlog["docs"]) in bash_complete(f"aidp tasks start {hex_part[:2]}")
    assert bash_complete(f"aidp tasks start {hex_part[:6]}") == [hex_part]
    assert bash_complete(f"aidp tasks start {hex_part[:6].upper()}") == [hex_part]
    assert bash_complete("aidp tasks block x --on ") != []


def test_ids_go_with_their_descriptions_in_zsh_and_fish(cli, monkeypatch, project,
                                                        backlog) -> None:
    # A line another tool wrote: an escape sequence, a bidi override and rich markup.
    tasklist = project / ".aidp" / "tasklist.jsonl"
    record = json.loads(tasklist.read_text().splitlines()[0])
    record.update(id="task_1700000000_abcdef12", description="Shown \x1b[31m[/]\u202e safely")
    with tasklist.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    monkeypatch.setenv("_TYPER_COMPLETE_ARGS", "aidp tasks done ")
    monkeypatch.setenv("_AIDP_COMPLETE", "complete_zsh")
    zsh = cli()
    assert zsh.code == 0 and zsh.out.startswith("_arguments '*: :((")
    assert f'"{short(backlog["parser"])}":"Fix the parser"' in zsh.out
    assert "\x1b" not in zsh.out and "\u202e" not in zsh.out
    assert r'"abcd":"Shown \x1b[31m[/]\u202e safely"' in zsh.out  # shown as written
    monkeypatch.setenv("_AIDP_COMPLETE", "complete_fish")
    monkeypatch.setenv("_TYPER_COMPLETE_FISH_ACTION", "get-args")
    fish = cli()
    assert fish.code == 0
    assert f"{short(backlog['docs'])}\tWrite the docs" in fish.out.splitlines()
    monkeypatch.setenv("_TYPER_COMPLETE_FISH_ACTION", "is-args")
    assert cli().code == 0  # there is something to offer: fish shows it, not files


def test_tags_positions_and_sessions(cli, bash_complete, backlog) -> None:
    assert bash_complete("aidp tasks list -t ") == ["core", "docs"]
    cli("todo", "add", "Plan the work")
    cli("todo", "add", "1.last", "A check")
    cli("todo", "add", "Do the work")
    assert bash_complete("aidp todo tick ") == ["1", "1.1", "2"]
    cli("--session", "other", "todo", "add", "Elsewhere")
    assert "other" in bash_complete("aidp todo load ")


def test_a_damaged_tasklist_completes_quietly(cli, bash_complete, project) -> None:
    """A read a completion makes warns of nothing: a warning would land in the prompt."""
    cli("--session", "other", "todo", "add", "Elsewhere")
    with (project / ".aidp" / "tasklist.jsonl").open("ab") as tasklist:
        tasklist.write(b"{not json\n")
    assert "other" in bash_complete("aidp todo load ")  # (and err == "")
    assert bash_complete("aidp --session other todo tick ") == ["1"]


def test_no_project_and_a_bad_dir_complete_quietly(bash_complete, cli, tmp_path) -> None:
    assert bash_complete(f"aidp --dir {tmp_path / 'nowhere'} tasks done ") == []
    assert bash_complete("aidp tasks done ") == []  # nothing filed yet


def _script_aidp(tmp_path: Path) -> Path:
    """An `aidp` program on PATH running this checkout (the suite's PATH has none)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "aidp"
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m aidp "$@"\n')
    program.chmod(0o755)
    return folder


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_real_bash_script_completes(tmp_path, backlog) -> None:
    folder = _script_aidp(tmp_path)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    script = subprocess.run(["aidp", "--show-completion", "bash"], env=env, capture_output=True,
                            text=True, check=True).stdout
    probe = script + """
COMP_WORDS=(aidp tasks li); COMP_CWORD=2; _aidp_completion aidp; echo "${COMPREPLY[*]}"
COMP_WORDS=(aidp tasks list --status ""); COMP_CWORD=4; _aidp_completion aidp; echo "${COMPREPLY[*]}"
COMP_WORDS=(aidp tasks done ""); COMP_CWORD=3; _aidp_completion aidp; echo "${COMPREPLY[*]}"
"""
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe], env=env,
                         capture_output=True, text=True, timeout=60)
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and out.stderr == "", out
    assert lines[0] == "list"
    assert lines[1] == "pending in_progress done abandoned open all"
    assert sorted(lines[2].split()) == sorted([short(backlog["parser"]), short(backlog["docs"])])


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_script_for_the_shell(cli, shell) -> None:
    result = cli("--show-completion", shell)
    assert result.code == 0 and result.err == ""
    assert f"_AIDP_COMPLETE=complete_{shell}" in result.out


def test_an_unknown_or_undetectable_shell_is_a_clear_error(cli, monkeypatch) -> None:
    result = cli("--show-completion", "tcsh")
    assert result.code == 2
    assert result.err == "Error: Invalid shell 'tcsh' for --show-completion: use one of bash, zsh, fish\n"
    import shellingham

    def undetectable():
        raise shellingham.ShellDetectionFailure()

    monkeypatch.setattr(shellingham, "detect_shell", undetectable)
    monkeypatch.setenv("SHELL", "/usr/bin/zsh")
    assert "_AIDP_COMPLETE=complete_zsh" in cli("--show-completion").out
    monkeypatch.delenv("SHELL")
    result = cli("--install-completion")
    assert result.code == 2
    assert result.err.startswith("Error: Cannot tell which shell you use: name it, e.g. "
                                 "'--install-completion bash'")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("shell", "script", "rc"), [
    ("bash", ".bash_completions/aidp.sh", ".bashrc"),
    ("zsh", ".zfunc/_aidp", ".zshrc"),
    ("fish", ".config/fish/completions/aidp.fish", None),
])
def test_install_completion_writes_only_in_home_and_twice_changes_nothing(
        cli, project, tmp_path, shell, script, rc) -> None:
    home = Path(os.environ["HOME"])
    (home / ".bashrc").write_text("alias ll='ls -l'")  # the user's own lines stay
    outside = {p: _files(p) for p in tmp_path.iterdir() if p != home}
    result = cli("--install-completion", shell)
    assert result.code == 0, result
    assert result.out.startswith(f"{shell} completion installed in {home / script}")
    files = _files(home)
    assert f"_AIDP_COMPLETE=complete_{shell}" in files[script].decode()
    expected = {script, ".bashrc"} | ({rc} if rc else set())
    assert set(files) == expected
    if shell == "bash":
        assert files[".bashrc"].decode() == f"alias ll='ls -l'\nsource '{home / script}'\n"
    assert cli("--install-completion", shell).code == 0
    assert _files(home) == files
    assert {p: _files(p) for p in tmp_path.iterdir() if p != home} == outside
    assert not (project / ".aidp").exists()


def test_a_big_backlog_offers_the_best_ids_first_and_typing_reaches_the_rest(
        cli, bash_complete, monkeypatch) -> None:
    from aidp.cli import completion

    made = {p: json.loads(cli("tasks", "add", f"A {p} one", "-p", p, "--json").out)["id"]
            for p in ("low", "high", "medium")}
    monkeypatch.setattr(completion, "MAX_IDS", 2)
    assert sorted(bash_complete("aidp tasks done ")) == sorted([short(made["high"]),
                                                                 short(made["medium"])])
    low = made["low"].rpartition("_")[2]
    assert bash_complete(f"aidp tasks done {low[:4]}") == [short(made["low"])]


def test_install_completion_where_it_cannot_write_is_one_error_line(cli, monkeypatch,
                                                                    tmp_path) -> None:
    home = tmp_path / "not-a-folder"
    home.write_text("")
    monkeypatch.setenv("HOME", str(home))
    result = cli("--install-completion", "zsh")
    assert result.code == 1 and result.out == ""
    assert result.err == (f"Error: Cannot install the zsh completion: cannot write "
                          f"{home}/.zfunc/_aidp: Not a directory; 'aidp --show-completion zsh'"
                          " prints the script to place yourself\n")


def test_install_completion_keeps_a_bashrc_that_is_not_utf8(cli) -> None:
    bashrc = Path(os.environ["HOME"]) / ".bashrc"
    bashrc.write_bytes(b"# caf\xe9 in Latin-1\n")
    assert cli("--install-completion", "bash").code == 0
    assert bashrc.read_bytes().startswith(b"# caf\xe9 in Latin-1\nsource '")


@pytest.mark.parametrize("env", [{"_AIDP_COMPLETE": "complete_bash"},
                                 {"_AIDP_COMPLETE": "complete_bash", "COMP_WORDS": "aidp t",
                                  "COMP_CWORD": "one"}])
def test_a_completion_request_without_the_shells_variables_is_one_error_line(
        cli, monkeypatch, env) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = cli()
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("Error: Incomplete completion request")
    assert result.err.count("\n") == 1
