"""What an approval prompt can hide (issue 28, point 8): every invisible, control and line-separating code
point by Unicode category; shell and MCP prompts rendered by the same code, so MCP arguments are no longer
shown raw."""

from __future__ import annotations

import asyncio
import sys
import unicodedata
from dataclasses import replace

from bot.agent.approvals import Approvals
from bot.agent.tools.registry import ToolContext
from bot.agent.tools.shell_policy import judge
from bot.replies import Reply

ALL = [chr(n) for n in range(sys.maxunicode + 1)]
FEW = {"Cc", "Cf", "Zl", "Zp", "Zs"}  # small categories: every code point is tried
MANY = {"Co", "Cs", "Cn"}  # private use, surrogates, unassigned: a spread of them


def hidden_sample() -> list[str]:
    picked = [c for c in ALL if unicodedata.category(c) in FEW and c not in " \n\t"]
    for category in MANY:
        group = [c for c in ALL if unicodedata.category(c) == category]
        picked += [*group[::997], group[-1]]  # the first, the last and a spread between
    return picked


def test_every_invisible_or_line_breaking_code_point_is_refused_in_a_command() -> None:
    sample = hidden_sample()
    assert {"\u2028", "\u2029", "\u00a0", "\u3000", "\ue000", "\ud800", "\u180e", "\U000e0041"} <= set(sample)
    slipped = [f"U+{ord(c):04X}" for c in sample if f"U+{ord(c):04X}" not in (judge(f"echo a{c}b").refusal or "")]
    assert slipped == []


def test_ordinary_text_is_not_hidden() -> None:
    judgement = judge("echo 'héllo 你好 🙂 — ok, ünïcödé'\tdone\nls -la")
    assert judgement.refusal is None


async def test_shell_and_mcp_prompts_write_hidden_code_points_out(ctx: ToolContext) -> None:
    approvals = Approvals()
    prompts: list[Reply] = []

    async def notify(reply: Reply) -> None:
        prompts.append(reply)
        approval_id = reply.buttons[0][0].action.split()[1]
        asyncio.get_running_loop().call_soon(approvals.decide, ctx.chat, approval_id, None, True)

    asking = replace(ctx, notify=notify, is_admin=True)
    for action in ("run this shell command", "call this MCP tool"):
        await approvals.ask(asking, "cat invoice\u202efdp.exe\u2028rm x", False, action=action)
    for prompt in prompts:
        assert "cat invoice⟨U+202E⟩fdp.exe⟨U+2028⟩rm x" in prompt.text
        assert "\u202e" not in prompt.text and "\u2028" not in prompt.text
