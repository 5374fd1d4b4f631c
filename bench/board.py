"""`aidp board` at scale (issue 38): at 10,000 open tasks, how soon the first cards show
after navigation in Chromium, and how long a change takes to reach the page.

    .venv/bin/python bench/board.py [--tasks 10000] [--closed 20000] [--updates 100]

A project in a temporary folder gets `--tasks` open tasks (a third claimed, with
leases; some waiting on others) and `--closed` done or abandoned ones, written straight
to its tasklist. `aidp board --port 0 --no-open --json` serves it; Debian's chromium
(driven by Playwright, as tests/browser/ drives it) opens the page:

- first cards: `performance.now()` when the page drew its first cards (the page marks
  it: `body[data-ready-at]`), i.e. from the start of navigation; five loads, each in a
  fresh context;
- an update: `aidp tasks add` run as a separate process, one at a time; the time from
  that command's exit to the card being in the page (polled each animation frame),
  `--updates` times: median, p99 and max. The page filters on the updates' words, so
  each new card is drawn (a pending column draws 200 cards; the rest wait on "Show
  more");
- the server's own cost: its CPU time while idle for 5 s with the page open, and for
  the whole run.

Prints the figures and `uptime`'s load, before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from aidp.core.model import new_task, now_micros, transition  # noqa: E402
from aidp.tasklist.log import TaskLog  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--disable-default-apps", "--no-default-browser-check"]


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def make_backlog(root: Path, open_tasks: int, closed: int) -> None:
    start = now_micros() - 90 * 86_400_000_000
    records = []
    tags = ("api", "ui", "db", "docs", "bug", "perf")
    for n in range(open_tasks + closed):
        at = start + n * 100_000_000
        task = new_task(f"Generated task {n}: something to do in the {tags[n % 6]} code",
                        priority=("high", "medium", "low")[n % 3], tags=[tags[n % 6]],
                        session=f"agent-{n % 9}", now=at)
        task["id"] = f"task_{at // 1_000_000}_{n:08x}"
        if n >= open_tasks:
            task = transition(task, "done" if n % 5 else "abandoned",
                              reason=None if n % 5 else "Dropped", now=at + 3_600_000_000)
        records.append(task)
    TaskLog(root).append(records)
    # A third of the open tasks in progress, claimed with a lease, some already stale.
    now = now_micros()
    claims = []
    for n in range(0, open_tasks, 3):
        tid = records[n]["id"]
        until = now + (3_600_000_000 if n % 2 else -60_000_000)
        stamp = f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(now / 1e6))}.000000Z"
        claims.append(transition(records[n], "in_progress", now=now))
        claims.append({"type": "claim", "id": f"claim:{tid}:agent-{n % 9}", "task": tid,
                       "assignee": f"agent-{n % 9}", "claimed_at": stamp, "lease": 3600,
                       "lease_until": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z",
                                                    time.gmtime(until / 1e6)),
                       "session": f"agent-{n % 9}", "updated_at": stamp})
    TaskLog(root).append(claims)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--closed", type=int, default=20_000)
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("AIDP_CHROMIUM") or shutil.which("chromium")
    folder = Path(tempfile.mkdtemp(prefix="aidp-board-bench-"))
    root = folder / "project"
    (root / ".aidp").mkdir(parents=True)
    env = {**os.environ, "AIDP_DIR": str(root)}
    print(f"load before: {load()}")
    make_backlog(root, args.tasks, args.closed)
    size = (root / ".aidp" / "tasklist.jsonl").stat().st_size
    print(f"backlog: {args.tasks:,} open tasks, {args.closed:,} closed, {size / 1e6:.1f} MB")
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "aidp", "board", "--port", "0", "--no-open",
                             "--json"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        url = json.loads(proc.stdout.readline())["url"]
        print(f"start-up line after {time.monotonic() - started:.2f} s (the first read included)")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=ARGS, headless=True)
            firsts = []
            for _ in range(args.loads):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(url)
                page.wait_for_selector("body[data-ready='1']", timeout=30_000)
                firsts.append(float(page.get_attribute("body", "data-ready-at")))
                cards = page.locator(".card").count()
                context.close()
            print(f"first cards (ms after navigation starts, {args.loads} loads): "
                  f"{', '.join(f'{t:.0f}' for t in firsts)}; {cards} cards drawn")
            page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            page.goto(url)
            page.wait_for_selector("body[data-ready='1']", timeout=30_000)
            page.fill("#q", "benchupdate")
            page.wait_for_timeout(1000)
            idle_from = cpu(proc.pid)
            time.sleep(5)
            idle = cpu(proc.pid) - idle_from
            delays = []
            for n in range(args.updates):
                subprocess.run([sys.executable, "-m", "aidp", "tasks", "add",
                                f"benchupdate {n}", "-q"], env=env, check=True,
                               capture_output=True)
                written = time.monotonic()
                page.wait_for_function(
                    "(t) => [...document.querySelectorAll('.card .title')]"
                    ".some(e => e.textContent === t)", arg=f"benchupdate {n}",
                    polling="raf", timeout=30_000)
                delays.append(time.monotonic() - written)
            browser.close()
        delays.sort()
        p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
        print(f"update to page ({args.updates} CLI writes): median "
              f"{statistics.median(delays) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
              f"max {delays[-1] * 1000:.0f} ms")
        print(f"server CPU: {idle:.3f} s while idle for 5 s with a page open; "
              f"{cpu(proc.pid):.1f} s for the whole run")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"load after: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
