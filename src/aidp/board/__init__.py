"""`aidp board`: the backlog of one or more projects as a live page in the browser, for
the person watching a fleet of agents (docs/guide.md, "The board"). A surface, beside
aidp.agent and aidp.toolserver: it parses requests, calls the use cases (aidp.app) and
renders JSON for its own page.

    cards.py    a project's board (aidp.app.overview) as the page's JSON cards, and the
                patch between two of them
    hub.py      the live part: one watcher of every project's tasklists (stat data), the
                boards kept current, every open page told of each change
    guard.py    who may talk to it: the token, the Host, the Origin, writes as JSON POSTs
    api.py      one task's detail and the edits, each a use case of aidp.app
    server.py   the web application (Starlette): page, assets, events, API; its headers
    serve.py    the socket, the start-up line, uvicorn in a thread, signals, exit 0
    opening.py  the private file the browser is opened on (never the token in its argv)
    static/     the page, its script and its style (no build step, no network)

Starlette and uvicorn come with the MCP SDK aidp already depends on; server.py and
serve.py import them, and only `aidp board` imports those (tests/test_startup.py).
"""
