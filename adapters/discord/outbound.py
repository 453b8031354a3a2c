"""Render neutral Replies as Discord messages, and translate discord.py failures into the hub's errors.

Discord Markdown is what the model writes, so text passes through; monospace replies become a code
block; the title becomes a bold first line; buttons become components whose custom_id is the command.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import aiohttp
import discord

from adapters.discord.commands import CommandButton
from bot.adapter import ChatUnavailable, RateLimited, SendError, SendFailed
from bot.replies import FENCE, Button, Reply, split_text

T = TypeVar("T")
DISCORD_LIMIT = 2000  # characters of content per message
MAX_ROWS = MAX_PER_ROW = 5
NO_PINGS = discord.AllowedMentions.none()  # model output must never ping @everyone, roles or users
_UNKNOWN_CHANNEL = 10003
_BROKEN_FENCE = "`\u200b``"  # a ``` inside monospace text must not end the code block


def render(reply: Reply, limit: int = DISCORD_LIMIT) -> list[str]:
    """The message contents for a reply, each within `limit`; code blocks are closed and reopened
    across parts instead of being cut."""
    body = reply.text
    if reply.monospace:
        body = f"{FENCE}\n{body.replace(FENCE, _BROKEN_FENCE)}\n{FENCE}"
    if reply.title:
        body = f"**{reply.title}**\n{body}"
    return split_text(body, limit) or ["…"]  # Discord refuses empty messages


def render_one(reply: Reply, limit: int = DISCORD_LIMIT) -> str:
    """One message's content for an edit: a message cannot grow into two, so keep the first part."""
    return render(reply, limit)[0]


def view_for(buttons: tuple[tuple[Button, ...], ...]) -> discord.ui.View | None:
    """Components for the buttons, or None (which also removes old buttons when editing)."""
    if not buttons:
        return None
    view = discord.ui.View(timeout=None)
    seen: set[str] = set()  # Discord rejects a message whose custom_ids repeat
    for row_index, row in enumerate(buttons[:MAX_ROWS]):
        for button in row[:MAX_PER_ROW]:
            if button.action.startswith("/") and button.action not in seen:
                seen.add(button.action)
                view.add_item(CommandButton.make(button.label, button.action, row_index))
    return view if view.children else None


async def guarded(call: Awaitable[T]) -> T:
    """Await a discord.py call, raising only the hub's typed SendErrors.

    discord.py sleeps through 429s itself when the wait is short (bot routes: up to 30 s, the
    `max_ratelimit_timeout` the client is built with; interaction webhooks: always) and retries up
    to 5 times; a longer wait raises discord.RateLimited, and running out of tries an HTTPException
    with status 429. Both become RateLimited here, so the hub's pacing takes over.
    """
    try:
        return await call
    except discord.RateLimited as e:
        raise RateLimited(e.retry_after) from e
    except discord.Forbidden as e:
        raise ChatUnavailable(f"discord refused: {e.text or e.status}") from e
    except discord.HTTPException as e:
        raise _http_error(e) from e
    except (TimeoutError, aiohttp.ClientError) as e:
        raise SendFailed(f"discord unreachable: {type(e).__name__}") from e


def _http_error(e: discord.HTTPException) -> SendError:
    if e.status == 429:
        return RateLimited(_retry_after(e))
    if e.status == 404 and e.code == _UNKNOWN_CHANNEL:
        return ChatUnavailable("discord channel no longer exists")
    return SendFailed(f"discord answered {e.status} (code {e.code}): {e.text}")


def _retry_after(e: discord.HTTPException) -> float:
    try:
        return float(e.response.headers.get("Retry-After", 1.0))
    except (AttributeError, ValueError):
        return 1.0
