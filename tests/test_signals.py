"""The signal grammar: File task / Update task / Todo pause in agent text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aidp.signals import FileTask, TodoPause, UpdateTask, parse, parse_text, signal_lines


def test_file_task_with_priority_and_tags() -> None:
    assert parse('File task: "Fix the parser" priority: high tags: parser,bugs') == [
        FileTask("Fix the parser", "high", ("parser", "bugs"))
    ]


def test_file_task_defaults_to_medium_without_tags() -> None:
    assert parse('File task: "Write docs"') == [FileTask("Write docs", "medium", ())]


def test_case_insensitive_and_anywhere_in_a_line() -> None:
    line = 'So I will note it — FILE TASK: "Cache the index" PRIORITY: LOW TAGS: perf and move on.'
    assert parse(line) == [FileTask("Cache the index", "low", ("perf",))]


def test_several_signals_in_one_line_in_order() -> None:
    line = ('file task: "One" then File Task: "Two" priority: high '
            'and Update task: ab12cd34 status: done; Todo pause: "need a key"')
    assert parse(line) == [
        FileTask("One"),
        FileTask("Two", "high"),
        UpdateTask("ab12cd34", "done"),
        TodoPause("need a key"),
    ]


def test_tags_end_at_white_space_and_drop_empty_pieces() -> None:
    assert parse('File task: "T" tags: ,a,,b, c') == [FileTask("T", "medium", ("a", "b"))]


def test_tags_before_priority_are_not_the_grammar() -> None:
    # Priority comes before tags: after tags nothing else is read.
    assert parse('File task: "T" tags: a priority: high') == [FileTask("T", "medium", ("a",))]


def test_unknown_priority_is_not_read() -> None:
    assert parse('File task: "T" priority: urgent tags: a') == [FileTask("T")]


def test_empty_description_is_returned_for_a_warning() -> None:
    assert parse('File task: ""') == [FileTask("")]
    assert parse('File task: "   "') == [FileTask("")]


def test_curly_quotes() -> None:
    assert parse("File task: \u201cUse curly quotes\u201d priority: low") == [
        FileTask("Use curly quotes", "low")
    ]


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

descriptions = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters='"\u201c\u201d'),
    min_size=1, max_size=80,
).filter(lambda s: s.strip())
tags = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=10),
                max_size=4, unique=True)
priorities = st.sampled_from(["high", "medium", "low"])
prose = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=30)


@given(descriptions, priorities, tags, prose, prose)
def test_file_task_round_trips_anywhere_in_a_line(description: str, priority: str,
                                                  tag_list: list[str], before: str,
                                                  after: str) -> None:
    signal = f'File task: "{description}" priority: {priority}'
    if tag_list:
        signal += " tags: " + ",".join(tag_list)
    found = parse(f"{before} {signal} {after}".replace("\n", " "))
    ours = [s for s in found if isinstance(s, FileTask) and s.description == description.strip()]
    assert ours and ours[0].priority == priority
    assert ours[0].tags == tuple(tag_list)


@given(st.text(max_size=300))
def test_parse_never_fails_and_only_returns_valid_values(text: str) -> None:
    for signal in parse_text(text):
        if isinstance(signal, FileTask):
            assert signal.priority in ("high", "medium", "low")
            assert '"' not in signal.description
            assert all(tag and "," not in tag and not any(c.isspace() for c in tag)
                       for tag in signal.tags)
        elif isinstance(signal, UpdateTask):
            assert signal.status in ("pending", "in_progress", "done", "abandoned")
            assert signal.ref and not any(c.isspace() for c in signal.ref)
        else:
            assert isinstance(signal, TodoPause)
