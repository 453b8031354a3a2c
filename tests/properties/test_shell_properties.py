"""The shell policy judges the words its own parser finds; if bash split a command line differently, a person
would approve one thing and bash would run another. For generated command lines that the policy lets a person
approve as a plain (not destructive) command, real bash must see exactly the words the parser saw."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.agent.tools.shell_policy import judge
from bot.agent.tools.shell_syntax import Unparseable, parse

PIECES = st.sampled_from(["a", "b", "-n", " ", "  ", "'", '"', "\\", "\\ ", "$", "${a}", "$(", ")", "`", ";",
                          "|", "&", ">", "<", "#", "~", "*", "?", "[", "]", "{", "}", "=", "a=b", "!", "\t",
                          "'a b'", '"a b"', "\\'", '\\"', "\\\\"])
EMPTY = Path(tempfile.mkdtemp(prefix="bothub-shell-"))  # bash runs here: a glob matches nothing
ARGS = st.lists(PIECES, min_size=1, max_size=12).map("".join)


def bash_words(args: str, cwd: Path) -> list[str] | None:
    """The arguments bash passes to a command written `echo <args>`; None where bash refuses the line."""
    script = "argv() { for a in \"$@\"; do printf '%s\\0' \"$a\"; done; }\nargv " + args  # bash -c, as the tool
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], cwd=cwd, capture_output=True,
                          timeout=10, env={"PATH": "/usr/bin:/bin"})
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


@settings(max_examples=150, deadline=None)
@given(ARGS)
def test_no_command_approved_as_plain_is_split_differently_by_bash(args: str) -> None:
    command = f"echo {args}"
    if judge(command).refusal is not None or judge(command).destructive:
        return  # refused, or asked about with a loud warning: nobody approves it as plain
    try:
        commands = parse(command)
    except Unparseable:  # judge refused it above
        raise AssertionError("an unreadable command was not refused") from None
    if len(commands) != 1 or commands[0].redirects:
        return  # several commands or a redirection: each is judged on its own, not by argv
    words = commands[0].words
    if any(w.dynamic or w.glob or w.tilde for w in words):
        return  # the policy knows these change at run time
    seen = bash_words(args, EMPTY)
    assert seen is None or seen == [w.text for w in words[1:]], (command, seen)  # None: bash runs nothing

