"""Everything aidp asks of git: the person's identity, `sync`, `tasks changes`, and the
diff driver that shows the tasklist as readable task lines.

The identity is read on every `todo` command (it names the default session), so it is
read from git's config files directly, without starting git (~8 ms a call); only a
configuration this reader does not follow (include files) is asked of git itself.
Everything else runs `git` as a subprocess, imported when needed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from aidp.errors import AidpError

if TYPE_CHECKING:
    from collections.abc import Callable
    from subprocess import CompletedProcess

    from aidp.log import Fold, TaskLog

_IDENTITY_CACHE: dict[str, str | None] = {}


class GitError(AidpError):
    """git refused, or the repository is in a state aidp will not act in."""


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
    from aidp.paths import _git_dir

    found = _git_dir(root)
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
        done = _run(root, "config", "--get", key, check=False)
        if done is not None and done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    return os.environ.get("EMAIL")


# --- running git -------------------------------------------------------------------------


@overload
def _run(root: Path, *args: str, check: Literal[True] = ..., env: dict[str, str] | None = ...,
         stdin: str | None = ...) -> CompletedProcess[str]: ...
@overload
def _run(root: Path, *args: str, check: bool, env: dict[str, str] | None = ...,
         stdin: str | None = ...) -> CompletedProcess[str] | None: ...
def _run(root: Path, *args: str, check: bool = True, env: dict[str, str] | None = None,
         stdin: str | None = None) -> CompletedProcess[str] | None:
    """`git ARGS` in `root`: the completed process; None when git cannot be started."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False,
            env={**os.environ, **(env or {})}, input=stdin, timeout=300,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        if check:
            raise GitError(f"Cannot run git: {exc}") from exc
        return None
    if check and done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        shown = message[-1] if message else f"exit code {done.returncode}"
        raise GitError(f"git {args[0]} failed: {shown}")
    return done


def ignores(root: Path, path: Path) -> bool:
    """Whether git ignores `path` (a tracked file is never ignored). No git, or no
    repository: False (so, for aidp.trust, a config file then needs trust)."""
    import subprocess

    try:
        result = subprocess.run(
            # fsmonitor is a command line in .git/config: never let a copied .git run one.
            ["git", "-c", "core.fsmonitor=false", "check-ignore", "-q", "--", str(path)],
            cwd=root, capture_output=True, check=False, timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


def _run_bytes(root: Path, *args: str) -> bytes | None:
    """stdout of `git ARGS` as bytes; None when it fails."""
    import subprocess

    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False,
                              timeout=300)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


class Repo:
    """The git repository holding a project: its top, git dir, and the tasklist's path in it."""

    def __init__(self, top: Path, git_dir: Path, tasklist: str) -> None:
        self.top = top
        self.git_dir = git_dir
        self.tasklist = tasklist  # relative to `top`, with forward slashes


def repo_of(log: TaskLog) -> Repo:
    """The repository the project's tasklist is in; a GitError when there is none."""
    done = _run(log.root, "rev-parse", "--show-toplevel", "--absolute-git-dir", check=False)
    if done is None:
        raise GitError("Cannot run git: is it installed? Nothing was changed")
    if done.returncode != 0:
        raise GitError(f"Not in a git repository: {log.root} (this command works on the "
                       "tasklist's git history); nothing was changed")
    top_text, git_text = done.stdout.splitlines()[:2]
    top = Path(top_text)
    try:
        rel = log.path.resolve().relative_to(top.resolve())
    except ValueError as exc:
        raise GitError(f"The tasklist {log.path} is outside the git work tree {top}; "
                       "nothing was changed") from exc
    return Repo(top, Path(git_text), rel.as_posix())


def file_at(repo: Repo, rev: str) -> bytes:
    """The tasklist as revision `rev` has it (empty when it has none)."""
    return _run_bytes(repo.top, "show", f"{rev}:{repo.tasklist}") or b""


def verify_rev(repo: Repo, rev: str) -> str:
    """The commit `rev` names; InvalidInput when it names none."""
    from aidp.errors import InvalidInput

    if rev.startswith("-"):
        raise InvalidInput(f"Invalid revision {rev!r}: give a commit, branch or tag "
                           "(REV or REV..REV)")
    done = _run(repo.top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if done is None or done.returncode != 0:
        raise InvalidInput(f"Unknown revision {rev!r}: give a commit, branch or tag "
                           "(REV or REV..REV)")
    return done.stdout.strip()


def has_commits(repo: Repo) -> bool:
    done = _run(repo.top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    return done is not None and done.returncode == 0


# --- what changed ------------------------------------------------------------------------

# Task keys that a status change sets; an edit is a change of any other key.
_STATUS_KEYS = frozenset(("status", "updated_at", "started_at", "completed_at", "abandoned_at",
                          "abandoned_reason"))
_VERBS = {"in_progress": "started", "done": "done", "abandoned": "abandoned",
          "pending": "reopened"}


def _relevant_prefix(before: bytes, after: bytes) -> tuple[bytes, bytes] | None:
    """When `after` only appended to `before` (the usual case), the lines of `before`
    that matter for the appended ones: those of the tasks they touch, and TODO records.
    A fold of those gives the same answers for every touched task at a fraction of the
    cost of folding a long history. None otherwise."""
    if not after.startswith(before) or (before and not before.endswith(b"\n")):
        return None
    from aidp.log import parse_line

    tail = after[len(before):]
    touched: set[bytes] = set()
    for raw in tail.split(b"\n"):
        record = parse_line(raw)
        if record is not None and "type" not in record:
            touched.add(b'"' + str(record["id"]).encode("utf-8", "surrogatepass") + b'"')
    if len(touched) > 256:
        return None
    keep = [raw for raw in before.split(b"\n")
            if b'"type":"todo_' in raw or any(tid in raw for tid in touched)]
    return b"\n".join(keep) + b"\n", tail


def compare(before_data: bytes, after_data: bytes) -> dict[str, Any]:
    """What happened between two versions of the tasklist, from their folded states:
    tasks filed, status changes, edits, tasks no longer there, and TODO lists changed."""
    from aidp.log import fold_bytes

    quick = _relevant_prefix(before_data, after_data)
    if quick is not None:
        prefix, tail = quick
        before = fold_bytes(prefix)
        after = fold_bytes(prefix + tail)
        ids = [tid for tid in after.tasks if tid not in before.tasks
               or after.tasks[tid] != before.tasks[tid]]
    else:
        before = fold_bytes(before_data)
        after = fold_bytes(after_data)
        ids = list(after.tasks)
    filed: list[dict[str, Any]] = []
    status: list[dict[str, Any]] = []
    edited: list[dict[str, Any]] = []
    for tid in ids:
        new = after.tasks[tid]
        old = before.tasks.get(tid)
        if old is None:
            filed.append(new)
            if new.get("status") != "pending":
                status.append(_status_change(tid, new, None))
            continue
        if old == new:
            continue
        if old.get("status") != new.get("status"):
            status.append(_status_change(tid, new, old.get("status")))
        fields = {
            key: {"from": old.get(key), "to": new.get(key)}
            for key in sorted(set(old) | set(new) - _STATUS_KEYS)
            if key not in _STATUS_KEYS and old.get(key) != new.get(key)
        }
        if fields:
            edited.append({"id": tid, "description": new.get("description"), "fields": fields})
    removed = [] if quick is not None else [
        {"id": tid, "description": task.get("description")}
        for tid, task in before.tasks.items() if tid not in after.tasks
    ]
    result: dict[str, Any] = {"filed": filed, "status": status, "edited": edited,
                              "removed": removed, "todo": _todo_changes(before, after)}
    result["summary"] = summary(result)
    return result


def _status_change(tid: str, task: dict[str, Any], was: object) -> dict[str, Any]:
    return {"id": tid, "description": task.get("description"), "from": was,
            "to": task.get("status")}


def _todo_changes(before: Fold, after: Fold) -> list[dict[str, Any]]:
    from aidp import todos

    old = {t.session: t for t in todos.all_lists(before)}
    out = []
    for todo in sorted(todos.all_lists(after), key=lambda t: t.session):
        was = old.get(todo.session)
        was_items = {i["id"]: i for i in (was.visible if was else [])}
        now_items = {i["id"]: i for i in todo.visible}
        added = [i for n, i in now_items.items() if n not in was_items]
        removed = [i for n, i in was_items.items() if n not in now_items]
        completed = changed = 0
        for n, item in now_items.items():
            prior = was_items.get(n)
            if prior is None or todos.item_out(prior) == todos.item_out(item):
                continue
            if (todos.derived_status(item) == "completed"
                    and todos.derived_status(prior) != "completed"):
                completed += 1
            else:
                changed += 1
        state_changed = was is None or (was.active, was.paused) != (todo.active, todo.paused)
        if added or removed or completed or changed or (state_changed and (was or todo.items)):
            out.append({"session": todo.session, "added": len(added), "removed": len(removed),
                        "completed": completed, "changed": changed,
                        "active": bool(todo.visible), "paused": todo.paused})
    return out


def summary(changes: dict[str, Any]) -> str:
    """`2 filed, 1 done, 3 TODO changes`; empty when nothing changed."""
    counts: dict[str, int] = {"filed": len(changes["filed"])}
    for change in changes["status"]:
        if change["from"] is None and change["to"] == "pending":
            continue
        verb = _VERBS.get(str(change["to"]), "changed")
        counts[verb] = counts.get(verb, 0) + 1
    counts["edited"] = len(changes["edited"])
    counts["removed"] = len(changes["removed"])
    parts = [f"{n} {word}" for word, n in counts.items() if n]
    todo = sum(t["added"] + t["removed"] + t["completed"] + t["changed"] or 1
               for t in changes["todo"])
    if todo:
        parts.append(f"{todo} TODO change{'s' if todo != 1 else ''}")
    return ", ".join(parts)


def changes_between(log: TaskLog, spec: str | None) -> dict[str, Any]:
    """`tasks changes [REV[..REV]]`: REV alone is REV to the working tree; an empty side
    of `..` is HEAD; no argument is HEAD to the working tree (what is not committed)."""
    repo = repo_of(log)
    spec = spec if spec not in (None, "") else "HEAD"
    if ".." in spec:
        low, _, high = spec.partition("..")
        low, high = low or "HEAD", high or "HEAD"
    else:
        low, high = spec, None
    if low == "HEAD" and not has_commits(repo):
        old = b""
    else:
        verify_rev(repo, low)
        old = file_at(repo, low)
    if high is None:
        new = log.read_bytes()
    else:
        verify_rev(repo, high)
        new = file_at(repo, high)
    result = compare(old, new)
    return {"from": low, "to": high, **result}


# --- sync ----------------------------------------------------------------------------------


class SyncReport:
    def __init__(self) -> None:
        self.committed: str | None = None  # the commit message, when a commit was made
        self.upstream: str | None = None
        self.pulled = False
        self.pushed = False
        self.branch = ""


def _refuse_unsafe(repo: Repo) -> str:
    """The checked-out branch; a GitError (nothing changed) for states sync must not touch."""
    nothing = "; nothing was changed"
    states = [
        ("MERGE_HEAD", "A merge is in progress: finish it (git commit) or abort it "
                       "(git merge --abort)"),
        ("rebase-merge", "A rebase is in progress: finish it (git rebase --continue) or "
                         "abort it (git rebase --abort)"),
        ("rebase-apply", "A rebase or git am is in progress: finish or abort it"),
        ("CHERRY_PICK_HEAD", "A cherry-pick is in progress: finish or abort it"),
        ("REVERT_HEAD", "A revert is in progress: finish or abort it"),
    ]
    for name, message in states:
        if (repo.git_dir / name).exists():
            raise GitError(message + ", then run aidp sync again" + nothing)
    done = _run(repo.top, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    if done is None or done.returncode != 0 or not done.stdout.strip():
        raise GitError("HEAD is detached (not on a branch): check out a branch, then run "
                       "aidp sync again" + nothing)
    unmerged = _run(repo.top, "ls-files", "-u", "--", repo.tasklist)
    if unmerged is not None and unmerged.stdout.strip():
        raise GitError(f"{repo.tasklist} is in conflict: resolve it (its lines are all "
                       f"kept: git add {repo.tasklist}) and finish the merge, then run "
                       "aidp sync again" + nothing)
    return done.stdout.strip()


def _pull_args(repo: Repo, branch: str) -> list[str]:
    """`git pull` as the repository's config says; a merge when it says nothing (git
    then refuses divergent branches outright)."""
    for key in (f"branch.{branch}.rebase", "pull.rebase", "pull.ff"):
        done = _run(repo.top, "config", "--get", key, check=False)
        if done is not None and done.returncode == 0:
            return ["pull", "--autostash"]
    return ["pull", "--autostash", "--no-rebase"]


def sync(log: TaskLog, *, message: str | None = None, push: bool = True) -> SyncReport:
    """Commit the tasklist alone (a message summing up what changed), pull as the
    repository's config says (the union merge resolves the tasklist), and push when the
    branch has an upstream. Other changes in the work tree stay as they were."""
    repo = repo_of(log)
    report = SyncReport()
    report.branch = _refuse_unsafe(repo)
    if message is not None and not message.strip():
        from aidp.errors import InvalidInput

        raise InvalidInput("Invalid --message: it is empty; give the commit message")
    if not log.path.exists():
        raise GitError(f"No tasklist at {log.path}: run 'aidp init' first; nothing was changed")
    with log.locked():  # no aidp write lands while git rewrites the file
        current = log.read_bytes()
        committed = file_at(repo, "HEAD") if has_commits(repo) else None
        tracked = _run(repo.top, "ls-files", "--error-unmatch", "--", repo.tasklist,
                       check=False)
        if committed is None or current != committed or (tracked and tracked.returncode):
            what = summary(compare(committed or b"", current)) or "tasklist updated"
            text = message if message is not None else f"aidp: {what}"
            if tracked is None or tracked.returncode != 0:
                _run(repo.top, "add", "--", repo.tasklist)
            _run(repo.top, "commit", "-q", "--only", "-m", text, "--", repo.tasklist)
            report.committed = text
        upstream = _run(repo.top, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}",
                        check=False)
        if upstream is None or upstream.returncode != 0:
            return report
        report.upstream = upstream.stdout.strip()
        pulled = _run(repo.top, *_pull_args(repo, report.branch), check=False)
        if pulled is None or pulled.returncode != 0:
            lines = ((pulled.stderr or pulled.stdout) if pulled else "").strip().splitlines()
            why = lines[-1] if lines else "git could not be run"
            kept = " (your tasklist commit is made)" if report.committed else ""
            raise GitError(f"git pull stopped: {why}{kept}; see 'git status', resolve, then "
                           "run aidp sync again")
        report.pulled = True
        if push:
            _run(repo.top, "push", "-q")
            report.pushed = True
    return report


# --- the diff driver ------------------------------------------------------------------------

DIFF_ATTRIBUTE = ".aidp/tasklist.jsonl diff=aidp"


def _short(tid: str) -> str:
    return tid.rpartition("_")[2] or tid


def textconv(data: bytes) -> str:
    """The tasklist as git's diff driver shows it: one readable line per line of the
    file, so `git diff` and `git log -p` show which tasks and TODO items changed how."""
    from aidp.log import parse_line
    from aidp.render import inert

    raws = data.split(b"\n")
    if raws and raws[-1] == b"":
        raws.pop()
    records = [parse_line(raw) for raw in raws]
    sessions: dict[str, str] = {}  # generation -> session
    contents: dict[tuple[str, str], str] = {}  # (generation, item) -> its text
    for record in records:
        if record is None:
            continue
        if record.get("type") == "todo_head" and isinstance(record.get("list"), str):
            sessions[record["list"]] = str(record.get("session"))
        elif record.get("type") == "todo_item" and isinstance(record.get("content"), str):
            contents[(str(record.get("list")), str(record.get("item")))] = record["content"]
    out = []
    for raw, record in zip(raws, records, strict=True):
        if record is None:
            out.append("damaged line: " + inert(raw[:60].decode("utf-8", "replace"))
                       if raw.strip() else "")
            continue
        kind = record.get("type")
        if kind is None:
            out.append(_task_line(record, inert))
        elif kind == "todo_item":
            gen, item = str(record.get("list")), str(record.get("item"))
            where = f"todo {inert(sessions.get(gen, gen))}"
            what = inert(record.get("content") or contents.get((gen, item), item))
            if record.get("deleted") is True:
                out.append(f"{where}: deleted {what}")
            else:
                sub = "  subtask" if isinstance(record.get("parent"), str) else ""
                out.append(f"{where}:{sub} [{inert(record.get('status'))}] {what}")
        elif kind == "todo_head":
            state = "active" if record.get("active") is True else "cleared"
            if record.get("paused") is True:
                state += f", paused: {inert(record.get('pause_reason') or '')}"
            out.append(f"todo {inert(record.get('session'))}: list {state}")
        elif kind == "todo_list":
            items = record["items"] if isinstance(record.get("items"), list) else []
            out.append(f"todo {inert(record.get('session'))}: snapshot of {len(items)} items")
        else:
            rest = {k: v for k, v in record.items() if k not in ("type", "id", "updated_at")}
            out.append(f"{inert(kind)} {inert(record.get('id'))}: "
                       + inert(_compact(rest))[:200])
    return "".join(line + "\n" for line in out)


def _compact(value: object) -> str:
    import orjson

    return orjson.dumps(value).decode("utf-8")


def _task_line(task: dict[str, Any], inert: Callable[[object], str]) -> str:
    tags = " ".join(f"#{inert(t)}" for t in task.get("tags") or [] if isinstance(t, str))
    line = (f"task {inert(_short(str(task.get('id'))))} [{inert(task.get('status'))}] "
            f"({inert(task.get('priority', 'medium'))}) {inert(task.get('description'))}")
    if task.get("abandoned_reason"):
        line += f" — {inert(task['abandoned_reason'])}"
    return line + (f" {tags}" if tags else "")


def textconv_command(program: list[str] | None = None) -> str:
    """The command git runs as the diff driver: this aidp, found again however it was
    started (a console script on PATH, or this Python with -m aidp). If that aidp is
    gone (a deleted virtualenv), git shows the raw file instead of failing every diff."""
    import shlex
    import shutil
    import sys

    if program is None:
        script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
        on_path = shutil.which("aidp")
        if script is not None and script.name == "aidp" and script.is_file():
            same = on_path is not None and Path(on_path).resolve() == script
            program = ["aidp" if same else str(script)]
        else:
            program = [sys.executable, "-m", "aidp"]
    head, rest = program[0], " ".join(shlex.quote(part) for part in program[1:])
    inner = f'"$0" {rest + " " if rest else ""}tasks textconv "$1" || cat "$1"'
    return f"sh -c {shlex.quote(inner)} {shlex.quote(head)}"


def setup_diff_driver(root: Path) -> bool | None:
    """Set this clone's `diff.aidp.textconv` (git config is per clone, never committed):
    True when it was missing and is set now, False when it was set already, None
    outside a git repository (or without git), where nothing happens."""
    inside = _run(root, "rev-parse", "--git-dir", check=False)
    if inside is None or inside.returncode != 0:
        return None
    done = _run(root, "config", "--get", "diff.aidp.textconv", check=False)
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return False
    _run(root, "config", "diff.aidp.textconv", textconv_command())
    return True


def render_changes(result: dict[str, Any]) -> str:
    """`tasks changes` for people: one line per change, then the TODO lists."""
    from aidp.render import inert

    low, high = result["from"], result["to"]
    span = f"since {inert(low)} (not committed yet)" if high is None else \
        f"from {inert(low)} to {inert(high)}"
    if not result["summary"]:
        return f"No changes to tasks or TODO lists {span}"
    lines = [f"Changes {span}: {result['summary']}"]
    for task in result["filed"]:
        lines.append(f"+ filed     {inert(_short(task['id']))}  ({inert(task.get('priority'))}) "
                     f"{inert(task.get('description'))}")
    for change in result["status"]:
        if change["from"] is None and change["to"] == "pending":
            continue
        verb = _VERBS.get(str(change["to"]), "changed")
        was = f"{inert(change['from'])} → " if change["from"] is not None else "filed → "
        lines.append(f"~ {verb:<9} {inert(_short(change['id']))}  "
                     f"{inert(change['description'])} ({was}{inert(change['to'])})")
    for edit in result["edited"]:
        fields = "; ".join(f"{inert(key)}: {_shown(v['from'], inert)} → {_shown(v['to'], inert)}"
                           for key, v in edit["fields"].items())
        lines.append(f"~ edited    {inert(_short(edit['id']))}  {inert(edit['description'])} "
                     f"({fields})")
    for gone in result["removed"]:
        lines.append(f"- removed   {inert(_short(gone['id']))}  {inert(gone['description'])}")
    for todo in result["todo"]:
        parts = [f"{todo[k]} {k}" for k in ("added", "completed", "changed", "removed")
                 if todo[k]]
        state = "active" if todo["active"] else "not active"
        if todo["paused"]:
            state += ", paused"
        lines.append(f"TODO {inert(todo['session'])}: {', '.join(parts) or 'state changed'} "
                     f"({state})")
    return "\n".join(lines)


def _shown(value: object, inert: Callable[[object], str]) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return "[" + ", ".join(inert(v) for v in value) + "]"
    return inert(value)
