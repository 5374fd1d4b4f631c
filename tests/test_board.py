"""`aidp board` as a client sees it over plain HTTP: the start-up line, the guard (token,
Host, Origin, JSON writes), the live stream, edits through the CLI's write path, a stale
view refused, and every bad input (a port in use, a PATH that is no project, a tasklist
damaged while it runs). The page itself, in a real browser: tests/browser/."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.board_helpers import board_command, running


def test_the_start_up_line_serves_the_page_with_its_guard_headers(cli, project) -> None:
    cli("tasks", "add", "First", "-q")
    with running() as board:
        assert board.url == f"http://127.0.0.1:{board.port}/t/{board.token}/"
        status, headers, body = board.request("GET", "")
        assert status == 200 and b"<title>aidp board</title>" in body
        assert "default-src 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        assert "set-cookie" not in headers  # a cookie would go to every port of 127.0.0.1
        for name in ("board.js", "board.css"):
            status, headers, body = board.request("GET", f"static/{name}")
            assert status == 200 and body, name
        # The token in the query: the page again, at the URL that carries it.
        status, headers, _ = board.request("GET", f"/?token={board.token}")
        assert status == 303 and headers["location"] == board.base
        # A cookie carries no token the board takes.
        for name in ("aidp-board", f"aidp-board-{board.port}", "token"):
            status, _, _ = board.request("GET", "/static/board.js",
                                         headers={"Cookie": f"{name}={board.token}"})
            assert status == 403, name


def test_every_request_without_the_token_is_refused(cli, project) -> None:
    (project / ".aidp").mkdir()
    with running() as board:
        for path in ("/", "/static/board.js", "/events", "/api/task?repo=x&id=y",
                     "/t/wrong/", "/t/wrong/static/board.js", f"/?token={board.token[:-1]}"):
            status, _, body = board.request("GET", path)
            assert status == 403 and b"no valid token" in body, path
        status, _, _ = board.request("POST", "/api/add", {"repo": str(project),
                                                          "description": "x"})
        assert status == 403
    assert cli("tasks", "list", "--json").out.strip() == "[]"


def test_a_foreign_host_or_origin_is_refused(cli, project) -> None:
    (project / ".aidp").mkdir()
    with running() as board:
        # DNS rebinding: the attacker's name resolves to 127.0.0.1, the browser sends it.
        for host in ("evil.example", f"evil.example:{board.port}", "127.0.0.1:1",
                     f"127.0.0.2:{board.port}"):
            status, _, body = board.request("GET", "", headers={"Host": host})
            assert status == 421 and b"Host" in body, host
        assert board.request("GET", "", headers={"Host": f"localhost:{board.port}"})[0] == 200
        # CSRF: another site's page posting with the token it somehow has.
        for origin in ("http://evil.example", "null", f"https://127.0.0.1:{board.port}",
                       f"http://127.0.0.1:{board.port + 1}"):
            status, _, body = board.request(
                "POST", "api/add", {"repo": str(project), "description": "Planted"},
                headers={"Origin": origin})
            assert status == 403 and b"another site" in body, origin
        status, _, _ = board.request("POST", "api/add", {"repo": str(project), "description": "x"},
                                     headers={"Sec-Fetch-Site": "cross-site"})
        assert status == 403
        # Another site's page fetching or embedding the board (it has the token): refused;
        # the board opened in a window of its own (from the file the browser is opened
        # on, a link followed): the page.
        for mode, dest, wanted in (("no-cors", "image", 403), ("cors", "empty", 403),
                                   ("navigate", "iframe", 403), ("navigate", "document", 200)):
            status, _, _ = board.request("GET", "", headers={
                "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest})
            assert status == wanted, (mode, dest)
        status, _, _ = board.request("POST", "api/add", {"repo": str(project), "description": "x"},
                                     headers={"Sec-Fetch-Site": "cross-site",
                                              "Sec-Fetch-Mode": "navigate",
                                              "Sec-Fetch-Dest": "document"})
        assert status == 403
        # A form post (no preflight) is no JSON: refused.
        status, _, _ = board.request("POST", "api/add", raw=b"description=x",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 415
        status, _, _ = board.request("PUT", "api/add", {"repo": str(project)})
        assert status == 405
    assert cli("tasks", "list", "--json").out.strip() == "[]"


def test_the_stream_shows_a_cli_write_and_edits_go_through_the_cli_write_path(
        cli, project) -> None:
    tid = cli("tasks", "add", "Ship it", "-q").out.strip()
    repo = str(project.resolve())
    with running() as board, board.events() as events:
        first = events.whole()
        (shown,) = first["projects"]
        assert shown["meta"]["repo"] == repo
        assert [c["description"] for c in shown["cards"]] == ["Ship it"]
        other = cli("tasks", "add", "Filed from the CLI", "-q").out.strip()
        patch = events.until(lambda p: any(c["description"] == "Filed from the CLI"
                                           for c in p["upsert"]))
        assert patch["meta"]["counts"]["pending"] == 2
        full = cli("tasks", "show", tid, "--json")
        task_id = json.loads(full.out)["id"]
        status, said = board.post("move", {"repo": repo, "id": task_id, "status": "in_progress",
                                           "seen": {"status": "pending"}})
        assert status == 200, said
        assert json.loads(cli("tasks", "show", tid, "--json").out)["status"] == "in_progress"
        events.until(lambda p: any(c["id"] == task_id and c["status"] == "in_progress"
                                   for c in p["upsert"]))
        status, said = board.post("edit", {"repo": repo, "id": other, "priority": "high",
                                           "seen": {"priority": "medium"}})
        assert status == 200, said
        status, said = board.post("note", {"repo": repo, "id": other, "text": "From the board"})
        assert status == 200, said
        status, said = board.post("add", {"repo": repo, "description": "Added on the board",
                                          "priority": "low", "tags": "ui, web"})
        assert status == 200, said
        status, said = board.post("edit", {"repo": repo, "id": other, "body": "# Steps\n1. a"})
        assert status == 200
    shown = json.loads(cli("tasks", "show", other, "--json").out)
    assert shown["priority"] == "high" and shown["body"] == "# Steps\n1. a"
    assert [n["text"] for n in shown["notes"]] == ["From the board"]
    added = json.loads(cli("tasks", "list", "--grep", "Added on the board", "--json").out)
    assert added[0]["priority"] == "low" and added[0]["tags"] == ["ui", "web"]


def test_a_change_from_a_stale_view_is_refused_and_writes_nothing(cli, project) -> None:
    tid = cli("tasks", "add", "Contested", "-q").out.strip()
    full = json.loads(cli("tasks", "show", tid, "--json").out)["id"]
    repo = str(project.resolve())
    cli("tasks", "edit", tid, "-p", "high")  # changed since the page showed medium
    cli("tasks", "edit", tid, "--body", "An agent's body")
    log = project / ".aidp" / "tasklist.jsonl"
    before = log.read_bytes()
    with running() as board:
        status, said = board.post("edit", {"repo": repo, "id": full, "priority": "low",
                                           "seen": {"priority": "medium"}})
        assert status == 409
        assert "priority" in said["error"] and "'medium' then, 'high' now" in said["error"]
        status, said = board.post("edit", {"repo": repo, "id": full, "body": "Mine",
                                           "seen": {"body": None}})
        assert status == 409 and "body" in said["error"]
        cli("tasks", "done", tid)
        status, said = board.post("move", {"repo": repo, "id": full, "status": "abandoned",
                                           "reason": "Not needed", "seen": {"status": "pending"}})
        assert status == 409 and "status" in said["error"]
        after_done = log.read_bytes()
        # A field the view did not change is not compared: the body is kept.
        status, said = board.post("edit", {"repo": repo, "id": full, "priority": "low",
                                           "seen": {"priority": "high"}})
        assert status == 200, said
    assert after_done.startswith(before)
    shown = json.loads(cli("tasks", "show", tid, "--json").out)
    assert shown["priority"] == "low" and shown["body"] == "An agent's body"
    assert shown["status"] == "done"


def test_bad_requests_are_one_line_and_write_nothing(cli, project) -> None:
    tid = cli("tasks", "add", "Something", "-q").out.strip()
    repo = str(project.resolve())
    log = project / ".aidp" / "tasklist.jsonl"
    before = log.read_bytes()
    with running() as board:
        cases = [
            ("move", {"repo": repo, "id": tid, "status": "later"}, 400, "Invalid status"),
            ("move", {"repo": "/elsewhere", "id": tid, "status": "done"}, 400, "Invalid repo"),
            ("move", {"repo": repo, "id": "ffffffff", "status": "done"}, 404, "not found"),
            ("add", {"repo": repo, "description": ""}, 400, "description"),
            ("edit", {"repo": repo, "id": tid, "priority": "urgent"}, 400, "priority"),
            ("edit", {"repo": repo, "id": tid, "priority": "low", "seen": {"tags": "x"}}, 400,
             "field"),
            ("nothing", {"repo": repo}, 404, "No such action"),
        ]
        for action, body, code, words in cases:
            status, said = board.post(action, body)
            assert status == code and words in said["error"], (action, body, said)
            assert "\n" not in said["error"] and "Traceback" not in said["error"]
        status, _, data = board.request("POST", "api/add", raw=b"{not json",
                                        headers={"Content-Type": "application/json"})
        assert status == 400 and b"not JSON" in data
        status, _, data = board.request("GET", f"api/task?repo={repo}&id=ffffffff")
        assert status == 404
    assert log.read_bytes() == before


def test_the_detail_holds_body_notes_links_and_history(cli, project) -> None:
    a = cli("tasks", "add", "Blocker", "-q").out.strip()
    b = cli("tasks", "add", "Waiting", "-q", "--blocked-by", a, "--body", "Details here").out.strip()
    cli("tasks", "note", b, "A note")
    cli("tasks", "edit", b, "-p", "high")
    repo = str(project.resolve())
    full = json.loads(cli("tasks", "show", b, "--json").out)["id"]
    with running() as board:
        status, _, data = board.request("GET", f"api/task?repo={repo}&id={full}")
    assert status == 200
    detail = json.loads(data)
    assert detail["body"] == "Details here"
    assert [n["text"] for n in detail["notes"]] == ["A note"]
    assert len(detail["blocked_by"]) == 1
    assert detail["related"][detail["blocked_by"][0]]["description"] == "Blocker"
    said = [line for moment in detail["history"] for line in moment["what"]]
    assert said[0] == "created: Waiting" and "priority: medium → high" in said


def test_a_port_in_use_is_one_line_and_exit_2(project, cli) -> None:
    cli("tasks", "add", "x")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        proc = subprocess.run([sys.executable, "-m", "aidp", "board", "--no-open", "--port",
                               str(port)], capture_output=True, text=True, timeout=60)
    finally:
        taken.close()
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert f"Port {port} on 127.0.0.1 is in use" in proc.stderr and "--port 0" in proc.stderr
    assert proc.stdout == ""


def test_a_path_that_is_no_project_is_one_line_exit_2_and_creates_nothing(
        tmp_path, project, cli) -> None:
    cli("tasks", "add", "x")
    plain = tmp_path / "plain"
    plain.mkdir()
    for args, words in ((str(plain), "no .aidp/ folder"), (str(tmp_path / "missing"),
                                                          "does not exist")):
        proc = subprocess.run([*board_command(str(project), args)], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
        assert proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "plain", "project"]
    assert list(plain.iterdir()) == []
    env = {**os.environ, "AIDP_DIR": str(plain)}
    proc = subprocess.run(board_command(), capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and "aidp init" in proc.stderr
    assert list(plain.iterdir()) == []


def test_a_tasklist_damaged_while_it_runs_shows_what_the_fold_shows(cli, project) -> None:
    cli("tasks", "add", "Survives", "-q")
    with running() as board, board.events() as events:
        events.whole()
        with open(project / ".aidp" / "tasklist.jsonl", "ab") as handle:
            handle.write(b"<<<<<<< HEAD\n{\"id\": \"task_1_zz\", \"description\": 3}\n")
        patch = events.until(lambda p: p["meta"]["damaged"] > 0)
        assert patch["meta"]["damaged"] == 2 and patch["meta"]["error"] is None
        cli("tasks", "add", "Filed after the damage", "-q")
        patch = events.until(lambda p: p["upsert"])
        assert [c["description"] for c in patch["upsert"]] == ["Filed after the damage"]
        status, _, _page = board.request("GET", "")
        assert status == 200
        # A tasklist it cannot read at all: the cards stay, the reason is said.
        log = project / ".aidp" / "tasklist.jsonl"
        kept = log.read_bytes()
        log.unlink()
        os.mkfifo(log)
        patch = events.until(lambda p: p["meta"]["error"] is not None)
        assert "not a regular file" in patch["meta"]["error"] and patch["remove"] == []
        log.unlink()
        log.write_bytes(kept)
        patch = events.until(lambda p: p["meta"]["error"] is None)


def test_host_warns_and_sigint_exits_0(cli, project) -> None:
    cli("tasks", "add", "x")
    proc = subprocess.Popen([*board_command("--host", "127.0.0.1")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert json.loads(line)["url"].startswith("http://127.0.0.1:")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    err = proc.stderr.read()
    assert err.startswith("Warning: --host 127.0.0.1 serves the board beyond 127.0.0.1")
    assert "Traceback" not in err


def test_two_projects_in_one_board(tmp_path, cli, project) -> None:
    cli("tasks", "add", "Here", "-q")
    other = tmp_path / "other"
    other.mkdir()
    assert cli("--dir", str(other), "init").code == 0
    cli("--dir", str(other), "tasks", "add", "There", "-q")
    with running(str(project), str(other / ".aidp")) as board, board.events() as events:
        first = events.whole()
    repos = [(p["meta"]["repo"], [c["description"] for c in p["cards"]])
             for p in first["projects"]]
    assert repos == [(str(project.resolve()), ["Here"]), (str(other.resolve()), ["There"])]


def test_a_write_in_another_worktree_shows(cli, project, tmp_path) -> None:
    # One live queue for every worktree: the board watches each worktree's tasklist,
    # and one added after it started.
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    assert cli("init").code == 0
    cli("tasks", "add", "On main", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "start")
    with running() as board, board.events() as events:
        events.whole()
        other = tmp_path / "agent-wt"
        git("worktree", "add", "-q", "-b", "agent", str(other))
        proc = subprocess.run([sys.executable, "-m", "aidp", "tasks", "add", "From the worktree",
                               "-q"], cwd=other, env={**os.environ, "AIDP_DIR": str(other)},
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        events.until(lambda p: any(c["description"] == "From the worktree" for c in p["upsert"]))


def test_a_new_page_gets_the_cards_its_columns_show_first_then_the_rest(project) -> None:
    from aidp.core.model import new_task
    from aidp.tasklist.log import TaskLog

    records = [new_task(f"Task {n}", priority="high" if n % 50 == 0 else "low")
               for n in range(250)]
    TaskLog(project).append(records)
    with running() as board, board.events() as events:
        _kind, first = events.next("board")
        _kind, rest = events.next("rest")
    shown = [c["description"] for c in first["projects"][0]["cards"]]
    later = [c["description"] for c in rest["projects"][0]["cards"]]
    assert len(shown) == 200 and len(later) == 50 and not set(shown) & set(later)
    # The column's first 200: the high ones, then the oldest of the rest.
    assert {f"Task {n}" for n in range(0, 250, 50)} <= set(shown)
    assert "Task 1" in shown and "Task 249" in later


def test_the_browser_is_opened_without_the_token_on_its_command_line(cli, project,
                                                                     tmp_path) -> None:
    """Every user of the machine can read a process's arguments (`ps`): the browser is
    started on a file only this user can read, which sends it on to the URL; the file
    goes when the board stops."""
    from urllib.parse import unquote, urlsplit

    cli("tasks", "add", "x", "-q")
    record = tmp_path / "browser.json"
    browser = tmp_path / "browser"
    browser.write_text(
        f"#!{sys.executable}\nimport json, os, sys\nfrom urllib.parse import unquote, urlsplit\n"
        "path = unquote(urlsplit(sys.argv[-1]).path) if sys.argv[-1].startswith('file:') else ''\n"
        "seen = {'argv': sys.argv, 'mode': None, 'folder': None, 'text': ''}\n"
        "if path:\n"
        "    seen.update(mode=os.stat(path).st_mode & 0o777, text=open(path).read(),\n"
        "                folder=os.stat(os.path.dirname(path)).st_mode & 0o777)\n"
        f"json.dump(seen, open({str(record)!r}, 'w'))\n")
    browser.chmod(0o755)
    command = [arg for arg in board_command() if arg != "--no-open"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "BROWSER": str(browser)})
    try:
        url = json.loads(proc.stdout.readline())["url"]
        token = url.split("/")[4]
        for _ in range(600):
            if record.exists() and record.stat().st_size:
                break
            time.sleep(0.05)
        seen = json.loads(record.read_text())
        assert token not in " ".join(seen["argv"]), seen["argv"]
        assert seen["argv"][-1].startswith("file:///")
        assert (seen["mode"], seen["folder"]) == (0o600, 0o700)
        assert f'content="0;url={url}"' in seen["text"]
        opened = Path(unquote(urlsplit(seen["argv"][-1]).path))
        assert opened.is_file()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, proc.stderr.read()
    assert not opened.exists() and not opened.parent.exists()
