"""Leases (docs/guide.md, "Leases"): a claim holds for a while, its holder renews it at
most once per half lease, a stale one is marked everywhere, offered by `ready` after
the fresh tasks and taken over by `claim`, never a live one; the holder that lost a task
is told; a stamp from the future never keeps a task held. From the command line, like a
user: exit codes and messages together, the file unchanged on refusal.

Time passing is written into the file, not slept through: `expire` appends the claim
as its holder's last renewal would look that long ago (its lease run out, or half of it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from aidp.backlog import queue
from aidp.core.model import format_ts, now_micros
from aidp.tasklist.log import TaskLog

SECOND = 1_000_000


def add(cli, text: str, *args: str) -> str:
    result = cli("tasks", "add", text, "-q", *args)
    assert result.code == 0, result
    return result.out.strip()


def sid(tid: str) -> str:
    from aidp.backlog.tasks import short_ids

    return short_ids(TaskLog(Path(os.environ["AIDP_DIR"])).read(), [tid])[tid]


def tasklist(project: Path) -> bytes:
    return (project / ".aidp" / "tasklist.jsonl").read_bytes()


def records(project: Path) -> list[dict]:
    return [orjson.loads(line) for line in tasklist(project).splitlines() if line.strip()]


def claims_of(project: Path, tid: str) -> list[dict]:
    return [r for r in records(project) if r.get("type") == "claim" and r.get("task") == tid]


def expire(project: Path, tid: str, who: str, *, left: float) -> None:
    """The last claim of `who` on `tid` appended again as if its lease had `left` seconds
    to run (negative: ran out that long ago): what the file holds once time passed."""
    claim = [c for c in claims_of(project, tid) if c["assignee"] == who][-1]
    aged = {**claim, "lease_until": format_ts(now_micros() + int(left * SECOND))}
    aged["updated_at"] = format_ts(now_micros())
    TaskLog(project).append([aged])


def claim(cli, tid: str | None, who: str, *more: str):
    return cli("tasks", "claim", *([tid] if tid else []), "--as", who, *more)


# --- the lease's length: bad input --------------------------------------------------------


@pytest.mark.parametrize("text, micros", [
    ("90s", 90 * SECOND), ("20m", 1200 * SECOND), ("2h", 7200 * SECOND),
    ("1h30m", 5400 * SECOND), ("3s", 3 * SECOND), ("7d", 7 * 86400 * SECOND),
    (" 45M ", 2700 * SECOND),
])
def test_lease_durations(text: str, micros: int) -> None:
    assert queue.parse_lease(text) == micros


@pytest.mark.parametrize("text, why", [
    ("0s", "a lease of zero never holds"), ("0m", "a lease of zero never holds"),
    ("-5m", "a lease cannot be negative"), ("abc", "not a duration"), ("20", "not a duration"),
    ("1.5h", "not a duration"), ("", "not a duration"), ("8d", "longer than 7d"),
    ("20 m", "not a duration"),
])
def test_bad_lease_is_refused_with_the_accepted_forms_and_nothing_written(
        cli, project: Path, text: str, why: str) -> None:
    a = add(cli, "a")
    before = tasklist(project)
    for args in (("tasks", "claim", a, "--lease", text), ("tasks", "claim", "--lease", text)):
        result = cli(*args)
        assert result.code == 2, result
        assert result.out == ""
        assert result.err == (f"Error: Invalid --lease {text!r}: {why}; use a duration such "
                              "as 90s, 20m, 2h or 1h30m (whole numbers with s, m, h or d, "
                              "from 1s to 7d)\n")
        assert tasklist(project) == before


def test_the_default_lease_comes_from_the_config(cli, project: Path) -> None:
    a, b = add(cli, "a"), add(cli, "b")
    assert claim(cli, a, "ann").code == 0
    assert claims_of(project, a)[-1]["lease"] == 30 * 60  # aidp's default
    (project / ".aidp" / "config.toml").write_text('lease = "45m"\n')
    shown = json.loads(claim(cli, b, "ann", "--json").out)
    assert claims_of(project, b)[-1]["lease"] == 45 * 60  # no `aidp trust` needed
    until = queue.judge(claims_of(project, b)[-1]).until
    assert shown["lease_until"] == format_ts(until)
    (project / ".aidp" / "config.toml").write_text('lease = "soon"\n')
    c = add(cli, "c")
    before = tasklist(project)
    result = claim(cli, c, "ann")
    assert result.code == 2
    assert result.err.startswith("Error: Invalid lease in .aidp/config.toml 'soon': not a "
                                 "duration; use a duration such as 90s")
    assert tasklist(project) == before


# --- holding, renewing ----------------------------------------------------------------------


def test_a_claim_records_its_lease_outside_the_task_record(cli, project: Path) -> None:
    a = add(cli, "a")
    result = claim(cli, a, "ann", "--lease", "20m")
    assert result.code == 0 and result.err == ""
    assert result.out == f"✓ Claimed: [{sid(a)}] a (as ann, lease runs 20m more)\n"
    record = claims_of(project, a)[-1]
    assert record["lease"] == 1200
    lease = queue.judge(record)
    assert lease.length == 1200 * SECOND and not lease.stale
    # Task records carry only the Ruby original's keys: lease data lives in claim records.
    known = {"id", "description", "status", "priority", "created_at", "updated_at", "session",
             "discovered_during", "started_at", "completed_at", "abandoned_at",
             "abandoned_reason", "tags"}
    assert all(set(r) <= known for r in records(project) if "type" not in r)
    shown = json.loads(cli("tasks", "show", a, "--json").out)
    assert shown["assignee"] == "ann" and "stale" not in shown
    assert shown["lease_until"] == record["lease_until"]


def test_the_holder_renews_at_most_once_per_half_lease(cli, project: Path) -> None:
    a = add(cli, "a")
    assert claim(cli, a, "ann", "--lease", "1h").code == 0
    lines = len(tasklist(project).splitlines())
    for _ in range(3):  # early: nothing to renew, nothing written
        result = claim(cli, a, "ann")
        assert result.code == 0
        assert result.out.startswith(f"Already claimed by you, nothing changed: [{sid(a)}] a "
                                     "(lease runs 1h more; renewed once half of it has run)")
    assert len(tasklist(project).splitlines()) == lines
    expire(project, a, "ann", left=29 * 60)  # more than half of it ran
    lines += 1
    result = claim(cli, a, "ann")
    assert result.out == f"✓ Renewed your claim: [{sid(a)}] a (lease runs 1h more)\n"
    assert len(tasklist(project).splitlines()) == lines + 1  # one line: the claim, renewed
    renewed = claims_of(project, a)[-1]
    first = claims_of(project, a)[0]
    assert renewed["claimed_at"] == first["claimed_at"]  # its place as the first claim
    assert claim(cli, a, "ann").out.startswith("Already claimed by you")
    assert len(tasklist(project).splitlines()) == lines + 1
    # Another length asked for is written at once.
    assert claim(cli, a, "ann", "--lease", "2h").out.startswith("✓ Renewed your claim")
    assert claims_of(project, a)[-1]["lease"] == 7200


# --- stale claims: marked, offered, taken over --------------------------------------------


def test_a_stale_claim_is_marked_in_list_show_prime_and_json(cli, project: Path) -> None:
    a = add(cli, "Fix the login bug")
    assert claim(cli, a, "agent-7", "--lease", "10m").code == 0
    expire(project, a, "agent-7", left=-300)
    listing = cli("tasks", "list").out
    assert f"[{sid(a)}] Fix the login bug (today) @agent-7 · stale: lease ran out 5m ago" in listing
    shown = cli("tasks", "show", a).out
    assert "Assignee agent-7" in shown
    assert "Lease stale: lease ran out 5m ago ('aidp tasks claim' takes it over)" in shown
    data = json.loads(cli("tasks", "show", a, "--json").out)
    assert data["stale"] is True and data["assignee"] == "agent-7"
    assert json.loads(cli("tasks", "list", "--json").out)[0]["stale"] is True
    prime = cli("prime").out
    assert "Fix the login bug (claimed by agent-7, stale: lease ran out 5m ago)" in prime
    assert "1 of them stale" in prime
    primed = json.loads(cli("prime", "--json").out)
    assert primed["in_progress"][0]["stale"] is True
    assert primed["ready"][0]["stale"] is True and primed["ready_count"] == 1


def test_ready_offers_stale_tasks_after_fresh_ones(cli, project: Path) -> None:
    old = add(cli, "held by a dead agent", "-p", "high")
    live = add(cli, "held by a live one", "-p", "high")
    fresh = add(cli, "fresh", "-p", "low")
    assert claim(cli, old, "dead", "--lease", "5m").code == 0
    assert claim(cli, live, "alive", "--lease", "5m").code == 0
    expire(project, old, "dead", left=-1)
    result = cli("tasks", "ready")
    lines = result.out.splitlines()
    assert lines[0] == "READY (2)"
    assert lines[1].startswith(f"  1. ▼ [{sid(fresh)}] fresh")  # fresh first, low or not
    assert lines[2].startswith(f"  2. ▲ [{sid(old)}] held by a dead agent (today) stale: "
                               "@dead, lease ran out 1s ago; a claim takes it over")
    assert [t["id"] for t in json.loads(cli("tasks", "ready", "--json").out)] == [fresh, old]
    # claim without an id: the fresh task first, then the stale one, never the live one.
    assert json.loads(claim(cli, None, "me", "--json").out)["id"] == fresh
    taken = claim(cli, None, "me")
    assert taken.code == 0
    assert taken.out == (f"✓ Took over: [{sid(old)}] held by a dead agent (as me, lease runs "
                         "30m more) from dead, whose lease ran out 1s ago\n")
    nothing = claim(cli, None, "me")
    assert nothing.code == 1
    assert nothing.err == ("Error: Nothing ready to claim (3 in progress); see 'aidp tasks "
                           "blocked'\n")


def test_a_takeover_is_recorded_and_a_live_lease_is_never_taken(cli, project: Path) -> None:
    a = add(cli, "a")
    assert claim(cli, a, "ann", "--lease", "10m").code == 0
    before = tasklist(project)
    refused = claim(cli, a, "bob")
    assert refused.code == 1 and refused.out == ""
    assert refused.err.startswith(f"Error: Cannot claim task {sid(a)}: it is claimed by ann "
                                  "since ")
    assert refused.err.endswith("(lease runs 10m more)\n")
    assert tasklist(project) == before
    expire(project, a, "ann", left=-120)
    taken = claim(cli, a, "bob", "--json")
    assert taken.code == 0
    assert json.loads(taken.out)["assignee"] == "bob"
    ann, bob = claims_of(project, a)[-2:]
    assert ann["assignee"] == "ann" and ann["taken_over_by"] == "bob" and ann["released_at"]
    assert bob["assignee"] == "bob" and bob["took_over_from"] == "ann"
    shown = cli("tasks", "show", a).out
    assert "took it over from ann, whose lease had run out" in shown
    # And now bob's lease is the live one: ann cannot take it back.
    back = claim(cli, a, "ann")
    assert back.code == 1 and "it is claimed by bob" in back.err


def test_the_holder_that_lost_a_task_is_told_and_its_done_still_closes_it(
        cli, project: Path, monkeypatch) -> None:
    a, other = add(cli, "Refactor the parser"), add(cli, "other")
    assert claim(cli, a, "ann", "--lease", "10m").code == 0
    expire(project, a, "ann", left=-60)
    assert claim(cli, a, "bob").code == 0
    monkeypatch.setenv("AIDP_ACTOR", "ann")  # ann's next commands on that task
    told = (f"Note: You no longer hold task {sid(a)}: bob took it over when your lease ran "
            f"out (bob holds it now); your 'aidp tasks done {sid(a)}' still closes it\n")
    for args in (("tasks", "show", a), ("tasks", "note", a, "halfway"),
                 ("tasks", "edit", a, "-p", "high")):
        result = cli(*args)
        assert result.code == 0 and result.err == told, (args, result)
    assert cli("tasks", "show", other).err == ""  # a task ann never held: nothing said
    monkeypatch.setenv("AIDP_ACTOR", "bob")
    assert cli("tasks", "show", a).err == ""  # the holder is not told anything
    monkeypatch.setenv("AIDP_ACTOR", "ann")
    done = cli("tasks", "done", a)
    assert done.code == 0 and done.err == told
    assert json.loads(cli("tasks", "show", a, "--json").out)["status"] == "done"


# --- clocks -----------------------------------------------------------------------------------


def test_a_stamp_from_the_future_never_keeps_a_task_held(cli, project: Path) -> None:
    far, near = add(cli, "stamped in year 9999"), add(cli, "stamped a minute ahead")
    log = TaskLog(project)
    now = now_micros()
    for tid, until in ((far, "9999-12-31T00:00:00.000000Z"),
                       (near, format_ts(now + 60 * SECOND + 600 * SECOND))):
        assert claim(cli, tid, "skewed", "--lease", "10m").code == 0
        record = claims_of(project, tid)[-1]
        log.append([{**record, "lease_until": until, "updated_at": format_ts(now_micros())}])
    # 9999: more than one lease ahead of this clock, not believed: stale, and said so.
    shown = cli("tasks", "show", far).out
    assert "Lease stale: lease stamped " in shown
    assert "ahead of this machine's clock, taken as run out" in shown
    assert json.loads(cli("tasks", "show", far, "--json").out)["stale"] is True
    # A minute ahead (a clock a little fast): believed, and bounded by its own stamps.
    assert "stale" not in json.loads(cli("tasks", "show", near, "--json").out)
    lease = queue.judge(claims_of(project, near)[-1])
    assert not lease.stale and lease.until - lease.now <= 11 * 60 * SECOND
    assert queue.judge(claims_of(project, near)[-1], now + 11 * 60 * SECOND).stale
    taken = claim(cli, far, "me")
    assert taken.code == 0
    assert taken.out.startswith(f"✓ Took over: [{sid(far)}] stamped in year 9999 (as me, lease "
                                "runs 30m more) from skewed, whose lease stamped ")
    assert claim(cli, near, "me").code == 1


def test_a_claim_made_before_leases_has_the_default_lease(cli, project: Path) -> None:
    a = add(cli, "claimed by an older aidp")
    long_ago = format_ts(now_micros() - 2 * 3600 * SECOND)
    from aidp.backlog import tasks

    log = TaskLog(project)
    tasks.set_status(log, [a], "in_progress")
    log.append([{"type": "claim", "id": f"claim:{a}:old", "task": a, "assignee": "old",
                 "claimed_at": long_ago, "updated_at": long_ago}])
    assert json.loads(cli("tasks", "show", a, "--json").out)["stale"] is True
    assert "ran out 1h 30m ago" in cli("tasks", "show", a).out
    assert claim(cli, a, "new").code == 0


# --- a takeover race, with real processes ---------------------------------------------------


def test_racing_takeovers_of_one_stale_task_hand_it_to_exactly_one(cli, project: Path) -> None:
    a = add(cli, "one stale task")
    assert claim(cli, a, "gone", "--lease", "1m").code == 0
    expire(project, a, "gone", left=-10)
    env = {**os.environ, "AIDP_DIR": str(project)}
    procs = [subprocess.Popen([sys.executable, "-m", "aidp", "tasks", "claim", a, "--as",
                               f"r{n}", "--json"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(8)]
    outcomes = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    won = [json.loads(out)["assignee"] for code, out, _err in outcomes if code == 0]
    assert len(won) == 1, outcomes
    winner = won[0]
    for code, out, err in outcomes:
        if code != 0:
            assert (code, out) == (1, "")
            assert err.startswith(f"Error: Cannot claim task {sid(a)}: it is claimed by "
                                  f"{winner} since "), err
    released = [c for c in claims_of(project, a) if c["assignee"] == "gone"][-1]
    assert released["taken_over_by"] == winner
    assert json.loads(cli("tasks", "show", a, "--json").out)["assignee"] == winner
