"""`aidp sync`: commit the tasklist, pull (union merge), push."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:

    from aidp.tasklist.log import TaskLog

from aidp.git.changes import compare, merge_conflicts, summary
from aidp.tasklist.git_runner import GitError, Repo, file_at, repo_of, run

# --- sync ----------------------------------------------------------------------------------


class SyncReport:
    def __init__(self) -> None:
        self.committed: str | None = None  # the commit message, when a commit was made
        self.upstream: str | None = None
        self.pulled = False
        self.pushed = False
        self.branch = ""
        # Same-field conflicts the pull's merge resolved (changes.merge_conflicts)
        self.overwritten: list[dict[str, Any]] = []
        # Which of two claims won, for a task you held (outcomes.claim_outcomes)
        self.claims: list[dict[str, Any]] = []
        # After a fast-forward: values of yours the pull replaced (outcomes.replaced_values)
        self.replaced: list[dict[str, Any]] = []


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
    done = run(repo.top, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    if done is None or done.returncode != 0 or not done.stdout.strip():
        raise GitError("HEAD is detached (not on a branch): check out a branch, then run "
                       "aidp sync again" + nothing)
    unmerged = run(repo.top, "ls-files", "-u", "--", repo.tasklist)
    if unmerged is not None and unmerged.stdout.strip():
        raise GitError(f"{repo.tasklist} is in conflict: resolve it (its lines are all "
                       f"kept: git add {repo.tasklist}) and finish the merge, then run "
                       "aidp sync again" + nothing)
    return done.stdout.strip()


def _pull_args(repo: Repo, branch: str) -> list[str] | None:
    """`git pull` as the repository's config says; None when it says nothing: a merge
    (git would refuse divergent branches outright), of what a fetch brought."""
    done = run(repo.top, "config", "--name-only", "--get-regexp", r"^(pull|branch)\.",
               check=False)
    named = set(done.stdout.splitlines()) if done is not None and done.returncode == 0 \
        else set()  # (git writes a name's section and key in lower case, a branch as it is)
    if named & {f"branch.{branch}.rebase", "pull.rebase", "pull.ff"}:
        return ["pull", "--autostash"]
    return None


Head = tuple[str | None, bytes | None, bool]  # HEAD's commit, its tasklist, tracked


def head_state(repo: Repo) -> Head:
    """HEAD's commit (None: no commit yet), the tasklist as it has it, and whether the
    index tracks the tasklist: what `commit_tasklist` compares the file with."""
    done = run(repo.top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    head = done.stdout.strip() if done is not None and done.returncode == 0 else None
    tracked = run(repo.top, "ls-files", "--error-unmatch", "--", repo.tasklist, check=False)
    return (head, file_at(repo, head) if head else None,
            tracked is not None and tracked.returncode == 0)


def commit_tasklist(log: TaskLog, repo: Repo, message: str | None = None,
                    state: Head | None = None) -> str | None:
    """Commit the tasklist alone (other changes stay as they are) with `message`, else
    one summing up what changed (`aidp: 2 filed, 1 done`); the message, or None when
    HEAD already has the file as it is. The caller holds the tasklist's lock (sync,
    `run --parallel --merge`). `state`: `head_state` as the caller read it, HEAD unmoved
    since (sync reads it before the lock)."""
    current = log.read_bytes()
    _head, committed, tracked = head_state(repo) if state is None else state
    if committed is not None and current == committed and tracked:
        return None
    what = summary(compare(committed or b"", current)) or "tasklist updated"
    text = message if message is not None else f"aidp: {what}"
    if not tracked:
        run(repo.top, "add", "--", repo.tasklist)
    run(repo.top, *UNDER_LOCK, "commit", "-q", "--only", "-m", text, "--", repo.tasklist)
    return text


# Under the tasklist's lock, no `git maintenance run --auto` after a commit or a merge (a
# process more while every agent's write waits): the fetch before the lock runs it.
UNDER_LOCK = ("-c", "maintenance.auto=false")


def _told(report: SyncReport, log: TaskLog, repo: Repo, ours: str, theirs: str,
          merged: bytes, *, fast_forward: bool) -> None:
    """What the pull from `ours` (HEAD before it) with `theirs` (the upstream), which left
    the tasklist `merged`, did to what this person holds and set: the same-field
    conflicts of a merge, which claim won on a task they held, and after a fast-forward
    the values of theirs it replaced."""
    from aidp.backlog.queue import default_actor
    from aidp.git.outcomes import claim_outcomes, replaced_values
    from aidp.tasklist.person import identity

    report.overwritten = merge_conflicts(repo, ours, theirs, merged)
    before = file_at(repo, ours)
    if before == merged:
        return

    def author(line: bytes, side: str) -> str:
        """Who committed `line` ("Name <email>"): in `ours`, or in what the pull brought."""
        if not line:
            return ""
        revs = ours if side == "ours" else f"{ours}..{theirs}"
        done = run(repo.top, "log", "-1", "--no-textconv", "--format=%an <%ae>", "-S",
                   line.decode("utf-8", "replace"), revs, "--", repo.tasklist, check=False)
        return done.stdout.strip() if done is not None and done.returncode == 0 else ""

    report.claims = claim_outcomes(before, merged, default_actor(log.root), author)
    if fast_forward:
        report.replaced = replaced_values(before, merged, identity(log.root), author)


def sync(log: TaskLog, *, message: str | None = None, push: bool = True) -> SyncReport:
    """Commit the tasklist alone (a message summing up what changed), pull as the
    repository's config says (the union merge resolves the tasklist), and push when the
    branch has an upstream. Other changes in the work tree stay as they were."""
    repo = repo_of(log)
    report = SyncReport()
    report.branch = _refuse_unsafe(repo)
    if message is not None and not message.strip():
        from aidp.core.errors import InvalidInput

        raise InvalidInput("Invalid --message: it is empty; give the commit message")
    if not log.path.exists():
        raise GitError(f"No tasklist at {log.path}: run 'aidp init' first; nothing was changed")
    # Before the lock, what does not touch the work tree (every agent's write waits while
    # sync holds it, and git's processes wait for a core behind them): the upstream, how
    # to pull, and, for a merge, the fetch — the network, and most of git's processes.
    upstream = run(repo.top, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}",
                   check=False)
    if upstream is None or upstream.returncode != 0:
        upstream = None
    pull = _pull_args(repo, report.branch) if upstream is not None else None
    fetched = theirs = None
    if upstream is not None and pull is None:
        fetched = run(repo.top, "fetch", "-q", check=False)
        theirs = run(repo.top, "rev-parse", "@{u}", check=False)  # what the merge takes
    state = head_state(repo)  # (checked under the lock: HEAD unmoved)
    with log.locked():  # no aidp write lands while git rewrites the file
        ours = run(repo.top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}",
                   check=False)
        now = ours.stdout.strip() if ours is not None and ours.returncode == 0 else None
        report.committed = commit_tasklist(log, repo, message,
                                           state if now == state[0] else None)
        if upstream is None:
            return report
        report.upstream = upstream.stdout.strip()
        if report.committed or now is None:
            ours = run(repo.top, "rev-parse", "HEAD", check=False)
        merge = fetched is not None and fetched.returncode == 0
        if not merge:  # (pulled as configured, or to say why it cannot be)
            theirs = None
            pulled = run(repo.top, *(pull or ["pull", "--autostash", "--no-rebase"]),
                         check=False)
        else:  # what `git pull` merges, as it merges it
            pulled = run(repo.top, *UNDER_LOCK, "merge", "--autostash", "--no-edit",
                         "FETCH_HEAD", check=False)
        if pulled is None or pulled.returncode != 0:
            lines = ((pulled.stderr or pulled.stdout) if pulled else "").strip().splitlines()
            why = lines[-1] if lines else "git could not be run"
            kept = " (your tasklist commit is made)" if report.committed else ""
            raise GitError(f"git pull stopped: {why}{kept}; see 'git status', resolve, then "
                           "run aidp sync again")
        report.pulled = True
        if theirs is None:
            theirs = run(repo.top, "rev-parse", "@{u}", check=False)
        head = run(repo.top, "rev-parse", "HEAD", check=False)
        merged = log.read_bytes()
    # Out of the lock: git rewrites the tasklist no more (what follows reads commits and
    # pushes them), and every agent's write waits for the lock while sync holds it.
    if ours is not None and theirs is not None and ours.returncode == theirs.returncode == 0:
        _told(report, log, repo, ours.stdout.strip(), theirs.stdout.strip(), merged,
              fast_forward=head is not None and head.stdout.strip() == theirs.stdout.strip())
    if push:
        run(repo.top, "push", "-q")
        report.pushed = True
    return report
