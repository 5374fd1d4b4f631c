"""Signals in an agent's text: `File task:`, `Update task:` and `Todo pause:`. Pure.

The grammar is the original implementation's, matched case-insensitively anywhere in
a line, several per line, in the order they appear:

    File task: "DESCRIPTION" [priority: high|medium|low] [tags: a,b]
    [```body
    BODY (Markdown, any number of lines)
    ```]
    Update task: ID status: pending|in_progress|done|abandoned [reason: "WHY"]
    Todo pause: "REASON"

The square brackets mark optional parts (they are not typed). Priority comes before
tags; tags run to the next white space and are split on commas, empty pieces dropped.

Quoted text (a description or a reason) is read the way a person would read it:

- Straight or curly double quotes open it. It may hold double quotes itself
  (`File task: "Handle the "draft" flag's default"`): it ends at the last quote of
  its stretch of line (up to the next signal) when only `priority:`, `tags:` and
  closing punctuation follow that quote; otherwise at the first quote that leaves
  the quotes inside paired and does not open a quotation of its own.
- Opened with an escaped quote (`File task: \\"Escaped\\"`, as agents that think in
  JSON print it), it ends at an escaped quote, and `\\"` and `\\\\` inside are read as `"`
  and `\\`.
- Terminal escape sequences (colours, bold) anywhere in the line are ignored, and so
  is Markdown emphasis right after the colon (`**File task:** "…"`).

Parsing never drops what it cannot use silently: an empty or over-long description is
still returned (the caller reports it); a priority other than the three, an empty
`priority:` or `tags:`, a tag `aidp tasks add -t` would refuse, text after the tags
(tags are single words: `tags: a b` files `a` and names `b`) and an empty reason are
left out and named in the signal's `problems`; a quote that is never closed, and an
`Update task:` without an id or a status, give an `Unreadable` signal naming what is
missing. The caller warns about all of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aidp.core.errors import InvalidInput
from aidp.core.model import validate_tag

PRIORITIES = ("high", "medium", "low")
_OPEN = r"(?P<{name}>\\?[\"\u201c])"
_EMPHASIS = r"[*_]*"
_HEAD_RE = re.compile(
    r"(?P<file>file\s+task\s*:" + _EMPHASIS + r"\s*" + _OPEN.format(name="file_open") + ")"
    r"|(?P<update>update\s+task\s*:" + _EMPHASIS + r"\s*(?P<ref>[^\s\"]+?)[,;]?\s+status\s*:"
    # Any word: a status the backlog does not know is reported by the loop, not ignored.
    + _EMPHASIS + r"\s*(?P<status>[A-Za-z][\w-]*)"
    r"(?:\s+(?P<reason_key>reason\s*:)" + _EMPHASIS + r"\s*" + _OPEN.format(name="reason_open")
    + "?)?)"
    # An `Update task:` the grammar above does not take (no id, no status): reported.
    r"|(?P<update_bad>update\s+task\s*:)"
    r"|(?P<pause>todo\s+pause\s*:" + _EMPHASIS + r"\s*" + _OPEN.format(name="pause_open") + ")",
    re.IGNORECASE,
)
# CSI (colours, cursor), OSC (titles, links) and two-character escapes.
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_VALUE = r"[^\s\"\u201c\u201d\\]+"
# A key may be written with nothing after it (`priority:`): the value is then "".
_TAIL_RE = re.compile(
    r"(?:\s+(?P<priority_key>priority\s*:)(?:\s*(?P<priority>(?!tags\s*:)" + _VALUE
    + r"))?)?"
    r"(?:\s+(?P<tags_key>tags\s*:)(?:\s*(?P<tags>" + _VALUE + r"))?)?",
    re.IGNORECASE,
)
# What may close a sentence or a bit of Markdown after a signal's last quote.
_CLOSING = ".,;:!?)]}*_`'\u2019>"
_VALUE_END = _CLOSING.replace("_", "")  # stripped from a priority or tags ("tags: a,b.")
_CLEAN_END_RE = re.compile(r"[\s" + re.escape(_CLOSING) + r"]*")
# What may wrap or follow an id in prose: `task_1_ab`, [task_1_ab], (ab12cd34), <…>,
# '…', **…**, and sentence punctuation; ids never start or end with any of these.
_ID_WRAPPERS = "`[]()<>'*.,;:"


@dataclass(frozen=True)
class FileTask:
    description: str
    priority: str = "medium"
    tags: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # what was written but left out, in words
    body: str | None = None  # the fenced ```body block after its line (Reader)


@dataclass(frozen=True)
class UpdateTask:
    ref: str
    status: str
    reason: str | None = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class TodoPause:
    reason: str
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unreadable:
    """A `File task:` or `Todo pause:` whose quoted text has no closing quote, or an
    `Update task:` without an id or a status: nothing can be applied, and the caller
    says so instead of dropping it silently."""

    kind: str  # "File task", "Update task" or "Todo pause"
    problem: str


Signal = FileTask | UpdateTask | TodoPause | Unreadable


def strip_ansi(text: str) -> str:
    """`text` without terminal escape sequences."""
    return _ANSI_RE.sub("", text) if "\x1b" in text else text


def parse(line: str) -> list[Signal]:
    """Every signal in one line of agent text, in order."""
    line = strip_ansi(line)
    heads = list(_HEAD_RE.finditer(line))
    found: list[Signal] = []
    for at, head in enumerate(heads):
        stretch_end = heads[at + 1].start() if at + 1 < len(heads) else len(line)
        stretch = line[head.end():stretch_end]
        signal: Signal | None
        if head["file"] is not None:
            signal = _file_task(head["file_open"], stretch)
        elif head["update"] is not None:
            signal = _update_task(head, stretch)
        elif head["update_bad"] is not None:
            signal = _unusable_update(stretch)
        else:
            quoted = _quoted(stretch, escaped=head["pause_open"].startswith("\\"))
            signal = _unclosed("Todo pause", stretch) if quoted is None else _pause(quoted[0])
        found.append(signal)
    return found


def parse_text(text: str) -> list[Signal]:
    """Every signal in a block of text, line by line (lines end at a line feed, so a
    body keeps any other character), a File task with its body."""
    reader = Reader()
    found = [signal for line in text.split("\n") for signal in reader.feed(line)]
    return found + reader.finish()


def signal_lines(text: str) -> set[str]:
    """The lines of `text` (stripped) that hold a signal: used to ignore an agent that
    merely echoes the prompt it was given, whose instructions show the grammar."""
    return {line.strip() for line in text.splitlines() if parse(line)}


def format_signal(signal: Signal) -> str:
    """The signal as an agent would print it (straight quotes, nothing escaped)."""
    if isinstance(signal, FileTask):
        text = f'File task: "{signal.description}"'
        if signal.priority != "medium":
            text += f" priority: {signal.priority}"
        if signal.tags:
            text += " tags: " + ",".join(signal.tags)
        if signal.body:
            fence = "`" * max([3, *(len(run) + 1 for run in re.findall("`{3,}", signal.body))])
            text += f"\n{fence}body\n{signal.body}\n{fence}"
        return text
    if isinstance(signal, UpdateTask):
        text = f"Update task: {signal.ref} status: {signal.status}"
        return text + (f' reason: "{signal.reason}"' if signal.reason is not None else "")
    if isinstance(signal, Unreadable):
        return f"{signal.kind}: ({signal.problem})"
    return f'Todo pause: "{signal.reason}"'


def filed_as(signal: FileTask) -> str:
    """What a File task is filed with, for the warning after a part was left out:
    `priority medium and tags a,b` (or `and no tags`)."""
    tags = f"tags {','.join(signal.tags)}" if signal.tags else "no tags"
    return f"priority {signal.priority} and {tags}"


# --- the pieces -----------------------------------------------------------------------


def _file_task(opener: str, stretch: str) -> FileTask | Unreadable:
    quoted = _quoted(stretch, escaped=opener.startswith("\\"))
    if quoted is None:
        return _unclosed("File task", stretch)
    description, rest = quoted
    tail = _TAIL_RE.match(rest)
    assert tail is not None  # every part of it is optional
    problems = []
    priority = "medium"
    if tail["priority_key"] is not None:
        given = (tail["priority"] or "").rstrip(_VALUE_END).lower()
        if given in PRIORITIES:
            priority = given
        elif not given:
            problems.append("an empty priority: (use high, medium or low)")
        else:
            problems.append(f"priority {tail['priority']!r} (use high, medium or low)")
    tags: dict[str, None] = {}
    if tail["tags_key"] is not None:
        written = (tail["tags"] or "").rstrip(_VALUE_END)
        for piece in (t.strip() for t in written.split(",")):
            if not piece:
                continue
            try:
                tags[validate_tag(piece)] = None
            except InvalidInput as exc:
                problems.append(f"tag {piece!r} ({_reason(exc)})")
        # Tags run to the next white space: what follows on the line is not read.
        after = rest[tail.end():].strip().rstrip(_VALUE_END).strip()
        if after:
            problems.append(f"{_clip(after)!r} after the tags (tags are single words "
                            "separated by commas, without spaces)")
        elif not tags and not written.strip(","):
            problems.append("an empty tags: (give tags: a,b)")
    return FileTask(description.strip(), priority, tuple(tags), tuple(problems))


def _unclosed(kind: str, stretch: str) -> Unreadable:
    return Unreadable(kind, f"no closing quote after {_clip(stretch.strip())!r} (put the "
                            f"{'description' if kind == 'File task' else 'reason'} in double "
                            "quotes)")


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _reason(exc: InvalidInput) -> str:
    """What validate_tag says after its 'Invalid tag …:' head."""
    text = str(exc)
    return text.split(": ", 1)[1] if ": " in text else text


def _update_task(head: re.Match[str], stretch: str) -> UpdateTask | Unreadable:
    ref = head["ref"].strip(_ID_WRAPPERS)
    if not ref:  # only wrappers: `` or []
        return _no_update("no task id before status:")
    status = head["status"].lower().replace("-", "_")
    reason = None
    problems: list[str] = []
    if head["reason_key"] is not None:
        quoted = None
        if head["reason_open"] is not None:
            quoted = _quoted(stretch, escaped=head["reason_open"].startswith("\\"))
        if quoted is None:
            problems.append("reason (put it in double quotes: reason: \"WHY\")")
        elif not quoted[0].strip():
            problems.append("reason (it is empty)")
        else:
            reason = quoted[0].strip()
    return UpdateTask(ref, status, reason, tuple(problems))


_STATUS_KEY_RE = re.compile(r"status\s*:" + _EMPHASIS + r"\s*(?P<value>\S*)", re.IGNORECASE)


def _unusable_update(stretch: str) -> Unreadable:
    """What an `Update task:` that does not follow the grammar lacks (an agent's
    `Update task: $AIDP_TASK status: done` with the variable empty has no id)."""
    text = stretch.strip().lstrip("*_").strip()
    key = _STATUS_KEY_RE.search(text)
    if not text:
        problem = "no task id and no status"
    elif key is None:
        problem = f"no status: after {_clip(text.split()[0])!r}"
    elif not text[:key.start()].strip(_ID_WRAPPERS + " "):
        problem = "no task id before status:"
    elif not key["value"].strip(_VALUE_END):
        problem = "an empty status:"
    else:
        problem = f"status {_clip(key['value'])!r} is no status word"
    return _no_update(problem)


def _no_update(problem: str) -> Unreadable:
    return Unreadable("Update task", f"{problem} (write: Update task: ID status: done; "
                                     "statuses: pending, in_progress, done, abandoned)")


def _pause(reason: str) -> TodoPause:
    return TodoPause(reason.strip())


def _quoted(stretch: str, *, escaped: bool) -> tuple[str, str] | None:
    """(the quoted text, what follows its closing quote) from the text right after an
    opening quote; None when no quote closes it."""
    # Tokens: plain characters, and closing-quote candidates as (start, end) offsets.
    chars: list[str] = []
    quotes: list[tuple[int, int, int]] = []  # (start, end, index in chars)
    at = 0
    while at < len(stretch):
        char = stretch[at]
        if escaped and char == "\\" and at + 1 < len(stretch) and stretch[at + 1] in "\\\"":
            if stretch[at + 1] == '"':
                quotes.append((at, at + 2, len(chars)))
                chars.append('"')
            else:
                chars.append("\\")
            at += 2
            continue
        if not escaped and char in "\"\u201d":  # an opening curly quote never closes
            quotes.append((at, at + 1, len(chars)))
        chars.append(char)
        at += 1
    if not quotes:
        return None
    chosen = _closing(stretch, chars, quotes)
    _start, end, index = quotes[chosen]
    return "".join(chars[:index]), stretch[end:]


def _closing(stretch: str, chars: list[str], quotes: list[tuple[int, int, int]]) -> int:
    """Which quote closes the quoted text (see the module's docstring)."""
    last_end = quotes[-1][1]
    tail = _TAIL_RE.match(stretch, last_end)
    assert tail is not None
    if _CLEAN_END_RE.fullmatch(stretch, tail.end()):
        return len(quotes) - 1
    for number, (_start, _end, index) in enumerate(quotes):
        before = chars[index - 1] if index > 0 else ""
        after = chars[index + 1] if index + 1 < len(chars) else ""
        opens = before.isspace() and after != "" and not after.isspace()
        if number % 2 == 0 and not opens:
            return number
    return 0


# --- a File task's body: a fenced block after its line -------------------------------------

# ```body (or ~~~body, or a longer fence), indented at most 3 spaces, as Markdown opens a
# fenced code block whose info string is `body`.
_FENCE_RE = re.compile(r"(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*body[ \t]*",
                       re.IGNORECASE)


class Reader:
    """Signals in an agent's text fed a line at a time (`aidp run` reads the agent's
    output as it comes; a hook, the final reply), with the body a `File task:` may
    carry: a fenced code block whose info string is `body`, on the lines right after
    the signal's line (blank lines between are fine):

        File task: "Crash on an empty config" priority: high
        ```body
        Steps: run `HOME= aidp init`.
        ```

    The block is Markdown's: it ends at a line of the same fence character at least
    as long (a body holding ``` itself uses ````); the indentation of its opening
    fence is taken off its lines. A File task is handed back once it is known whether
    a body follows (the next line that is not blank, or `finish`). A block that is
    never closed takes the rest of the text, and says so in `problems`; a body aidp
    would refuse (over 64 KiB, control characters) is left out and named there."""

    def __init__(self) -> None:
        self._pending: FileTask | None = None  # its body may follow
        self._fence: str | None = None  # inside its body block: the opening fence
        self._indent = 0
        self._lines: list[str] = []

    def feed(self, line: str, *, echoed: bool = False) -> list[Signal]:
        """The signals `line` completes, in order. `echoed`: a line of aidp's own prompt
        the agent repeated (its grammar), never read as a signal or a body."""
        text = strip_ansi(line.rstrip("\r\n"))
        if self._fence is not None:
            if _closes(text, self._fence):
                return [self._release(ended=True)]
            self._lines.append(_outdented(text, self._indent))
            return []
        out: list[Signal] = []
        if self._pending is not None:
            if not text.strip() and not echoed:
                return []
            opening = _FENCE_RE.fullmatch(text)
            if opening is not None and not echoed:
                self._fence, self._indent = opening["fence"], len(opening["indent"])
                return []
            out.append(self._release())
        if echoed:
            return out
        found = parse(text)
        last = found[-1] if found else None
        if isinstance(last, FileTask):
            self._pending = last
            found.pop()
        return out + found

    def finish(self) -> list[Signal]:
        """The File task still waiting for its body, at the end of the text."""
        return [] if self._pending is None else [self._release(ended=self._fence is None)]

    def _release(self, *, ended: bool = False) -> FileTask:
        from aidp.backlog.details import clean_body  # only once a body is there

        signal, self._pending = self._pending, None
        assert signal is not None
        if self._fence is None:
            return signal
        self._fence = None
        problems = list(signal.problems)
        if not ended:
            problems.append("the closing fence of its body block (filed with the text "
                            "up to the end of the reply)")
        try:
            body = clean_body("\n".join(self._lines)) or None
        except InvalidInput as exc:
            body = None
            problems.append(f"its body ({' '.join(str(exc).split())})")
        self._lines = []
        return FileTask(signal.description, signal.priority, signal.tags, tuple(problems), body)


def _closes(text: str, fence: str) -> bool:
    """Whether `text` closes a block opened with `fence`: only the same character, at
    least as many, indented at most 3 spaces."""
    stripped = text.strip()
    return (len(text) - len(text.lstrip(" ")) <= 3 and len(stripped) >= len(fence)
            and set(stripped) == {fence[0]})


def _outdented(text: str, indent: int) -> str:
    """A line of the block without (up to) the opening fence's indentation."""
    cut = len(text) - len(text.lstrip(" "))
    return text[min(cut, indent):]

