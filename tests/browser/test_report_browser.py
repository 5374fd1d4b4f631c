"""`aidp report --html` in a real headless browser (Debian's chromium, driven by
Playwright): the page renders offline from file://, charts have a size, the backlog
filters work, nothing reaches the network, and a 10k-task report loads fast.

Skipped, with the reason, where no browser is installed: `make browser` installs
one (chromium from Debian, playwright from PyPI; Playwright's own browser download
is never used).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from aidp.core.model import new_task, now_micros, transition
from aidp.tasklist.log import TaskLog

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--disable-default-apps", "--no-default-browser-check"]
LOAD_BUDGET_MS = 2000  # issue 17: a 10k-task report loads in under 2 s


def _chromium() -> str | None:
    for candidate in (os.environ.get("AIDP_CHROMIUM"), "chromium", "chromium-browser",
                      "google-chrome"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


def _skip_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: run 'make browser' for the browser tests"
    if _chromium() is None:
        return "no chromium found (AIDP_CHROMIUM, chromium): run 'make browser'"
    return None


# CI sets AIDP_REQUIRE_BROWSER=1 after `make browser`: there a missing browser fails
# these tests instead of skipping them.
REQUIRED = os.environ.get("AIDP_REQUIRE_BROWSER") == "1"
pytestmark = pytest.mark.skipif(not REQUIRED and _skip_reason() is not None,
                                reason=_skip_reason() or "")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if _skip_reason() is not None:
        pytest.fail(f"AIDP_REQUIRE_BROWSER=1 but {_skip_reason()}")
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="aidp-chromium-")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=_chromium(), args=ARGS, headless=True)
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)


class Loaded:
    def __init__(self, page, requests: list[str], errors: list[str]) -> None:
        self.page = page
        self.requests = requests
        self.errors = errors


def load(browser, path: Path) -> Loaded:
    page = browser.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri(), wait_until="load")
    page.wait_for_selector("body[data-ready='1']", timeout=10_000)
    return Loaded(page, requests, errors)


def chart_sizes(page) -> list[tuple[float, float]]:
    return [tuple(s) for s in page.evaluate(
        "[...document.querySelectorAll('svg.chart')].map(s => {"
        "const r = s.getBoundingClientRect(); return [r.width, r.height]; })")]


def test_the_report_renders_offline_with_charts_queue_table_and_todos(browser, cli,
                                                                        project) -> None:
    a = cli("tasks", "add", "Design the schema", "-p", "high", "-t", "db", "-q").out.strip()
    b = cli("tasks", "add", "Write the migration", "-t", "db", "-q").out.strip()
    cli("tasks", "add", "Polish the docs", "-p", "low", "-t", "docs")
    c = cli("tasks", "add", "Old spike", "-q").out.strip()
    assert cli("tasks", "block", b, "--on", a).code == 0
    cli("tasks", "done", c)
    cli("todo", "add", "Read the code")
    cli("todo", "add", "Write tests")
    cli("todo", "tick", "1")
    result = cli("report", "--html", "report.html")
    assert result.code == 0, result
    loaded = load(browser, project / "report.html")
    page = loaded.page
    assert page.title() == f"aidp report — {project.name}"
    sizes = chart_sizes(page)
    assert len(sizes) == 6 and all(w > 100 and h > 50 for w, h in sizes), sizes
    assert page.locator("#ready li").all_inner_texts()[0].startswith("high Design the schema")
    assert "Write the migration" in page.inner_text("#blocked")
    assert "waits on: high Design the schema" in page.inner_text("#blocked")
    assert page.inner_text("#count") == "3 of 4 tasks"  # open tasks by default
    rows = page.locator("#tasks tbody tr")
    assert rows.count() == 3
    assert "blocked by 1" in page.inner_text("#tasks tbody")
    page.check("input[name=status][value=done]")
    assert page.inner_text("#count") == "4 of 4 tasks"
    page.select_option("select[name=tag]", "db")
    assert page.inner_text("#count") == "2 of 4 tasks"
    page.fill("input[name=q]", "migration")
    assert page.inner_text("#count") == "1 of 4 tasks"
    assert rows.count() == 1 and "Write the migration" in rows.first.inner_text()
    todo = page.inner_text("#todos")
    assert "Read the code" in todo and "Write tests" in todo and "current session" in todo
    assert loaded.errors == []
    assert {url.split(":", 1)[0] for url in loaded.requests} == {"file"}
    assert len(loaded.requests) == 1  # the page itself: no asset, no network
    page.close()


def test_stored_markup_stays_text(browser, cli, project) -> None:
    evil = "<img src=x onerror=\"window.pwned=1\"></script><script>window.pwned=2</script>"
    TaskLog(project).append([new_task(evil[:200], tags=["<b>x</b>"], session="s<i>")])
    cli("--session", "<script>window.pwned=3</script>", "todo", "add", evil[:200])
    assert cli("report", "--html", "r.html").code == 0
    loaded = load(browser, project / "r.html")
    page = loaded.page
    assert page.evaluate("window.pwned") is None
    assert evil[:40] in page.inner_text("#tasks tbody")
    assert page.locator("#tasks img, #todos img, #todos script").count() == 0
    assert loaded.errors == []
    assert len(loaded.requests) == 1
    page.close()


def test_a_10k_task_report_loads_in_under_two_seconds(browser, cli, project) -> None:
    rng_tags = ("bug", "docs", "perf", "ui", "api")
    start = now_micros() - 120 * 86_400_000_000
    records = []
    for n in range(10_000):
        at = start + n * 1_000_000_000  # ~17 minutes apart: 115 days
        task = new_task(f"Generated task number {n} for the load test",
                        priority=("high", "medium", "low")[n % 3],
                        tags=[rng_tags[n % 5]], session=f"s{n % 7}", now=at)
        task["id"] = f"task_{at // 1_000_000}_{n:08x}"
        if n % 3 == 0:
            task = transition(task, "done", now=at + 3 * 86_400_000_000)
        elif n % 11 == 0:
            task = transition(task, "abandoned", reason="Dropped", now=at + 86_400_000_000)
        records.append(task)
    TaskLog(project).append(records)
    assert cli("report", "--html", "big.html").code == 0
    loaded = load(browser, project / "big.html")
    page = loaded.page
    timing = page.evaluate(
        "(() => { const n = performance.getEntriesByType('navigation')[0];"
        " return [n.domContentLoadedEventEnd, n.loadEventEnd]; })()")
    assert 0 < timing[1] < LOAD_BUDGET_MS, f"loaded in {timing[1]:.0f} ms"
    assert page.inner_text("#count").endswith("of 10,000 tasks")
    assert page.locator("#tasks tbody tr").count() == 100  # the first page of rows
    page.click("#more")
    assert page.locator("#tasks tbody tr").count() == 200
    assert all(w > 100 and h > 50 for w, h in chart_sizes(page))
    still_open = sum(1 for t in records if t["status"] == "pending")
    assert f"now {still_open:,}." in page.inner_text("#burndown")
    assert loaded.errors == []
    page.close()
