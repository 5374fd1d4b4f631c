"""aidp.tasklist.attributes: the cheap scan never misses a line git applies to the tasklist
(it may flag more: then git check-attr decides), and the encoding helpers."""

from __future__ import annotations

import codecs
import subprocess
from pathlib import Path

import pytest

from aidp.tasklist import attributes

PATTERNS = [
    ("", "tasklist.jsonl"), ("", "*.jsonl"), ("", "*"), ("", ".aidp/tasklist.jsonl"),
    ("", "/.aidp/tasklist.jsonl"), ("", ".aidp/*"), ("", ".aidp/**"), ("", "**/tasklist.*"),
    ("", "**/*.jsonl"), ("", ".aid[pq]/task*"), ("", "TASKLIST.JSONL"), ("", ".aidp/"),
    ("", "*.json"), ("", "other/tasklist.jsonl"), ("", "tasklist.json?"), ("", ".a*/t*"),
    (".aidp", "tasklist.jsonl"), (".aidp", "*"), (".aidp", "/tasklist.jsonl"),
    (".aidp", "sub/tasklist.jsonl"), (".aidp", "**"),
]


@pytest.mark.parametrize(("folder", "pattern"), PATTERNS)
@pytest.mark.parametrize("rule", ["-merge", "working-tree-encoding=UTF-16", "filter=x",
                                  "binary", "merge=union", "eol=lf", "text"])
def test_scan_flags_every_line_git_applies(project: Path, folder: str, pattern: str,
                                           rule: str) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".aidp").mkdir()
    (project / ".aidp" / "tasklist.jsonl").write_text("")
    # aidp's own rule, as init writes it; the line under test comes after it (or deeper)
    (project / ".gitattributes").write_text(".aidp/tasklist.jsonl merge=union diff=aidp\n")
    with (project / folder / ".gitattributes").open("a") as rules:
        rules.write(f"{pattern} {rule}\n")
    flagged = attributes.scan(project)
    applied = attributes.effective(project)
    assert applied is not None
    found, _ = attributes.overrides(applied)
    if found:  # git applies an override: the scan must have seen the line
        assert flagged == [str(Path(folder) / ".gitattributes")]
    if rule in ("merge=union", "eol=lf", "text"):  # harmless: no git needed
        assert flagged == [] and found == []


def test_scan_reads_any_bytes_and_no_fifo(project: Path) -> None:
    import os

    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitattributes").write_bytes(b"# caf\xe9\n*.jsonl -merge\n\xff\xfe x\n")
    (project / ".aidp").mkdir()
    os.mkfifo(project / ".aidp" / ".gitattributes")  # never opened to block
    assert attributes.scan(project) == [".gitattributes"]


def test_no_repository_no_scan(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # whatever repository the test's temporary folder may sit in, as git would see it
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(project.parent))
    (project / ".gitattributes").write_text("* -merge\n")
    assert attributes.scan(project) == [] and attributes.check(project).note() is None


LINE = '{"id":"t","description":"caf\u00e9"}\n'


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32",
                                   "utf-32-le", "utf-32-be"])
def test_decode_with_or_without_a_byte_order_mark(codec: str) -> None:
    data = LINE.encode(codec)  # "utf-16"/"utf-32" write a BOM, the others none
    assert attributes.sniff(data[:attributes.SNIFF_BYTES]) is not None
    assert attributes.decode(data, "UTF-16") == LINE.encode()


def test_decode_keeps_utf8_and_reads_latin1_when_named() -> None:
    assert attributes.sniff(LINE.encode()[:attributes.SNIFF_BYTES]) is None
    for damage in (b"\x00", b"x\x00", b"\x00x", b"\xff\xfe", b"\xff\xfex\x00", b"{\x00x",
                   b"\x00\x00\x00{x", b"\xfe\xff\x00\x00"):
        assert attributes.sniff(damage + b"\n") is None, damage  # damage is not UTF-16
    for lone in (b"\xfe\xff", b"\xff\xfe", b"\xff\xfe\x00\x00"):
        assert attributes.sniff(lone) is None
    assert attributes.decode(LINE.encode(), "UTF-16") == LINE.encode()
    assert attributes.decode(LINE.encode("latin-1"), "ISO-8859-1") == LINE.encode()
    assert attributes.decode(codecs.BOM_UTF8 + b"{}\n", "UTF-16").endswith(b"{}\n")
