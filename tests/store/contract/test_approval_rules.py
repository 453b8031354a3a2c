"""Standing approvals on both backends: exact text only, per chat, per conversation, revoked per chat."""

from __future__ import annotations

from bot.store import Store


async def test_a_rule_matches_its_exact_text_in_its_chat_only(store: Store) -> None:
    rules = store.approval_rules
    chat_rule = await rules.add("tg:1", None, "shell", "ls -la /tmp", "tg:boss")
    conv_rule = await rules.add("tg:1", "conv-a", "shell", "pwd", "dashboard")
    assert await rules.find("tg:1", "conv-z", "shell", "ls -la /tmp") == chat_rule
    for chat, conv, kind, command in (("tg:1", "c", "shell", "ls -la /tmp; rm -rf ~"), ("tg:1", "c", "shell", "ls"),
                                      ("tg:1", "c", "shell", "ls -la /tmp "), ("tg:2", "c", "shell", "ls -la /tmp"),
                                      ("tg:1", "c", "mcp", "ls -la /tmp"), ("tg:1", "conv-b", "shell", "pwd"),
                                      ("tg:1", None, "shell", "pwd")):
        assert await rules.find(chat, conv, kind, command) is None, (chat, conv, kind, command)
    assert await rules.find("tg:1", "conv-a", "shell", "pwd") == conv_rule
    assert [r.id for r in await rules.list("tg:1")] == [chat_rule.id, conv_rule.id]
    assert await rules.list("tg:2") == [] and len(await rules.list()) == 2
    assert await rules.revoke(chat_rule.id, "tg:2") is None  # another chat cannot revoke it
    assert await rules.revoke(chat_rule.id, "tg:1") == chat_rule
    assert await rules.find("tg:1", "c", "shell", "ls -la /tmp") is None
    assert await rules.revoke(conv_rule.id) == conv_rule and await rules.list() == []
    assert chat_rule.granted_by == "tg:boss" and chat_rule.conversation is None and conv_rule.conversation == "conv-a"
