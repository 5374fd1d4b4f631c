"""`aidp board [PATH…]`: serve the live board of one or more projects in the browser."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from aidp.board.serve import Started


def board(
    ctx: typer.Context,
    paths: list[str] | None = typer.Argument(
        None, metavar="[PATH]...",
        help="Project folders (each holding .aidp/) to show. Default: this project."),
    port: int = typer.Option(
        6174, "--port", metavar="N", help="Port to listen on; 0 picks a free one."),
    host: str | None = typer.Option(
        None, "--host", metavar="H",
        help="Address to listen on. Default: 127.0.0.1 (this machine only)."),
    no_open: bool = typer.Option(False, "--no-open", help="Do not open the web browser."),
    as_json: bool = typer.Option(
        False, "--json", help='Print the start-up line as JSON: {"url", "port"}.'),
) -> int:
    """A live board of the backlog in the browser, until Ctrl-C.

    Columns per status, who holds what and whose lease ran out, each holder's plan,
    what waits on a person; edits go through the same write path as the CLI. The URL
    carries a secret token; only 127.0.0.1 unless --host.

    Examples:
    $ aidp board
    $ aidp board ../api ../web --port 0 --no-open
    """
    import sys

    from aidp.app.project import Project, StoreReader
    from aidp.cli.common import env
    from aidp.core.errors import InvalidInput
    from aidp.trust.person import refuse_for_agent

    refuse_for_agent("'aidp board', which serves the backlogs and starts a web browser,")

    if not 0 <= port <= 65535:
        raise InvalidInput(f"Invalid --port {port}: use 0 (a free port) to 65535")
    e = env(ctx)
    roots = [_project_root(Path(p)) for p in paths] if paths else [_project_root(e.root, None)]
    projects = [e.opened(Project(root, session=e.session, reader=StoreReader(background=False)))
                for root in dict.fromkeys(roots)]
    if host is not None:
        sys.stderr.write(
            f"Warning: --host {host} serves the board beyond 127.0.0.1: anyone who can reach "
            "it and has the URL (its token) can read and change these backlogs, over "
            "plain HTTP\n")
        sys.stderr.flush()

    def started(found: Started) -> None:
        if as_json:
            import orjson

            sys.stdout.write(orjson.dumps({"url": found.url, "port": found.port}).decode()
                             + "\n")
        else:
            sys.stdout.write(found.url + "\n")
        sys.stdout.flush()
        shown = ", ".join(str(p.root) for p in projects)
        sys.stderr.write(f"Serving the board of {shown}; Ctrl-C stops it\n")
        sys.stderr.flush()
        if not no_open:
            import webbrowser

            from aidp.board.opening import page_file

            # Never the URL on the browser's command line, which every user can read.
            opened.append(page_file(found.url))
            if not webbrowser.open(opened[-1].as_uri()):
                sys.stderr.write("No web browser found; open the URL above yourself\n")

    from aidp.board.opening import remove
    from aidp.board.serve import serve

    opened: list[Path] = []
    try:
        return serve(projects, host=host, port=port, on_start=started)
    finally:
        for made in opened:
            remove(made)


def _project_root(path: Path, given: str | None = "PATH") -> Path:
    """The absolute, resolved folder of a project: one that holds .aidp/ (nothing is
    created for one that does not). `given`: what named it (None: aidp found it)."""
    from aidp.core.errors import InvalidInput
    from aidp.core.terminal import inert

    if given is None:
        if not (path / ".aidp").is_dir():
            raise InvalidInput(f"No project here: no .aidp/ folder in {inert(str(path))}; "
                               "run 'aidp init' first, or name project folders: aidp "
                               "board PATH…")
        return path.resolve()
    root = path.expanduser().resolve()
    if path.name == ".aidp" and root.is_dir():
        root = root.parent
    if not root.is_dir():
        problem = "does not exist" if not root.exists() else "is not a folder"
        raise InvalidInput(f"Invalid PATH '{inert(str(path))}': {inert(str(root))} {problem}; "
                           "give a project folder (one holding .aidp/)")
    if not (root / ".aidp").is_dir():
        raise InvalidInput(f"Invalid PATH '{inert(str(path))}': no .aidp/ folder in "
                           f"{inert(str(root))}; give a project folder, or run 'aidp init' "
                           "there first")
    return root
