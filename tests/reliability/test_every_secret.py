"""Every declared secret — each adapter spec's `secrets` and the core ones — set at once with a value of its own,
then looked for where it must never appear: a child process's environment, the process's output and logs, and
the server's `/metrics`, `/readyz` and `/healthz`. A new secret in a spec is covered without touching this file."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.adapter import installed_specs
from bot.ops.redact import CORE_SECRET_ENV_VARS
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import running_app
from tests.reliability.test_process import child_env, write_config
from tests.reliability.test_secrets_process import run_code


def declared() -> list[str]:
    names = [*CORE_SECRET_ENV_VARS, *(name for spec in installed_specs() for name in spec.secrets)]
    assert {"OPENAI_API_KEY", "BOTHUB_ADMIN_PASSWORD", "TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN",
            "FEISHU_APP_SECRET"} <= set(names), names
    return names


def every_secret(database_url: str) -> dict[str, str]:
    """A distinct, unguessable-looking value per declared name (the database URL must be one that works)."""
    values = {name: f"{name.lower().replace('_', '')}-S3cr3t-{i:02d}-Vq8" for i, name in enumerate(declared())}
    values["BOTHUB_DATABASE_URL"] = database_url
    return values


def leaks(text: str, secrets: dict[str, str]) -> list[str]:
    return [name for name, value in secrets.items() if value in text]


@pytest.mark.timeout(240)
def test_no_declared_secret_reaches_a_child_process_or_the_output(tmp_path: Path) -> None:
    """The real CLI entry point, then a child process printing its environment and a log line naming every
    value: what the shell tool's sandbox and MCP servers inherit is what any child of the process gets."""
    secrets = every_secret("postgresql://bothub:db-Passw0rd-Zq1@127.0.0.1:1/none")
    code = ("import logging, subprocess, sys; from bot.cli import main; main.main(sys.argv[1:]); "
            "print(subprocess.run(['env'], capture_output=True, text=True).stdout); "
            f"logging.getLogger('bothub.test').error('values: %s', {list(secrets.values())!r})")
    rc, output = run_code(code, "--config", str(write_config(tmp_path)), "init", str(tmp_path / "ws"),
                          env=child_env(**secrets, FEISHU_APP_ID="cli_x"))
    assert rc == 0, output
    assert "values: [" in output and "FEISHU_APP_ID=cli_x" in output  # the log line and the env did print
    assert leaks(output, secrets) == []
    assert [name for name in secrets if f"{name}=" in output] == []


async def test_no_declared_secret_is_shown_by_metrics_or_readyz(tmp_path: Path, fake: FakeOpenAI) -> None:
    secrets = every_secret("")
    del secrets["BOTHUB_DATABASE_URL"]  # the embedded store, here
    del secrets["OPENAI_API_KEY"]  # the fake model checks its own key
    async with running_app(tmp_path, fake.base_url, config={"server": {"enabled": True, "port": 0}, "platforms": []},
                           env=secrets) as app, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{app.web_port}"
        pages = []
        for path in ("/metrics", "/readyz", "/healthz"):
            async with http.get(base + path) as response:
                assert response.status == 200, path
                pages.append(await response.text())
    assert "bothub" in pages[0] and "ready" in pages[1]
    assert leaks("\n".join(pages), secrets) == []


async def bothub_cli(tmp_path: Path, env: dict[str, str], *args: str, stdin: str = "") -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(tmp_path / "data"), *args, cwd=tmp_path, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(stdin.encode()), 120)
    assert proc.returncode == 0, out.decode()
    return out.decode()


@pytest.mark.timeout(240)
async def test_no_declared_secret_reaches_an_export(tmp_path: Path, fake: FakeOpenAI) -> None:
    """A console turn whose approved shell command prints its environment, then `bothub export` of that
    conversation, both with every secret set: the tree keeps the tool's output, and that output must not."""
    secrets = every_secret("")
    del secrets["BOTHUB_DATABASE_URL"], secrets["OPENAI_API_KEY"]  # the embedded store; the fake model's own key
    env = child_env(fake, **secrets, BOTHUB_LOG_LEVEL="WARNING")
    (tmp_path / "shell.yaml").write_text("tools:\n  shell_enabled: true\n", encoding="utf-8")
    fake.script(ToolCalls([("s1", "shell", json.dumps({"command": "env; echo env-printed"}))]), Text("done"))
    said = await bothub_cli(tmp_path, env, "--config", str(tmp_path / "shell.yaml"), "chat",
                            stdin="show me the environment\n/approve\n/status\n/tree\n")
    assert "done" in said, said
    conv_id = re.search(r"== Conversation (\w{8})", said)
    assert conv_id is not None, said
    exported = await bothub_cli(tmp_path, env, "export", conv_id.group(1), "--chat", "console:local")
    assert "env-printed" in exported and "PATH=" in exported, exported  # the tool's output is in the export
    assert leaks(exported, secrets) == []
