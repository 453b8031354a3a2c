"""Issue 28 §7: approve once, for this conversation, or always for this exact command; /approvals lists and
revokes; audited. The whole app runs (hub, access rules, agent loop, the real shell in bubblewrap)."""

from __future__ import annotations

from pathlib import Path

from bot.app import App
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for
from tests.reliability.test_shell_approvals import CONFIG, buttons, run_shell, telegram_like


async def ask(app: App, fake: FakeOpenAI, rec: RecordingAdapter, command: str, chat: str = "d1") -> list[str]:
    """The buttons a new request for `command` shows in `chat`; [] when nobody had to be asked."""
    before = len(buttons(rec))
    done = rec.texts(chat).count("done")
    run_shell(fake, command)
    await rec.say("run it", chat_id=chat, user="boss")
    await wait_for(lambda: len(buttons(rec)) > before or rec.texts(chat).count("done") > done)
    return buttons(rec)[before:]


async def press(rec: RecordingAdapter, action: str, chat: str = "d1") -> None:
    done = rec.texts(chat).count("done")
    await rec.say(action, chat_id=chat, user="boss")
    await wait_for(lambda: rec.texts(chat).count("done") > done)


async def test_always_approves_the_exact_command_and_nothing_longer(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = telegram_like()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=CONFIG) as app:
        offered = await ask(app, fake, rec, "ls -la /tmp")
        assert [a.split()[2] if len(a.split()) > 2 else "deny" for a in offered] == ["once", "conv", "always", "deny"]
        await press(rec, offered[2])
        assert "from now on in this chat, this exact command only" in rec.texts("d1")[-2]
        assert await ask(app, fake, rec, "ls -la /tmp") == []  # the standing rule approved it
        assert any(t.startswith("✅ Allowed by standing rule #1") for t in rec.texts("d1"))
        assert await ask(app, fake, rec, "ls -la /tmp; rm -rf ~") == []  # starts with it: the policy refuses it
        assert fake.requests[-1]["body"]["messages"][-1]["content"].startswith("Refused")
        longer = await ask(app, fake, rec, "ls -la /tmp; rm -f notes.txt")  # still asks, and once only
        assert [a.split()[0] for a in longer] == ["/approve", "/deny"] and longer[0].endswith(" once")
        await rec.say(longer[0].replace(" once", " always"), chat_id="d1", user="boss")
        await wait_for(lambda: "This one can only be approved once: use `/approve <id> once`." in rec.texts("d1"))
        await press(rec, longer[1])
        assert await ask(app, fake, rec, "ls -la /tmp ", chat="d1") != []  # not the same text
        await press(rec, buttons(rec)[-1])
        assert await ask(app, fake, rec, "ls -la /tmp", chat="d2") != []  # another chat: its own rules
        await press(rec, buttons(rec)[-1], chat="d2")

        await rec.say("/approvals", chat_id="d1", user="boss")
        await wait_for(lambda: "#1 shell, whole chat: `ls -la /tmp`" in rec.texts("d1")[-1])
        await rec.say("/approvals revoke 1", chat_id="d2", user="boss")  # not d2's rule
        await wait_for(lambda: rec.texts("d2")[-1] == "There is no standing approval #1 in this chat.")
        await rec.say("/approvals revoke 1", chat_id="d1", user="boss")
        await wait_for(lambda: rec.texts("d1")[-1] == "Revoked standing approval #1: it will ask again.")
        assert await ask(app, fake, rec, "ls -la /tmp") != []
        await press(rec, buttons(rec)[-1])
        audit = [(e.actor, e.action, e.target) for e in await app.store.dashboard.list_audit(10)]
        assert ("telegram:boss", "approval-rule-add", "telegram:d1") in audit
        assert ("telegram:boss", "approval-rule-revoke", "telegram:d1") in audit


async def test_for_this_conversation_ends_with_the_conversation(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = telegram_like()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=CONFIG) as app:
        await press(rec, (await ask(app, fake, rec, "pwd"))[1])  # for this conversation
        assert await ask(app, fake, rec, "pwd") == []
        await rec.say("/new", chat_id="d1", user="boss")
        await app.hub.idle()
        assert await ask(app, fake, rec, "pwd") != []  # a new conversation asks again
        await press(rec, buttons(rec)[-1])


async def test_a_rule_does_not_run_a_strangers_command(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = telegram_like()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=CONFIG) as app:
        group = "g1"
        run_shell(fake, "pwd")
        await rec.say("run it", chat_id=group, user="boss", group=True)
        await wait_for(lambda: bool(buttons(rec)))
        await rec.say(buttons(rec)[2], chat_id=group, user="boss", group=True)  # always
        await wait_for(lambda: "done" in rec.texts(group))
        run_shell(fake, "pwd")
        await rec.say("run it", chat_id=group, user="bob", group=True)  # no admin: nobody asked, no rule applies
        await wait_for(lambda: rec.texts(group).count("done") == 2)
        assert "A person with admin rights must approve this command, so it was not run." in rec.texts(group)
        assert len(await app.approvals.rules("telegram:g1")) == 1
