"""The reliability suite's opt-in: `slow` tests run only with AIDP_SLOW=1."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

SLOW = os.environ.get("AIDP_SLOW") == "1"

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path; the
# tests here share reliability_support.py, so this folder goes on it.
sys.path.insert(0, str(Path(__file__).parent))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`slow` tests (long crash loops, stress, tmpfs) run only with AIDP_SLOW=1."""
    if SLOW:
        return
    skip = pytest.mark.skip(reason="long-running variant: set AIDP_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
