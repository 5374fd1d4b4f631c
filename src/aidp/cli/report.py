"""`aidp report --html FILE [--open]`: the backlog as one self-contained web page."""

from __future__ import annotations

from pathlib import Path

import typer

from aidp.cli.common import env, info
from aidp.cli.user_files import write_named


def report(
    ctx: typer.Context,
    html: str = typer.Option(
        ..., "--html", metavar="FILE", help="Write the report as one HTML page to FILE."
    ),
    open_: bool = typer.Option(False, "--open", help="Open the page in the web browser."),
) -> None:
    """One self-contained HTML page: charts, work queue, backlog table, TODO lists.

    Examples:
    $ aidp report --html report.html
    $ aidp report --html report.html --open
    """
    from aidp.app.report import report_data
    from aidp.core.model import now_micros
    from aidp.core.terminal import inert
    from aidp.views import page

    e = env(ctx)
    data = report_data(e.project, now=now_micros(), current_session=e.session_name())
    text = page.build(data)
    write_named(html, text.encode("utf-8"), option="--html")
    tasks = len(data["tasks"])
    info(f"Wrote {inert(html)}: {tasks:,} task{'s' if tasks != 1 else ''}, "
         f"{len(data['todos'])} TODO list{'s' if len(data['todos']) != 1 else ''}")
    if open_:
        import webbrowser

        url = Path(html).resolve().as_uri()
        if not webbrowser.open(url):
            info(f"No web browser found; open {url} yourself")
