"""What a usage error adds to its one line: the command meant by a mistyped or
reached-for word (`aidp tasks complete` → done), and a hint toward the option or form
that works (docs/guide.md, "Global options and conventions")."""

import re

# Words people reach for → the command that does it, offered only when the group has it
# (difflib's guess for `complete` was `compact`, which rewrites the file).
_SYNONYMS = {
    "complete": ("done", "tick"), "finish": ("done", "tick"), "close": ("done", "tick"),
    "check": ("tick",), "resolve": ("done",), "cancel": ("abandon",), "drop": ("abandon",),
    "remove": ("abandon", "delete"), "rm": ("abandon", "delete"), "del": ("delete",),
    "new": ("add",), "create": ("add",), "ls": ("list",), "view": ("show",),
    "info": ("show",), "begin": ("start",), "open": ("reopen",), "undo": ("reopen",),
    "unclaim": ("release",), "depend": ("block",), "comment": ("note",),
    "delete": ("abandon",), "done": ("tick",), "tick": ("done",), "unpause": ("resume",),
}
# Free-text arguments (a description, a reason, a note): an unknown option there is
# most likely text that starts with '-'.
_TEXT_ARGUMENTS = ("description", "args", "reason", "text")
# Commands of these groups typed without the group (`aidp add`) are offered with it.
_GROUPS_FOR_BARE_COMMANDS = ("tasks", "todo")


def suggest(exc: Exception) -> str | None:
    """`No such command 'complete'.` with the real commands people mean, if any: close
    spellings of a command or of a word in _SYNONYMS (`complet` → done, where difflib
    alone would offer `compact`)."""
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    found = re.match(r"No such command '([^']*)'", message)
    ctx = getattr(exc, "ctx", None)
    commands = getattr(getattr(ctx, "command", None), "commands", None)
    if not found or not commands:
        return None
    name = found.group(1)
    scored = []  # (closeness, what to suggest): a command, or the one a synonym means
    for word, command in commands.items():
        if not command.hidden:
            scored.append((_closeness(name, word, 0.6), word))
    floor = 0.0
    for word, targets in _SYNONYMS.items():
        target = next((t for t in targets if t in commands), None)
        closeness = _closeness(name, word, 0.8)  # a near miss only: `claer` is not `close`
        if target is not None and closeness:
            scored.append((closeness, target))
            floor = max(floor, closeness)  # the word people meant beats a lookalike
    ranked = sorted((s for s in scored if s[0] > 0 and s[0] >= floor), key=lambda s: -s[0])
    shown = list(dict.fromkeys(target for _, target in ranked))[:2]
    if getattr(ctx, "parent", True) is None:  # the top level: `aidp add` → `tasks add`
        for group in _GROUPS_FOR_BARE_COMMANDS:
            sub = getattr(commands.get(group), "commands", None) or {}
            if name.lower() in sub and f"{group} {name.lower()}" not in shown:
                shown.append(f"{group} {name.lower()}")
    if not shown:
        return f"No such command '{name}'."
    return f"No such command '{name}'. Did you mean " + ", ".join(f"'{s}'" for s in shown) + "?"


def _closeness(typed: str, word: str, cutoff: float) -> float:
    import difflib

    if typed.lower() == word:
        return 2.0  # the word itself
    ratio = difflib.SequenceMatcher(None, typed.lower(), word).ratio()
    return ratio if ratio >= cutoff else 0.0


# Short options that mean one thing across aidp (`tasks add -t`, `list -t`): a command
# without it is told which of its own options does that (`tasks edit -t` → --add-tag).
_SHORT_MEANINGS = {"-t": "tag", "-p": "priority", "-s": "status", "-n": "limit",
                   "-d": "description"}


def hint(exc: Exception) -> str | None:
    ctx = getattr(exc, "ctx", None)
    if ctx is None:
        return None
    option = getattr(exc, "option_name", None)
    meaning = _SHORT_MEANINGS.get(option or "")
    if meaning is not None:
        own = [name for p in getattr(ctx.command, "params", ())
               for name in getattr(p, "opts", ()) if name.startswith("--") and meaning in name]
        if own:
            return (f"{option} is --{meaning} elsewhere; here: "
                    f"{' or '.join(f'{n} {meaning.upper()[0]}' for n in own)}")
    takes_text = any(getattr(p, "nargs", 1) == -1 and getattr(p, "name", "") in _TEXT_ARGUMENTS
                     for p in getattr(ctx.command, "params", ()))
    if option and option.startswith("-") and takes_text and re.fullmatch(r"-\w+", option):
        # `aidp todo add -x`: text that starts with '-' goes after '--'
        return f"text starting with '-' goes after '--': {ctx.command_path} -- {option}"
    return f"see '{ctx.command_path} --help'"
