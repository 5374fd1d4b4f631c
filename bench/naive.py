#!/usr/bin/env python3
"""The yardstick of issue 16: a naive fold of a tasklist in fifteen lines of orjson.

    python bench/naive.py .aidp/tasklist.jsonl     # prints the number of pending tasks

No validation, no damage count, no cache: what "reading the file" costs at least.
"""

import sys

import orjson

state = {}
with open(sys.argv[1], "rb") as f:
    for n, line in enumerate(f):
        try:
            r = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(r, dict) and isinstance(r.get("id"), str) and "type" not in r:
            key = (r.get("updated_at") or "", n)
            old = state.get(r["id"])
            if old is None or key > old[0]:
                state[r["id"]] = (key, r)
print(sum(1 for _key, r in state.values() if r.get("status") == "pending"))
