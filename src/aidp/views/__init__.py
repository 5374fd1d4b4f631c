"""What people see. Nothing here reads the tasklist: it is handed values.

    render.py  human text (task tables, the TODO list text the agent sees) and
               json/jsonl/ids/markdown/csv; rich imported lazily
    pager.py   long output on a terminal through AIDP_PAGER/PAGER/less
    charts.py  `tasks stats` as terminal charts
    page.py    `aidp report --html`: the self-contained page; svg.py its charts
"""
