"""The person working here, read from git's config files without starting git (it
names the default TODO session on every `todo` command)."""

from __future__ import annotations

import os
from pathlib import Path

from aidp.tasklist.git_runner import run

_IDENTITY_CACHE: dict[str, str | None] = {}


# --- identity ----------------------------------------------------------------------------


def _unquote(raw: str) -> str:
    """A config value: quotes removed, escapes read, a comment outside quotes dropped."""
    out: list[str] = []
    quoted = False
    at = 0
    while at < len(raw):
        ch = raw[at]
        if ch == '"':
            quoted = not quoted
        elif ch == "\\" and at + 1 < len(raw):
            at += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[at], raw[at]))
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
        at += 1
    return "".join(out).strip()


class _Unsupported(Exception):
    """A config file this reader does not follow (an include)."""


def _read_config(path: Path, wanted: dict[str, str | None]) -> None:
    """Fill `wanted` ("section.key" -> value) from one config file; later files win."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    section = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("["):
            head, _, rest = stripped[1:].partition("]")
            name = head.split(None, 1)[0].lower() if head.split() else ""
            if name in ("include", "includeif") or head.lower().startswith("includeif"):
                raise _Unsupported(str(path))
            section = name if len(head.split(None, 1)) == 1 else f"{name}.sub"
            stripped = rest.strip()
            if not stripped:
                continue
        key, eq, value = stripped.partition("=")
        full = f"{section}.{key.strip().lower()}"
        if full in wanted:
            wanted[full] = _unquote(value) if eq else "true"


def _config_files(root: Path) -> list[Path]:
    files: list[Path] = []
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if os.environ.get("GIT_CONFIG_GLOBAL") is not None:
        files.append(Path(os.environ["GIT_CONFIG_GLOBAL"]))
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        files.append(Path(xdg) / "git" / "config")
        files.append(Path(os.path.expanduser("~")) / ".gitconfig")
    from aidp.tasklist.paths import locate_git

    found = locate_git(root)
    if found is not None:
        git_dir = found[1]
        common = git_dir
        try:
            pointer = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        except OSError:
            pointer = ""
        if pointer:
            common = (git_dir / pointer) if not os.path.isabs(pointer) else Path(pointer)
        files.append(common / "config")
        files.append(git_dir / "config.worktree")
    return files


def own_session(branch: str, who: str) -> str:
    """Person `who`'s own list on `branch`."""
    return f"{branch}@{who}"


def unread_session(explicit: str | None, root: Path) -> tuple[str, str | None, str | None]:
    """(session, branch, person): the session named without reading the tasklist —
    `explicit`, else AIDP_SESSION (empty counts as unset), else the person's own list on
    the git branch (`<branch>@<git identity>`), else the branch when git knows no
    identity, else default — and, when it is the person's own list, the branch and the
    person (a read may find theirs under the bare branch name: todos.resolve_session)."""
    from aidp.tasklist.paths import DEFAULT_SESSION, git_branch

    named = explicit or os.environ.get("AIDP_SESSION")
    if named:
        return named, None, None
    branch = git_branch(root)
    if branch is None:
        return DEFAULT_SESSION, None, None
    who = identity(root)
    if who is None:
        return branch, None, None
    return own_session(branch, who), branch, who


def identity(root: Path) -> str | None:
    """The person working here, as git names commit authors: their e-mail address
    (GIT_AUTHOR_EMAIL, else author.email, else user.email, else EMAIL), else their
    user.name; None when git knows neither."""
    from_env = os.environ.get("GIT_AUTHOR_EMAIL")
    if from_env:
        return from_env.strip() or None
    key = str(root)
    if key in _IDENTITY_CACHE:
        return _IDENTITY_CACHE[key]
    wanted: dict[str, str | None] = {"author.email": None, "user.email": None,
                                     "author.name": None, "user.name": None}
    try:
        for path in _config_files(root):
            _read_config(path, wanted)
        count = int(os.environ.get("GIT_CONFIG_COUNT") or 0)
        for n in range(count):
            name = os.environ.get(f"GIT_CONFIG_KEY_{n}", "").lower()
            if name in wanted:
                wanted[name] = os.environ.get(f"GIT_CONFIG_VALUE_{n}", "")
        found = (wanted["author.email"] or wanted["user.email"] or os.environ.get("EMAIL")
                 or os.environ.get("GIT_AUTHOR_NAME") or wanted["author.name"]
                 or wanted["user.name"])
    except (_Unsupported, ValueError):
        found = _identity_from_git(root)
    result = found.strip() if found and found.strip() else None
    _IDENTITY_CACHE[key] = result
    return result


def _identity_from_git(root: Path) -> str | None:
    for key in ("author.email", "user.email", "user.name"):
        done = run(root, "config", "--get", key, check=False)
        if done is not None and done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    return os.environ.get("EMAIL")
