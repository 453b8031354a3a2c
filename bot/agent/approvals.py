"""In-chat approval of risky tool actions (seed 001: shell always asks).

The tool awaits a future while the chat shows Approve/Deny buttons carrying `/approve <id>` and
`/deny <id>`; the hub routes those commands to `decide`. Only the waiting run sleeps, other chats go on.
Only an admin of the platform may approve, in DMs and groups alike: a stranger must never be able to
approve their own command. When a non-admin triggers the tool, nobody is asked at all.
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

NEEDS_ADMIN = "A person with admin rights must approve this command, so it was not run."
MAX_SHOWN = 1500  # characters of a command shown in the prompt; the rest is counted, never silently hidden


class Decision(Enum):
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"  # nobody decided in time
    UNAVAILABLE = "unavailable"  # this run has no way to ask
    NOT_ADMIN = "not_admin"  # the person who triggered it is no admin, so nobody was asked


@dataclass
class _Pending:
    chat: str
    command: str
    future: asyncio.Future[bool]


class Approvals:
    def __init__(self, default_timeout: float = 600) -> None:
        self.default_timeout = default_timeout  # seconds a request waits for someone to decide
        self._pending: dict[str, _Pending] = {}

    async def request(self, ctx: ToolContext, command: str, destructive: bool,
                      timeout: float = 600) -> bool:  # noqa: ASYNC109 - the decision deadline, not an I/O timeout
        return await self.ask(ctx, command, destructive, expires_after=timeout) is Decision.APPROVED

    async def ask(self, ctx: ToolContext, command: str, destructive: bool,
                  expires_after: float | None = None, action: str = "run this shell command") -> Decision:
        """Like `request`, but says why the answer is no (denied, expired, or no way to ask).

        `action` completes "The assistant wants to …" above the command, e.g. "call this MCP tool".
        """
        expires_after = self.default_timeout if expires_after is None else expires_after
        notify = ctx.notify
        if notify is None:
            return Decision.UNAVAILABLE
        if not ctx.is_admin:
            await notify(Reply(NEEDS_ADMIN))
            return Decision.NOT_ADMIN
        approval_id = secrets.token_hex(4)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending[approval_id] = _Pending(ctx.chat, command, future)
        try:
            await notify(_prompt(approval_id, command, destructive, expires_after, action))
            async with asyncio.timeout(expires_after):
                return Decision.APPROVED if await future else Decision.DENIED
        except TimeoutError:
            return Decision.EXPIRED
        finally:
            self._pending.pop(approval_id, None)

    def decide(self, chat: str, approval_id: str, approve: bool, user_is_admin: bool) -> str:
        """Resolve a pending request from its own chat; another chat's id looks exactly like an unknown one."""
        pending = self._pending.get(approval_id.strip())
        if pending is None or pending.chat != chat or pending.future.done():
            return "There is no pending request with that id (it may have expired or been decided)."
        if not user_is_admin:
            return "Only an admin of this bot can approve or deny tool actions."
        pending.future.set_result(approve)
        return f"Approved: {_inline(pending.command)}" if approve else f"Denied: {_inline(pending.command)}"

    def pending(self) -> list[tuple[str, str, str]]:
        """(approval id, chat, command) of every request still waiting: the dashboard's list."""
        return [(aid, p.chat, visible(p.command)) for aid, p in self._pending.items() if not p.future.done()]

    @property
    def pending_count(self) -> int:
        return len(self._pending)


def _prompt(approval_id: str, command: str, destructive: bool, timeout: float, action: str) -> Reply:
    """The one rendering of every approval (shell and MCP): hidden code points written out, long text counted."""
    shown = _shorten(visible(command), MAX_SHOWN)
    fence = "`" * max(3, _longest_backtick_run(shown) + 1)
    warning = "⚠️ This command can delete or change files. Check it carefully.\n\n" if destructive else ""
    text = (f"{warning}The assistant wants to {action}:\n{fence}\n{shown}\n{fence}\n"
            f"Approve or deny within {max(1, round(timeout / 60))} min "
            f"(or type /approve {approval_id} or /deny {approval_id}).")
    title = "⚠️ Destructive command: approval needed" if destructive else "Approval needed"
    buttons = ((Button("✅ Approve", f"/approve {approval_id}"), Button("⛔ Deny", f"/deny {approval_id}")),)
    return Reply(text=text, title=title, buttons=buttons)


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def _shorten(command: str, limit: int) -> str:
    return command if len(command) <= limit else f"{command[:limit]} … ({len(command) - limit} more characters)"


def _inline(command: str) -> str:
    short = _shorten(visible(command), 80).replace("`", "'")
    return f"`{short}`"
