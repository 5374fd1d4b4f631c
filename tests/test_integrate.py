"""`aidp setup`'s merge as properties: whatever the settings hold, adding aidp's hooks
twice equals adding them once, keeps everything else, and removing them gives the
settings back exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aidp.agent.setup import integrate

EVENTS = ["SessionStart", "Stop", "PostToolUse", "UserPromptSubmit", "PreToolUse",
          "AfterAgent", "BeforeAgent", "AfterTool", "Notification"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=6))
handler = st.fixed_dictionaries(
    {"type": st.just("command"), "command": st.sampled_from(
        ["fmt", "notify-send done", "aidp hookx", "aidp tasks list", "guard --strict"])},
    optional={"timeout": st.integers(1, 60)},
)
group = st.fixed_dictionaries({"hooks": st.lists(handler, max_size=3)},
                              optional={"matcher": st.sampled_from(["Edit", "Bash", "",
                                                                    "TodoWrite"])})
hooks = st.dictionaries(st.sampled_from(EVENTS), st.lists(group, max_size=3), max_size=4)
user_settings = st.fixed_dictionaries(
    {}, optional={"hooks": hooks, "model": st.text(max_size=5),
                  "permissions": st.dictionaries(st.text(max_size=4), scalars, max_size=2)},
)


@settings(max_examples=80)
@given(user_settings, st.sampled_from(sorted(integrate.AGENTS)))
def test_setup_is_idempotent_keeps_the_rest_and_remove_restores(data, name) -> None:
    spec = integrate.AGENTS[name]
    added = integrate.merged(data, spec, remove=False)
    assert integrate.merged(added, spec, remove=False) == added
    assert integrate.installed(added, spec) == list(spec.matchers)
    assert {k: v for k, v in added.items() if k != "hooks"} == {
        k: v for k, v in data.items() if k != "hooks"}
    # Every handler that was there is still there, in its order.
    def others(settings_: dict) -> list:
        return [(event, h["command"]) for event, groups in (settings_.get("hooks") or {}).items()
                for g in groups for h in g["hooks"] if not integrate.is_ours(h, spec)]
    assert others(added) == others(data)
    removed = integrate.merged(added, spec, remove=True)
    expected = dict(data)
    if not data.get("hooks"):
        expected.pop("hooks", None)  # an empty "hooks" object is not kept
    else:
        kept = {e: gs for e, gs in data["hooks"].items() if gs}
        if kept:
            expected["hooks"] = kept
        else:
            expected.pop("hooks")
    assert removed == expected
