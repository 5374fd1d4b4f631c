"""Helpers shared by the reliability tests: hypothesis budgets, child process
environments, and loaders that look at a tasklist byte by byte."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson

import aidp

SLOW = os.environ.get("AIDP_SLOW") == "1"
# Children import the very aidp this process imported (a mutated copy, when checking
# that a test can fail, is put first on PYTHONPATH).
SRC = Path(aidp.__file__).resolve().parents[1]


def examples(default: int, slow: int) -> int:
    """A hypothesis example budget: modest in CI, larger with AIDP_SLOW=1."""
    return slow if SLOW else default


def child_env(project: Path, **extra: str) -> dict[str, str]:
    """The environment of an `aidp` child process working on `project`."""
    env = {**os.environ, "AIDP_DIR": str(project), "PYTHONPATH": str(SRC)}
    env.pop("AIDP_SESSION", None)
    env.update(extra)
    return env


def python() -> str:
    return sys.executable


def log_lines(path: Path) -> list[bytes]:
    """The file's lines without their newlines (a torn last line included)."""
    data = path.read_bytes() if path.exists() else b""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def parsed_lines(path: Path) -> tuple[list[dict], list[bytes]]:
    """(valid JSON objects, damaged lines) of a tasklist, blank lines ignored."""
    good: list[dict] = []
    bad: list[bytes] = []
    for raw in log_lines(path):
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            bad.append(raw)
            continue
        (good if isinstance(value, dict) else bad).append(value if isinstance(value, dict) else raw)
    return good, bad
