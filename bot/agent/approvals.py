"""In-chat approval of risky tool actions (seed 001: shell always asks), with standing rules.

The tool awaits a future while the chat shows buttons carrying `/approve <id> once|conv|always` and
`/deny <id>`; the hub routes those commands to `decide`. Only the waiting run sleeps, other chats go on.
"For this conversation" and "always" leave a standing rule in the store: it approves the exact same text
again (in that conversation, or anywhere in the chat) and nothing else — not a longer command that starts
with it, not one that merely contains it. Destructive commands are only ever approved once. Rules are
listed and revoked with `/approvals` and on the Admin page, and every grant and revocation is audited.
Only an admin of the platform may approve, in DMs and groups alike; when a non-admin triggers the tool,
nobody is asked and no rule applies.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass
from enum import Enum

from bot.agent.tools.registry import ToolContext
from bot.agent.visible import visible
from bot.replies import Button, Reply
from bot.store.approval_rules import ApprovalRule, ApprovalRuleStore
from bot.store.dashboard import DashboardStore

NEEDS_ADMIN = "A person with admin rights must approve this command, so it was not run."
MAX_SHOWN = 1500  # characters of a command shown in the prompt; the rest is counted, never silently hidden


class Decision(Enum):
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"  # nobody decided in time
    UNAVAILABLE = "unavailable"  # this run has no way to ask
    NOT_ADMIN = "not_admin"  # the person who triggered it is no admin, so nobody was asked


class Scope(Enum):
    """How far an approval reaches: this call, this conversation, or this chat from now on."""

    ONCE = "once"
    CONVERSATION = "conv"
    ALWAYS = "always"


SCOPES = {s.value: s for s in Scope}  # the word after `/approve <id>`, and the dashboard's form value

@dataclass
class _Pending:
    chat: str
    conversation: str | None
    kind: str
    command: str
    scopes: tuple[Scope, ...]  # what the buttons offered
    future: asyncio.Future[tuple[Scope | None, str]]  # (scope, or None for denied; who decided)


class Approvals:
    def __init__(self, default_timeout: float = 600, rules: ApprovalRuleStore | None = None,
                 audit: DashboardStore | None = None) -> None:
        self.default_timeout = default_timeout  # seconds a request waits for someone to decide
        self._pending: dict[str, _Pending] = {}
        self._rules, self._audit = rules, audit  # None: no standing rules (doctor, tests)

    async def request(self, ctx: ToolContext, command: str, destructive: bool,
                      timeout: float = 600) -> bool:  # noqa: ASYNC109 - the decision deadline, not an I/O timeout
        return await self.ask(ctx, command, destructive, expires_after=timeout) is Decision.APPROVED

    async def ask(self, ctx: ToolContext, command: str, destructive: bool, expires_after: float | None = None,
                  action: str = "run this shell command", kind: str = "shell", keepable: bool = True) -> Decision:
        """Like `request`, but says why the answer is no (denied, expired, or no way to ask).

        `action` completes "The assistant wants to …" above the command, e.g. "call this MCP tool"; `kind`
        keeps shell rules and MCP rules apart; `keepable` False offers no standing rule (a new skill is approved
        once, as it is shown).
        """
        expires_after = self.default_timeout if expires_after is None else expires_after
        notify = ctx.notify
        if notify is None:
            return Decision.UNAVAILABLE
        if not ctx.is_admin:
            await notify(Reply(NEEDS_ADMIN))
            return Decision.NOT_ADMIN
        if keepable and not destructive and (rule := await self._standing(ctx, kind, command)) is not None:
            await notify(Reply(f"✅ Allowed by standing rule #{rule.id} (/approvals lists and revokes them): "
                               f"{_inline(command)}"))
            return Decision.APPROVED
        approval_id = secrets.token_hex(4)
        scopes = _offered(destructive, keepable and ctx.conversation_id is not None and self._rules is not None)
        future: asyncio.Future[tuple[Scope | None, str]] = asyncio.get_running_loop().create_future()
        self._pending[approval_id] = _Pending(ctx.chat, ctx.conversation_id, kind, command, scopes, future)
        try:
            await notify(_prompt(approval_id, command, destructive, expires_after, action, scopes))
            async with asyncio.timeout(expires_after):
                scope, by = await future
        except TimeoutError:
            return Decision.EXPIRED
        finally:
            self._pending.pop(approval_id, None)
        if scope is None:
            return Decision.DENIED
        if scope is not Scope.ONCE:
            await self._grant(ctx, kind, command, scope, by)
        return Decision.APPROVED

    async def _standing(self, ctx: ToolContext, kind: str, command: str) -> ApprovalRule | None:
        if self._rules is None:
            return None
        return await self._rules.find(ctx.chat, ctx.conversation_id, kind, command)

    async def _grant(self, ctx: ToolContext, kind: str, command: str, scope: Scope, by: str) -> None:
        assert self._rules is not None  # only offered with a store
        conversation = ctx.conversation_id if scope is Scope.CONVERSATION else None
        rule = await self._rules.add(ctx.chat, conversation, kind, command, by)
        await self._audited(by, "approval-rule-add", rule)

    def decide(self, chat: str, approval_id: str, scope: Scope | None, user_is_admin: bool, by: str = "") -> str:
        """Resolve a pending request from its own chat (`scope` None denies); another chat's id looks exactly
        like an unknown one. An empty id means the one request waiting in this chat (a script cannot know it)."""
        wanted = approval_id.strip() or self._only_one(chat)
        pending = self._pending.get(wanted)
        if pending is None or pending.chat != chat or pending.future.done():
            return "There is no pending request with that id (it may have expired or been decided)."
        if not user_is_admin:
            return "Only an admin of this bot can approve or deny tool actions."
        if scope is not None and scope not in pending.scopes:
            return "This one can only be approved once: use `/approve <id> once`."
        pending.future.set_result((scope, by or chat))
        shown = _inline(pending.command)
        if scope is None:
            return f"Denied: {shown}"
        if scope is Scope.ONCE:
            return f"Approved: {shown}"
        where = "in this conversation" if scope is Scope.CONVERSATION else "in this chat"
        return f"Approved, and from now on {where}, this exact command only: {shown} (/approvals to revoke)"

    def _only_one(self, chat: str) -> str:
        waiting = [aid for aid, p in self._pending.items() if p.chat == chat and not p.future.done()]
        return waiting[0] if len(waiting) == 1 else ""

    async def rules(self, chat: str | None = None) -> list[ApprovalRule]:
        """Standing rules of one chat, or of every chat (the dashboard)."""
        return [] if self._rules is None else await self._rules.list(chat)

    async def revoke(self, rule_id: int, chat: str | None, by: str) -> ApprovalRule | None:
        """Delete a standing rule (only from `chat`, when given); audited."""
        rule = None if self._rules is None else await self._rules.revoke(rule_id, chat)
        if rule is not None:
            await self._audited(by, "approval-rule-revoke", rule)
        return rule

    async def _audited(self, by: str, action: str, rule: ApprovalRule) -> None:
        if self._audit is not None:
            where = f"conversation {rule.conversation}" if rule.conversation else "whole chat"
            await self._audit.add_audit(by, action, rule.chat, f"#{rule.id} {rule.kind} ({where}): {rule.command}")

    def pending(self) -> list[tuple[str, str, str, tuple[Scope, ...]]]:
        """(approval id, chat, command, scopes offered) of every request still waiting: the dashboard's list."""
        return [(aid, p.chat, visible(p.command), p.scopes) for aid, p in self._pending.items() if not p.future.done()]

    @property
    def pending_count(self) -> int:
        return len(self._pending)


def _offered(destructive: bool, can_keep: bool) -> tuple[Scope, ...]:
    return (Scope.ONCE,) if destructive or not can_keep else (Scope.ONCE, Scope.CONVERSATION, Scope.ALWAYS)


BUTTON_LABELS = {Scope.ONCE: "✅ Approve once", Scope.CONVERSATION: "✅ For this conversation",
                 Scope.ALWAYS: "✅ Always this command"}


def _prompt(approval_id: str, command: str, destructive: bool, timeout: float, action: str,
            scopes: tuple[Scope, ...] = (Scope.ONCE,)) -> Reply:
    """The one rendering of every approval (shell and MCP): hidden code points written out, long text counted."""
    shown = _shorten(visible(command), MAX_SHOWN)
    fence = "`" * max(3, _longest_backtick_run(shown) + 1)
    warning = "⚠️ This command can delete or change files. Check it carefully.\n\n" if destructive else ""
    text = (f"{warning}The assistant wants to {action}:\n{fence}\n{shown}\n{fence}\n"
            f"Approve or deny within {max(1, round(timeout / 60))} min "
            f"(or type /approve {approval_id} or /deny {approval_id}).")
    title = "⚠️ Destructive command: approval needed" if destructive else "Approval needed"
    approve = tuple(Button(BUTTON_LABELS[s], f"/approve {approval_id} {s.value}") for s in scopes)
    buttons = (approve, (Button("⛔ Deny", f"/deny {approval_id}"),))
    return Reply(text=text, title=title, buttons=buttons)


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def _shorten(command: str, limit: int) -> str:
    return command if len(command) <= limit else f"{command[:limit]} … ({len(command) - limit} more characters)"


def _inline(command: str) -> str:
    short = _shorten(visible(command), 80).replace("`", "'")
    return f"`{short}`"
