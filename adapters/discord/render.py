"""Reply → Discord message payload (pure): content parts within the limit, and button components.

Discord Markdown is what the model writes, so text passes through; monospace replies become a code
block; the title becomes a bold first line; the model's thinking a spoiler before the text (hidden until
clicked: Discord has no fold); buttons become components whose custom_id is the command.
"""

from __future__ import annotations

import discord

from adapters.discord.commands import CommandButton
from bot.replies import FENCE, Button, Reply, split_text

DISCORD_LIMIT = 2000  # characters of content per message
MAX_ROWS = MAX_PER_ROW = 5
NO_PINGS = discord.AllowedMentions.none()  # model output must never ping @everyone, roles or users
_BROKEN_FENCE = "`\u200b``"  # a ``` inside monospace text must not end the code block


def render(reply: Reply, limit: int = DISCORD_LIMIT) -> list[str]:
    """The message contents for a reply, each within `limit`; code blocks are closed and reopened
    across parts instead of being cut."""
    body = reply.text
    if reply.monospace:
        body = f"{FENCE}\n{body.replace(FENCE, _BROKEN_FENCE)}\n{FENCE}"
    if reply.reasoning:
        spoiler = "||💭 " + reply.reasoning.replace("||", "|\u200b|") + "||"  # a || inside would end it early
        body = f"{spoiler}\n\n{body}" if body else spoiler
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
