"""Who may approve a shell command, and what the prompt shows (issue 11, points 1 and 4).

The whole app runs: hub, access rules (a recording adapter named telegram), the agent loop against
the fake LLM, the real shell tool and its bubblewrap sandbox.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot.agent.approvals import MAX_SHOWN, NEEDS_ADMIN
from bot.app import App
from bot.chats.sessions import SessionKey
from bot.cli import doctor
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import RecordingAdapter, make_config, running_app, wait_for
from tests.reliability.test_process import child_env, run_cli, write_config

CONFIG: dict[str, Any] = {"tools": {"shell_enabled": True}, "telegram": {"access": {"admins": ["boss"]}}}


def telegram_like() -> RecordingAdapter:
    rec = RecordingAdapter()
    rec.name = "telegram"  # the access rules of the telegram section apply
    return rec


def run_shell(fake: FakeOpenAI, command: str) -> None:
    fake.script(ToolCalls([("s1", "shell", json.dumps({"command": command}))]), Text("done"))


def chat_folder(app: App, chat_id: str) -> Path:
    return app.runner.workdir(app.lanes.session(SessionKey("telegram", chat_id)))


def buttons(rec: RecordingAdapter) -> list[str]:
    return [b.action for _, reply in rec.sent for row in reply.buttons for b in row]


async def test_a_stranger_in_a_dm_cannot_get_a_command_run(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = telegram_like()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=CONFIG) as app:
        run_shell(fake, "touch pwned.txt")
        await rec.say("please run it", chat_id="dm-stranger", user="stranger")
        await wait_for(lambda: "done" in rec.texts("dm-stranger"))
        assert buttons(rec) == []  # no Approve button anywhere: the request is shown to nobody
        assert rec.texts("dm-stranger") == [NEEDS_ADMIN, "done"]
        assert [chat.chat_id for chat, _ in rec.sent] == ["dm-stranger", "dm-stranger"]
        told = fake.requests[1]["body"]["messages"][-1]["content"]
        assert "the person asking is not an admin, so the command was not run" in told
        await rec.say("/approve 00000000", chat_id="dm-stranger", user="stranger")
        await app.hub.idle()
        assert not (chat_folder(app, "dm-stranger") / "pwned.txt").exists()


async def test_only_an_admin_may_approve_in_a_group(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = telegram_like()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=CONFIG) as app:
        run_shell(fake, "echo approved > made.txt")
        await rec.say("make the file", chat_id="g1", user="boss", group=True)
        await wait_for(lambda: bool(buttons(rec)))
        approve = buttons(rec)[0]
        assert re.fullmatch(r"/approve [0-9a-f]{8} once", approve)
        await rec.say(approve, chat_id="g1", user="bob", group=True)  # a member presses Approve
        await wait_for(lambda: "Only an admin of this bot can approve or deny tool actions." in rec.texts("g1"))
        assert not (chat_folder(app, "g1") / "made.txt").exists()
        await rec.say(approve, chat_id="g1", user="boss", group=True)
        await wait_for(lambda: "done" in rec.texts("g1"))
        assert (chat_folder(app, "g1") / "made.txt").read_text() == "approved\n"


async def test_a_command_that_hides_characters_is_refused_before_anyone_sees_it(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = telegram_like()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=CONFIG) as app:
        run_shell(fake, "echo pwned > spoof.txt #\r\x1b[2Kls -la")
        await rec.say("list files", chat_id="dm-boss", user="boss")
        await wait_for(lambda: "done" in rec.texts("dm-boss"))
        assert rec.texts("dm-boss") == ["done"] and buttons(rec) == []
        told = fake.requests[1]["body"]["messages"][-1]["content"]
        assert "invisible or control characters (U+000D, U+001B)" in told
        assert not (chat_folder(app, "dm-boss") / "spoof.txt").exists()


async def test_a_long_command_is_shown_cut_with_a_count(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = telegram_like()
    command = "echo " + "x" * 3000
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=CONFIG):
        run_shell(fake, command)
        await rec.say("echo a lot", chat_id="dm-boss", user="boss")
        await wait_for(lambda: bool(buttons(rec)))
        prompt = rec.texts("dm-boss")[0]
        assert f"```\n{command[:MAX_SHOWN]} … ({len(command) - MAX_SHOWN} more characters)\n```" in prompt
        await rec.say(buttons(rec)[1], chat_id="dm-boss", user="boss")  # Deny
        await wait_for(lambda: "done" in rec.texts("dm-boss"))


def test_start_up_refuses_shell_without_admins(tmp_path: Path) -> None:
    config = write_config(tmp_path, tools={"shell_enabled": True})
    env = child_env(OPENAI_BASE_URL="http://127.0.0.1:9/v1", TELEGRAM_BOT_TOKEN="123456:" + "A" * 35,
                    TELEGRAM_API_BASE="http://127.0.0.1:9")
    rc, output = run_cli("--config", str(config), "run", env=env)
    assert rc == 2
    assert ("bothub: tools.shell_enabled is on, but telegram has no admins, so nobody could approve a shell "
            "command: set telegram.access.admins") in output


async def test_doctor_names_missing_admins(tmp_path: Path, fake: FakeOpenAI,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    tg = FakeTelegram()
    await tg.start()
    try:
        env = tg.env
        cfg, full_env = make_config(tmp_path, fake.base_url, {"tools": {"shell_enabled": True}}, env)
        assert await doctor.run(cfg, full_env) == 1
    finally:
        await tg.stop()
    out = capsys.readouterr().out
    assert "✔ telegram: token accepted" in out
    assert "✔ shell: bubblewrap sandbox works" in out
    assert "✘ shell: tools.shell_enabled is on, but telegram has no admins" in out
