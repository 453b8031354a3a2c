"""A small parser for the bash command lines the shell tool runs: it finds every simple command.

Regexes over a command line cannot see through `$( )`, backticks, subshells or `X=rm; $X`, so the
policy judges the simple commands this parser yields instead. It understands `;`, newlines, `&&`,
`||`, `|`, `( )`, `$( )`, backticks, quotes, `${ }`, redirections, here-documents and assignments.
Anything else (loops, functions, `{ }` groups, `&`, process substitution, `$'…'`) raises
`Unparseable`: the tool refuses what it cannot read rather than asking a person about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
_SPECIAL_PARAMS = "@*#?-$!0123456789"
_KEYWORDS = frozenset({"if", "then", "elif", "else", "fi", "for", "while", "until", "do", "done", "case",
                       "esac", "select", "function", "{", "}", "[[", "]]", "!", "coproc"})
_WORD_END = " \t\n;&|()<>"
_REDIRECTS = ("<<<", "<<-", "&>>", "<<", ">>", ">|", "<>", "<&", ">&", "&>", "<", ">")


class Unparseable(Exception):
    """The command uses syntax the parser does not understand; the message says which."""


@dataclass
class Word:
    """One shell word after quote removal, with the expansions whose values are unknown."""

    text: str = ""
    dynamic: bool = False  # holds an expansion or substitution whose value is only known at run time
    glob: bool = False  # an unquoted * ? or [ (pathname expansion)
    tilde: bool = False  # starts with an unquoted ~ (someone's home folder)
    quoted: bool = False


@dataclass
class Redirect:
    op: str
    target: Word


@dataclass
class SimpleCommand:
    words: list[Word]
    redirects: list[Redirect] = field(default_factory=list)
    piped_into: bool = False  # reads the previous command's output (not first in a pipeline)


class _Parser:
    def __init__(self, text: str, variables: dict[str, str | None]) -> None:
        self.text, self.i = text, 0
        self.variables = variables  # assigned once with a literal value → the value; otherwise None
        self.commands: list[SimpleCommand] = []
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, body is literal)

    def peek(self, n: int = 1) -> str:
        return self.text[self.i:self.i + n]

    def parse_list(self, closing: str = "") -> None:
        """Pipelines separated by ; && || and newlines, up to `closing` (a `)` or backtick) or the end."""
        while True:
            self.skip_blanks()
            if self.i >= len(self.text):
                if closing:
                    raise Unparseable(f"a '{closing}' is missing")
                return
            if closing and self.peek() == closing:
                self.i += 1
                return
            if self.peek() in ";\n":
                self.separator()
                continue
            self.parse_pipeline()
            self.skip_blanks()
            if self.peek(2) in ("&&", "||"):
                self.i += 2
            elif self.peek() in ";\n":
                self.separator()
            elif self.peek() == "&":
                raise Unparseable("'&' (running in the background) is not supported")
            elif not (closing and self.peek() == closing) and self.i < len(self.text):
                raise Unparseable(f"unexpected {self.peek()!r}")

    def separator(self) -> None:
        if self.peek(2) == ";;":
            raise Unparseable("';;' outside a case statement")
        if self.peek() == "\n" and self.heredocs:
            self.i += 1
            self.read_heredoc_bodies()
        else:
            self.i += 1

    def parse_pipeline(self) -> None:
        piped = False
        while True:
            self.parse_command(piped)
            self.skip_blanks()
            if self.peek(2) in ("||", "|&") or self.peek() != "|":
                if self.peek(2) == "|&":
                    self.i += 2
                    piped = True
                    continue
                return
            self.i += 1
            piped = True
            self.skip_blanks(newlines=True)

    def parse_command(self, piped: bool) -> None:
        self.skip_blanks()
        if self.peek(2) == "((":
            raise Unparseable("arithmetic commands '(( ))' are not supported")
        if self.peek() == "(":
            self.i += 1
            first = len(self.commands)
            self.parse_list(closing=")")
            for inner in self.commands[first:]:
                inner.piped_into = inner.piped_into or piped
            self.parse_redirects_only()
            return
        command = SimpleCommand(words=[], piped_into=piped)
        while True:
            self.skip_blanks()
            ch = self.peek()
            if not ch or ch in "\n;)" or self.peek(2) in ("&&", "||") or (ch in "|&" and not self.at_redirect()):
                break
            if ch == "(":
                raise Unparseable("function definitions and arrays are not supported")
            if self.at_redirect():
                command.redirects.append(self.parse_redirect())
                continue
            start = self.i
            word = self.parse_word()
            if not command.words and not word.quoted and word.text in _KEYWORDS:
                raise Unparseable(f"the shell keyword '{word.text}' is not supported")
            if not command.words and (m := _ASSIGNMENT.match(self.text, start)):
                self.assign(m.group(1), word, raw=self.text[start:self.i])
                continue
            command.words.append(word)
        if command.words or command.redirects:
            self.commands.append(command)
        elif piped:
            raise Unparseable("a '|' has no command after it")

    def assign(self, name: str, word: Word, raw: str) -> None:
        if name == "IFS":
            raise Unparseable("assigning IFS is not supported")
        if raw.startswith(f"{name}=("):
            raise Unparseable("array assignments are not supported")
        value = word.text.split("=", 1)[1]
        appends = raw.startswith(f"{name}+=")
        known = name not in self.variables and not (appends or word.dynamic or word.glob or word.tilde)
        self.variables[name] = value if known else None

    def parse_redirects_only(self) -> None:
        while True:
            self.skip_blanks()
            if not self.at_redirect():
                return
            redirect = self.parse_redirect()
            self.commands.append(SimpleCommand(words=[], redirects=[redirect]))

    def at_redirect(self) -> bool:
        j = self.i
        while j < len(self.text) and self.text[j].isdigit():
            j += 1
        rest = self.text[j:j + 3]
        if j > self.i and rest[:1] not in ("<", ">"):
            return False
        return any(rest.startswith(op) for op in _REDIRECTS)

    def parse_redirect(self) -> Redirect:
        while self.peek().isdigit():
            self.i += 1
        op = next(op for op in _REDIRECTS if self.text.startswith(op, self.i))
        self.i += len(op)
        if self.peek() == "(":
            raise Unparseable("process substitution is not supported")
        self.skip_blanks()
        if not self.peek() or self.peek() in _WORD_END:
            raise Unparseable(f"'{op}' needs a target")
        start = self.i
        target = self.parse_word()
        if op in ("<<", "<<-"):
            raw = self.text[start:self.i]
            self.heredocs.append((target.text, any(q in raw for q in "'\"\\")))
        return Redirect(op, target)

    def read_heredoc_bodies(self) -> None:
        for delimiter, literal in self.heredocs:
            while True:
                end = self.text.find("\n", self.i)
                line = self.text[self.i:] if end < 0 else self.text[self.i:end]
                self.i = len(self.text) if end < 0 else end + 1
                if line.strip("\t") == delimiter:
                    break
                if not literal and ("$(" in line or "`" in line):
                    raise Unparseable("command substitution inside a here-document is not supported")
                if end < 0:
                    raise Unparseable(f"the here-document is not closed with {delimiter!r}")
        self.heredocs = []

    def skip_blanks(self, newlines: bool = False) -> None:
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch in " \t" or (newlines and ch == "\n"):
                self.i += 1
            elif self.text.startswith("\\\n", self.i):
                self.i += 2
            elif ch == "#":
                while self.i < len(self.text) and self.text[self.i] != "\n":
                    self.i += 1
            else:
                return

    def parse_word(self) -> Word:
        word = Word()
        raw_start = self.i
        while self.i < len(self.text) and self.text[self.i] not in _WORD_END:
            ch = self.text[self.i]
            if ch == "\\":
                if self.peek(2) == "\\\n":
                    self.i += 2
                    continue
                word.text += self.text[self.i + 1:self.i + 2] or "\\"  # a backslash that ends the line is literal
                word.quoted = True
                self.i += 2
            elif ch == "'":
                end = self.text.find("'", self.i + 1)
                if end < 0:
                    raise Unparseable("a single quote is not closed")
                word.text += self.text[self.i + 1:end]
                word.quoted = True
                self.i = end + 1
            elif ch == '"':
                self.parse_double_quoted(word)
            elif ch == "$":
                self.parse_dollar(word, quoted=False)
            elif ch == "`":
                self.parse_backticks(word)
            elif ch in "*?[":
                word.glob = True
                word.text += ch
                self.i += 1
            elif ch == "~" and self.i == raw_start:
                word.tilde = True
                word.text += ch
                self.i += 1
            else:
                if ch == "{" and re.match(r"\{[^}\s]*(,|\.\.)", self.text[self.i:]):
                    word.dynamic = True  # brace expansion
                word.text += ch
                self.i += 1
        return word

    def parse_double_quoted(self, word: Word) -> None:
        word.quoted = True
        self.i += 1
        while True:
            if self.i >= len(self.text):
                raise Unparseable("a double quote is not closed")
            ch = self.text[self.i]
            if ch == '"':
                self.i += 1
                return
            if ch == "\\" and self.peek(2)[1:] in ('$', '`', '"', "\\", "\n"):
                word.text += self.text[self.i + 1] if self.peek(2) != "\\\n" else ""
                self.i += 2
            elif ch == "$":
                self.parse_dollar(word, quoted=True)
            elif ch == "`":
                self.parse_backticks(word)
            else:
                word.text += ch
                self.i += 1

    def parse_dollar(self, word: Word, quoted: bool) -> None:
        nxt = self.peek(2)[1:]
        if nxt == "(":
            if self.peek(3) == "$((":
                raise Unparseable("arithmetic expansion '$(( ))' is not supported")
            self.i += 2
            self.parse_list(closing=")")
            word.dynamic = True
        elif nxt == "{":
            end = self.text.find("}", self.i)
            if end < 0:
                raise Unparseable("a '${' is not closed")
            inner = self.text[self.i + 2:end]
            if not _NAME.fullmatch(inner):
                raise Unparseable(f"the expansion ${{{inner}}} is not supported")
            self.i = end + 1
            self.expand(word, inner, quoted)
        elif nxt == "'" and not quoted:
            raise Unparseable("$'…' quoting is not supported")
        elif nxt == '"' and not quoted:
            self.i += 1
        elif (m := _NAME.match(self.text, self.i + 1)) is not None:
            self.i = m.end()
            self.expand(word, m.group(), quoted)
        elif nxt and nxt in _SPECIAL_PARAMS:
            self.i += 2
            word.dynamic = True
        else:
            word.text += "$"
            self.i += 1

    def expand(self, word: Word, name: str, quoted: bool) -> None:
        value = self.variables.get(name)
        if value is None or (not quoted and re.search(r"[\s*?\[~{]", value)):
            word.dynamic = True  # unknown, or it would be split or globbed: its words are not known here
        else:
            word.text += value

    def parse_backticks(self, word: Word) -> None:
        end = self.i + 1
        while end < len(self.text) and self.text[end] != "`":
            end += 2 if self.text[end] == "\\" else 1
        if end >= len(self.text):
            raise Unparseable("a backtick is not closed")
        inner = re.sub(r"\\([$`\\])", r"\1", self.text[self.i + 1:end])
        nested = _Parser(inner, self.variables)
        nested.parse_list()
        self.commands.extend(nested.commands)
        self.i = end + 1
        word.dynamic = True


def parse(command: str) -> list[SimpleCommand]:
    """Every simple command in `command`, nested ones included, in order; raises `Unparseable`."""
    parser = _Parser(command, {})
    parser.parse_list()
    if parser.heredocs:
        raise Unparseable("a here-document has no body")
    return parser.commands
