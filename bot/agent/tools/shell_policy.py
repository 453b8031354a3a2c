"""Which shell commands are refused outright, and which ask with a loud warning (seed 001).

Every simple command the parser finds — inside `$( )`, backticks, subshells and pipelines too — is
judged by its program's basename after resolving the assignments visible in the line. The lists are
data (program → reason). This is a guard against mistakes and obvious abuse; the sandbox (see
`sandbox.py`) is what actually contains a command that gets through.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from bot.agent.tools.shell_syntax import SimpleCommand, Unparseable, Word, parse
from bot.agent.visible import hidden

_SHELL = "starts a nested shell, whose commands cannot be checked"
_AS_ROOT = "runs as another user"
_DISKS = "formats, partitions or mounts disks"
_POWER = "shuts down or restarts the machine"
_KERNEL = "changes the running kernel"

BLOCKED_PROGRAMS: dict[str, str] = {
    **dict.fromkeys(("sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "script"), _SHELL),
    **dict.fromkeys(("sudo", "su", "doas", "pkexec", "runuser", "setpriv"), _AS_ROOT),
    "eval": "runs text as a command (eval)",
    "exec": "replaces the shell with another program (exec)",
    "source": "runs a script inside the shell (source)",
    ".": "runs a script inside the shell (.)",
    "watch": "runs its argument through a shell (watch)",
    **dict.fromkeys(("mkfs", "fdisk", "sfdisk", "cfdisk", "parted", "wipefs", "mkswap", "swapon", "swapoff",
                     "mount", "umount", "losetup", "cryptsetup"), _DISKS),
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff", "init", "telinit", "kexec"), _POWER),
    **dict.fromkeys(("insmod", "rmmod", "modprobe", "sysctl"), _KERNEL),
    **dict.fromkeys(("chroot", "nsenter", "unshare", "capsh"), "changes namespaces or root (a sandbox escape)"),
    "killall5": "kills every process",
}

# Programs that run another program: option → takes a value, and how many positional words precede it.
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "xargs": (frozenset({"-I", "-n", "-L", "-P", "-s", "-d", "-E", "-a"}), 0),
}
INTERPRETERS = re.compile(r"(?:python|perl|ruby|node|nodejs|php|lua|tclsh|Rscript|deno|bun)[\d.]*")
DESTRUCTIVE_PROGRAMS = frozenset({"rm", "rmdir", "mv", "chmod", "chown", "chgrp", "truncate", "shred", "unlink",
                                  "dd"})
_SAFE_WRITE_TARGETS = re.compile(r"/dev/(?:null|stdout|stderr|fd/\d+)|/tmp/.*")
_OVERWRITES = frozenset({">", ">|", "&>", "<>"})


@dataclass(frozen=True)
class Judgement:
    refusal: str | None  # why the command must not run; None when a person may approve it
    destructive: bool = False  # ask with a loud warning


def judge(command: str) -> Judgement:
    """Refuse what is blocked, hidden or unreadable; otherwise say whether it deletes or overwrites."""
    if reason := hidden_characters(command):
        return Judgement(reason)
    try:
        commands = parse(command)
    except Unparseable as e:
        return Judgement(f"the safety check cannot read it: {e}")
    destructive = False
    for simple in commands:
        reason, loud = _judge_simple(simple)
        if reason:
            return Judgement(reason)
        destructive = destructive or loud
    return Judgement(None, destructive)


def hidden_characters(command: str) -> str | None:
    """Invisible, control and line-separating code points (bot/agent/visible.py: by category) can make the
    approval prompt show something other than what runs. Newlines separate commands and are kept."""
    found = hidden(command)
    if not found:
        return None
    return f"it contains invisible or control characters ({', '.join(found)}) that could hide what it does"


def _judge_simple(command: SimpleCommand) -> tuple[str | None, bool]:
    destructive = False
    for redirect in command.redirects:
        reason, loud = _judge_redirect(redirect.op, redirect.target)
        if reason:
            return reason, False
        destructive = destructive or loud
    words = command.words
    while words:
        program = words[0]
        if program.dynamic or program.glob:
            return "it runs a program whose name is only known when it runs", False
        name = PurePosixPath(program.text).name or program.text
        args = words[1:]
        if reason := BLOCKED_PROGRAMS.get(name) or BLOCKED_PROGRAMS.get(name.split(".")[0]):
            return f"{name}: {reason}", False
        if command.piped_into and INTERPRETERS.fullmatch(name):
            return f"{name}: pipes text into an interpreter, which runs it as code", False
        if name in WRAPPERS:
            if name == "env" and any(a.text.startswith(("-S", "--split-string")) for a in args):
                return "env -S: splits a string into a command that cannot be checked", False
            if name == "command" and any(a.text in ("-v", "-V") for a in args):
                return None, destructive
            words = _wrapped(name, args)
            continue
        judge_args = _ARGUMENT_JUDGES.get(name)
        reason, loud = judge_args(args) if judge_args else (None, False)
        return reason and f"{name}: {reason}", destructive or loud or name in DESTRUCTIVE_PROGRAMS
    return None, destructive


def _wrapped(wrapper: str, args: list[Word]) -> list[Word]:
    """The command a wrapper such as `env`, `nice` or `xargs` runs, with the wrapper's own words dropped."""
    takes_value, positional = WRAPPERS[wrapper]
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if text in takes_value:
            i += 2
        elif text.startswith("-") or (wrapper == "env" and "=" in text and not text.startswith("=")):
            i += 1
        else:
            break
    return args[i + positional:]


def _leaves_folder(word: Word) -> bool:
    """The path is absolute, in a home folder, climbs with `..`, or is only known at run time."""
    return word.dynamic or word.tilde or word.text.startswith("/") or ".." in PurePosixPath(word.text).parts


def _judge_redirect(op: str, target: Word) -> tuple[str | None, bool]:
    if op in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
        return None, False  # duplicates a file descriptor (2>&1)
    if op.startswith("<") and op != "<>":
        return None, False
    if target.text.startswith("/dev/") and not _SAFE_WRITE_TARGETS.fullmatch(target.text):
        return f"writes onto the device {target.text}", False
    if not target.dynamic and _SAFE_WRITE_TARGETS.fullmatch(target.text):
        return None, False
    if _leaves_folder(target):
        return f"writes to {target.text or 'a path known only at run time'}, outside the chat's folder", False
    return None, op in _OVERWRITES


def _operands(args: list[Word]) -> tuple[list[str], list[Word]]:
    """(options, operands), honouring `--`."""
    options: list[str] = []
    for i, arg in enumerate(args):
        if arg.text == "--":
            return options, args[i + 1:]
        if not arg.text.startswith("-") or arg.text == "-":
            return options, args[i:]
        options.append(arg.text)
    return options, []


def _judge_rm(args: list[Word]) -> tuple[str | None, bool]:
    options = [a.text for a in args if a.text.startswith("-")]
    if "--no-preserve-root" in options:
        return "--no-preserve-root", True
    recursive = any(o == "--recursive" or (not o.startswith("--") and ("r" in o or "R" in o)) for o in options)
    for target in (a for a in args if not a.text.startswith("-")):
        if _leaves_folder(target):
            return f"deletes {target.text or 'a path known only at run time'}, outside the chat's folder", True
        if recursive and target.text.rstrip("/") in ("", ".", "*", "./*", ".*", "./.*"):
            return "deletes everything in the chat's folder", True
    return None, True


def _judge_paths(verb: str, skip: int) -> Callable[[list[Word]], tuple[str | None, bool]]:
    def judge_paths(args: list[Word]) -> tuple[str | None, bool]:
        _, operands = _operands(args)
        for target in operands[skip:]:
            if _leaves_folder(target):
                return f"{verb} {target.text or 'a path known only at run time'}, outside the chat's folder", True
        return None, False
    return judge_paths


def _judge_dd(args: list[Word]) -> tuple[str | None, bool]:
    for arg in args:
        if arg.text.startswith("of="):
            reason, _ = _judge_redirect(">", Word(arg.text[3:], arg.dynamic, arg.glob, arg.tilde))
            if reason:
                return reason, True
    return None, True


def _judge_kill(args: list[Word]) -> tuple[str | None, bool]:
    """`kill -9 -1` and `kill -- -1` signal every process: the first option is the signal, the rest are pids."""
    i = 0
    if args and args[0].text in ("-s", "-n"):
        i = 2
    elif args and args[0].text.startswith("-") and args[0].text != "--":
        i = 1
    if any(a.text in ("-1", "-0") or a.dynamic for a in args[i:] if a.text != "--"):
        return "signals every process", False
    return None, False


def _judge_find(args: list[Word]) -> tuple[str | None, bool]:
    starts = []
    for arg in args:
        if arg.text.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    destructive = any(a.text == "-delete" for a in args)
    if destructive and any(_leaves_folder(s) for s in starts):
        return "deletes files outside the chat's folder", True
    for i, arg in enumerate(args):
        if arg.text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j].text in (";", "+")), len(args))
            reason, loud = _judge_simple(SimpleCommand(words=args[i + 1:end]))
            if reason:
                return f"-exec {reason}", loud
            destructive = destructive or loud
    return None, destructive


def _judge_cd(args: list[Word]) -> tuple[str | None, bool]:
    _, operands = _operands(args)
    if operands and (_leaves_folder(operands[0]) or operands[0].text == "-"):
        return "leaves the chat's folder; commands run there", False
    return None, False


def _judge_git(args: list[Word]) -> tuple[str | None, bool]:
    text = " ".join(a.text for a in args)
    loud = re.search(r"\breset\b.*--hard|\bclean\b|\bpush\b.*(--force|\s-f\b)|\bcheckout\b.*\s--(\s|$)"
                     r"|\bbranch\b.*\s-D\b", text)
    return None, loud is not None


def _judge_sed(args: list[Word]) -> tuple[str | None, bool]:
    return None, any(a.text.startswith(("-i", "--in-place")) or re.fullmatch(r"-[a-zA-Z]*i\S*", a.text)
                     for a in args)


def _judge_systemctl(args: list[Word]) -> tuple[str | None, bool]:
    if any(a.text in ("poweroff", "reboot", "halt", "kexec", "suspend", "hibernate") for a in args):
        return _POWER, False
    return None, False


_LATER = "runs text as a command later (like eval)"


def _judge_trap(args: list[Word]) -> tuple[str | None, bool]:
    """`trap '<cmd>' EXIT` runs its text when the shell exits or gets a signal, exactly as eval would;
    listing (-p, -l) and resetting (`trap - INT`, `trap '' INT`, one operand) run nothing."""
    _, operands = _operands(args)
    if len(operands) >= 2 and (operands[0].dynamic or operands[0].text not in ("", "-")):
        return _LATER, False
    return None, False


def _judge_mapfile(args: list[Word]) -> tuple[str | None, bool]:
    """`mapfile -C '<cmd>'` evaluates its callback text every few lines."""
    return (_LATER, False) if any(a.text.startswith("-C") or a.dynamic for a in args) else (None, False)


_ARGUMENT_JUDGES: dict[str, Callable[[list[Word]], tuple[str | None, bool]]] = {
    "rm": _judge_rm,
    "rmdir": _judge_paths("deletes", 0),
    "shred": _judge_paths("overwrites", 0),
    "truncate": _judge_paths("truncates", 0),
    "unlink": _judge_paths("deletes", 0),
    "chmod": _judge_paths("changes the permissions of", 1),
    "chown": _judge_paths("changes the owner of", 1),
    "chgrp": _judge_paths("changes the group of", 1),
    "dd": _judge_dd,
    "kill": _judge_kill,
    "find": _judge_find,
    "cd": _judge_cd,
    "pushd": _judge_cd,
    "git": _judge_git,
    "sed": _judge_sed,
    "systemctl": _judge_systemctl,
    "trap": _judge_trap,
    "mapfile": _judge_mapfile,
    "readarray": _judge_mapfile,
}
