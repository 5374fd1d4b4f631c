"""The signal grammar: File task / Update task / Todo pause in agent text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aidp.agent.signals import (
    FileTask,
    TodoPause,
    Unreadable,
    UpdateTask,
    format_signal,
    parse,
    parse_text,
    signal_lines,
    strip_ansi,
)


def test_file_task_with_priority_and_tags() -> None:
    assert parse('File task: "Fix the parser" priority: high tags: parser,bugs') == [
        FileTask("Fix the parser", "high", ("parser", "bugs"))
    ]


def test_file_task_defaults_to_medium_without_tags() -> None:
    assert parse('File task: "Write docs"') == [FileTask("Write docs", "medium", ())]


def test_case_insensitive_and_anywhere_in_a_line() -> None:
    line = 'So I will note it — FILE TASK: "Cache the index" PRIORITY: LOW TAGS: perf and move on.'
    # Tags run to the next white space: the prose after them is named, not read as tags.
    assert parse(line) == [FileTask("Cache the index", "low", ("perf",), (AFTER_TAGS % "and move on",))]


def test_several_signals_in_one_line_in_order() -> None:
    line = ('file task: "One" then File Task: "Two" priority: high '
            'and Update task: ab12cd34 status: done; Todo pause: "need a key"')
    assert parse(line) == [
        FileTask("One"),
        FileTask("Two", "high"),
        UpdateTask("ab12cd34", "done"),
        TodoPause("need a key"),
    ]


AFTER_TAGS = "%r after the tags (tags are single words separated by commas, without spaces)"


def test_tags_end_at_white_space_and_drop_empty_pieces() -> None:
    assert parse('File task: "T" tags: a,,b,') == [FileTask("T", "medium", ("a", "b"))]
    assert parse('File task: "T" tags: ,a,,b, c') == [
        FileTask("T", "medium", ("a", "b"), (AFTER_TAGS % "c",))]


def test_what_a_signal_leaves_out_is_named() -> None:
    """Issue 14: nothing is changed or dropped silently (review14 item 5)."""
    assert parse('File task: "T" tags: ,,a b,') == [
        FileTask("T", "medium", ("a",), (AFTER_TAGS % "b",))]
    assert parse('File task: "T" tags: ok,b@d tag,') == [
        FileTask("T", "medium", ("ok", "b@d"), (AFTER_TAGS % "tag",))]
    assert parse('File task: "T" priority:') == [
        FileTask("T", "medium", (), ("an empty priority: (use high, medium or low)",))]
    assert parse('File task: "T" priority: tags: a') == [
        FileTask("T", "medium", ("a",), ("an empty priority: (use high, medium or low)",))]
    assert parse('File task: "T" tags:') == [
        FileTask("T", "medium", (), ("an empty tags: (give tags: a,b)",))]
    assert parse('File task: "T" tags: ,,') == [
        FileTask("T", "medium", (), ("an empty tags: (give tags: a,b)",))]
    long_tag = "x" * 200
    [signal] = parse(f'File task: "T" tags: a,{long_tag}')
    assert signal.tags == ("a",)
    assert signal.problems[0].startswith(f"tag {long_tag!r} (use 1–")


def test_an_unclosed_quote_is_named_not_dropped() -> None:
    assert parse('File task: "No quotes here') == [Unreadable(
        "File task", "no closing quote after 'No quotes here' (put the description in "
                     "double quotes)")]
    assert parse('Todo pause: "waiting') == [Unreadable(
        "Todo pause", "no closing quote after 'waiting' (put the reason in double quotes)")]
    # a closed one before it on the line is still read
    assert parse('File task: "A" and File task: "B')[0] == FileTask("A", problems=())


def test_tags_before_priority_are_not_the_grammar() -> None:
    # Priority comes before tags: after tags nothing else is read, and that is said.
    assert parse('File task: "T" tags: a priority: high') == [
        FileTask("T", "medium", ("a",), (AFTER_TAGS % "priority: high",))]


def test_an_unknown_priority_is_left_out_and_named_tags_still_read() -> None:
    assert parse('File task: "T" priority: urgent tags: a') == [
        FileTask("T", "medium", ("a",), ("priority 'urgent' (use high, medium or low)",))
    ]


def test_empty_description_is_returned_for_a_warning() -> None:
    assert parse('File task: ""') == [FileTask("")]
    assert parse('File task: "   "') == [FileTask("")]


def test_curly_quotes() -> None:
    assert parse("File task: \u201cUse curly quotes\u201d priority: low") == [
        FileTask("Use curly quotes", "low")
    ]


@pytest.mark.parametrize(
    ("line", "description"),
    [
        ('File task: "Handle the "draft" flag\'s default"', 'Handle the "draft" flag\'s default'),
        ('File task: "Say "hi" to "them"" priority: high', 'Say "hi" to "them"'),
        ('File task: "Support 12" screens"', 'Support 12" screens'),
        ('File task: "Handle the "draft" flag" in the docs', 'Handle the "draft" flag'),
        ('File task: "Cache it" because "slow" matters.', "Cache it"),
        ('- `File task: "Quote "x" in code"`', 'Quote "x" in code'),
        ('File task: "Plain \\"backslash\\" kept"', 'Plain \\"backslash\\" kept'),
    ],
)
def test_a_description_may_hold_double_quotes(line: str, description: str) -> None:
    assert [s.description for s in parse(line) if isinstance(s, FileTask)] == [description]


def test_escaped_quotes_as_json_minded_agents_print_them() -> None:
    assert parse('File task: \\"Escaped\\"') == [FileTask("Escaped")]
    assert parse('File task: \\"Say \\\\\\"hi\\\\\\"\\" priority: low tags: a') == [
        FileTask('Say \\"hi\\"', "low", ("a",))
    ]
    assert parse('Todo pause: \\"need \\"prod\\" access\\"') == [TodoPause('need "prod" access')]


def test_terminal_escapes_around_and_inside_a_signal_are_ignored() -> None:
    line = '\x1b[1;32mFile task:\x1b[0m "\x1b[33mColour it\x1b[0m" priority: \x1b[1mhigh\x1b[0m'
    assert parse(line) == [FileTask("Colour it", "high")]
    assert strip_ansi("\x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[2K") == "link "


def test_markdown_emphasis_after_the_colon() -> None:
    assert parse('**File task:** "Bold it" priority: low') == [FileTask("Bold it", "low")]
    assert parse('**Todo pause:** "need a key"') == [TodoPause("need a key")]


def test_an_unquoted_or_empty_reason_is_left_out_and_named() -> None:
    assert parse('Update task: ca35 status: abandoned reason: ""') == [
        UpdateTask("ca35", "abandoned", None, ("reason (it is empty)",))
    ]
    assert parse("Update task: ca35 status: abandoned reason: dup") == [
        UpdateTask("ca35", "abandoned", None, ('reason (put it in double quotes: reason: "WHY")',))
    ]


def test_an_unclosed_quote_is_not_applied_but_named() -> None:
    [signal] = parse('File task: "never closed')
    assert isinstance(signal, Unreadable) and "'never closed'" in signal.problem


def test_without_quotes_is_no_signal() -> None:
    assert parse("File task: fix it") == []
    assert parse("Todo pause: no quotes") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Update task: task_1795314333_ca351966 status: in_progress",
         UpdateTask("task_1795314333_ca351966", "in_progress")),
        ("update task: ca35 status: In-Progress", UpdateTask("ca35", "in_progress")),
        ("Update task: `ca351966` status: done", UpdateTask("ca351966", "done")),
        ("Update task: [ca351966], status: pending", UpdateTask("ca351966", "pending")),
        ("Update task: **ca351966**. status: done", UpdateTask("ca351966", "done")),
        ('Update task: ca35 status: abandoned reason: "duplicate of #12"',
         UpdateTask("ca35", "abandoned", "duplicate of #12")),
    ],
)
def test_update_task(text: str, expected: UpdateTask) -> None:
    assert parse(text) == [expected]


@pytest.mark.parametrize(("text", "problem"), [
    ("Update task:  status: done", "no task id before status:"),
    ("Update task: [] status: done", "no task id before status:"),
    ("Update task: ca35", "no status: after 'ca35'"),
    ("Update task: ca35 status:", "an empty status:"),
    ("**Update task:**", "no task id and no status"),
])
def test_an_update_without_an_id_or_a_status_is_named_not_dropped(text: str,
                                                                   problem: str) -> None:
    [signal] = parse(text)
    assert isinstance(signal, Unreadable) and signal.kind == "Update task"
    assert signal.problem.startswith(problem + " (write: Update task: ID status: done;")


def test_update_task_with_an_unknown_status_is_parsed_for_the_loop_to_report() -> None:
    assert parse("Update task: ca35 status: finished") == [UpdateTask("ca35", "finished")]


def test_todo_pause() -> None:
    assert parse('Blocked. Todo pause: "waiting for the API key"') == [
        TodoPause("waiting for the API key")
    ]


def test_parse_text_reads_every_line() -> None:
    text = 'a\nFile task: "X"\nb Todo pause: "Y"\n'
    assert parse_text(text) == [FileTask("X"), TodoPause("Y")]


def test_signal_lines_are_the_lines_holding_signals() -> None:
    text = 'intro\n  File task: "DESCRIPTION" priority: high\nend'
    assert signal_lines(text) == {'File task: "DESCRIPTION" priority: high'}


# --- properties ---------------------------------------------------------------------

# Any one-line description: quotes of every kind, backslashes, Markdown, grammar words.
# Left out: line breaks and terminal escapes (a signal is one line; escapes are
# stripped), and text that itself starts another signal (`File task: "` inside a
# description really is a second signal).
descriptions = st.lists(
    st.one_of(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x1b"),
        st.sampled_from(['"', "\u201c", "\u201d", "\\", "'", " priority: ", " tags: ", "*",
                         " high", ",", "."]),
    ),
    min_size=1, max_size=40,
).map("".join).filter(lambda s: s.strip() and not parse(f"x {s} x") and not parse(f'x {s}"'))
tags = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=10),
                max_size=4, unique=True)
priorities = st.sampled_from(["high", "medium", "low"])
prose = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"),
                                       blacklist_characters='"\u201c\u201d'), max_size=30)


@settings(max_examples=300)
@given(descriptions, priorities, tags)
def test_any_description_round_trips_through_the_printed_signal(description: str, priority: str,
                                                                 tag_list: list[str]) -> None:
    signal = FileTask(description.strip(), priority, tuple(tag_list))
    assert parse(format_signal(signal)) == [signal]


@settings(max_examples=200)
@given(descriptions, priorities)
def test_any_description_round_trips_through_the_escaped_form(description: str,
                                                              priority: str) -> None:
    escaped = description.replace("\\", "\\\\").replace('"', '\\"')
    line = f'File task: \\"{escaped}\\" priority: {priority}'
    assert parse(line) == [FileTask(description.strip(), priority)]


@settings(max_examples=200)
@given(descriptions, priorities, tags, prose)
def test_a_signal_after_prose_is_found(description: str, priority: str, tag_list: list[str],
                                       before: str) -> None:
    signal = FileTask(description.strip(), priority, tuple(tag_list))
    found = parse(f"{before} {format_signal(signal)}")
    assert found[-1:] == [signal]


@given(st.text(max_size=300))
def test_parse_never_fails_and_only_returns_usable_values(text: str) -> None:
    for signal in parse_text(text):
        if isinstance(signal, FileTask):
            assert signal.priority in ("high", "medium", "low")
            assert all(tag and "," not in tag and not any(c.isspace() for c in tag)
                       for tag in signal.tags)
            assert "\x1b" not in signal.description
        elif isinstance(signal, UpdateTask):
            assert signal.ref and not any(c.isspace() for c in signal.ref)
            assert signal.reason is None or signal.reason.strip()
        elif isinstance(signal, Unreadable):
            assert signal.kind in ("File task", "Update task", "Todo pause") and signal.problem
        else:
            assert isinstance(signal, TodoPause)


# --- a File task's body: a fenced block after its line ------------------------------------


def test_a_body_block_right_after_the_signal_is_its_body() -> None:
    from aidp.agent.signals import Reader

    text = """I found two things.
File task: "Crash on an empty config" priority: high tags: cli

```body
## Steps
  1. run `HOME= aidp init`
# a heading, not a comment
```
Update task: ab12 status: done
File task: "No body here"
Just prose.
"""
    found = parse_text(text)
    assert found == [
        FileTask("Crash on an empty config", "high", ("cli",),
                 body="## Steps\n  1. run `HOME= aidp init`\n# a heading, not a comment"),
        UpdateTask("ab12", "done"),
        FileTask("No body here"),
    ]
    # fed a line at a time (aidp run), the File task comes once its body is known
    reader = Reader()
    fed = [(n, s) for n, line in enumerate(text.splitlines()) for s in reader.feed(line)]
    assert [n for n, _s in fed] == [7, 8, 10] and reader.finish() == []


@pytest.mark.parametrize(("block", "body"), [
    ("~~~body\nx\n~~~", "x"),
    ("````Body\na\n```py\nz\n```\n````", "a\n```py\nz\n```"),  # a longer fence holds ```
    ("  ```body\n  indented\n    more\n  ```", "indented\n  more"),
    ("```body\n\n\ntext\n\n```", "text"),
    ("```body\n```", None),  # empty: no body
])
def test_body_fences_as_markdown_reads_them(block: str, body: str | None) -> None:
    assert parse_text(f'File task: "T"\n{block}\n') == [FileTask("T", body=body)]


def test_a_block_without_the_body_tag_or_after_prose_is_not_a_body() -> None:
    assert parse_text('File task: "T"\n```python\nx\n```') == [FileTask("T")]
    assert parse_text('File task: "T"\nSee:\n```body\nx\n```') == [FileTask("T")]
    # two signals on the line: the body is the last one's
    assert parse_text('File task: "A" File task: "B"\n```body\nb\n```') == [
        FileTask("A"), FileTask("B", body="b")]


def test_an_unclosed_or_refused_body_is_named_never_dropped_silently() -> None:
    (unclosed,) = parse_text('File task: "T"\n```body\nline one\nline two')
    assert unclosed.body == "line one\nline two"
    assert unclosed.problems == ("the closing fence of its body block (filed with the text "
                                 "up to the end of the reply)",)
    (huge,) = parse_text('File task: "T"\n```body\n' + "x" * 70_000 + "\n```")
    assert huge.body is None and huge.problems[0].startswith(
        "its body (Invalid body: 70,000 bytes; at most 64 KiB")


def test_an_echoed_line_is_no_signal_and_ends_a_waiting_one() -> None:
    from aidp.agent.signals import Reader

    reader = Reader()
    assert reader.feed('File task: "Real"') == []
    assert reader.feed('File task: "DESCRIPTION"', echoed=True) == [FileTask("Real")]
    assert reader.feed("```body") == [] and reader.feed("x") == []
    assert reader.finish() == []


@settings(max_examples=200)
@given(descriptions, st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")) | st.just("\n")
                             | st.just("`"), max_size=200))
def test_any_body_round_trips_through_the_printed_signal(description: str, body: str) -> None:
    from aidp.backlog.details import clean_body

    expected = clean_body(body) or None
    signal = FileTask(description.strip(), body=expected)
    assert parse_text(format_signal(signal)) == [signal]
