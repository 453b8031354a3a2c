"""deploy/: the systemd unit passes `systemd-analyze verify`; the Dockerfile copies what exists and runs bothub."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import yaml

from bot.cli import envfile
from bot.config import load_config
from tests.cli.test_starts_anywhere import line_with
from tests.fakes.openai_api import API_KEY, FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def test_systemd_unit_verifies_cleanly(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze, ".ci/run installs systemd; install it locally with apt-get install systemd"
    unit = (DEPLOY / "bothub.service").read_text(encoding="utf-8")
    assert "ExecStart=/opt/bothub/.venv/bin/bothub run" in unit
    program = tmp_path / ".venv" / "bin" / "bothub"  # verify checks that ExecStart exists and is executable
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    local = tmp_path / "bothub.service"
    local.write_text(unit.replace("/opt/bothub", str(tmp_path)), encoding="utf-8")
    done = subprocess.run([analyze, "verify", str(local)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr  # unknown keys are only warned about


def test_dockerfile_copies_existing_paths_and_its_config_loads() -> None:
    lines = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines()
    copies = [line.split()[1:-1] for line in lines if line.startswith("COPY ")]
    assert copies and all((REPO / src).exists() for sources in copies for src in sources)
    assert lines[-1] == 'CMD ["bothub", "run"]'
    cfg = load_config(DEPLOY / "docker.yaml", env={})
    assert cfg.server.enabled and cfg.server.host == "0.0.0.0"
    assert yaml.safe_load((DEPLOY / "docker.yaml").read_text(encoding="utf-8"))["server"]["port"] == 8080


def test_readme_command_table_lists_every_command() -> None:
    from bot.commands import COMMANDS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Chat commands", 1)[1].split("\n\n", 2)[1]
    listed = {cell.split()[0].strip("`/").split("`")[0] for row in table.splitlines() if row.startswith("| `/")
              for cell in row.split("|")[1].split(",")}
    listed.discard("N")  # `/N` is the short form of `/goto N`
    assert listed == set(COMMANDS), (set(COMMANDS) - listed, listed - set(COMMANDS))


def test_compose_runs_postgresql_and_two_replicas_sharing_it() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))
    services = compose["services"]
    replicas = {name: s for name, s in services.items() if name.startswith("replica-")}
    assert services["postgres"]["image"].startswith("postgres:") and len(replicas) == 2
    for replica in replicas.values():
        assert replica["build"]["dockerfile"] == "deploy/Dockerfile"
        assert replica["environment"]["BOTHUB_DATABASE_URL"].startswith("postgresql://bothub:")
        assert replica["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert replica["volumes"] == ["bothub-data:/data"]  # chat folders follow the chat between replicas
    assert len({r["environment"]["BOTHUB_REPLICA_ID"] for r in replicas.values()}) == 2
    assert len({r["ports"][0] for r in replicas.values()}) == 2


async def test_the_image_config_starts_headless_with_only_the_copied_env(tmp_path: Path) -> None:
    """Friction 5: `docker run --env-file .env` (stdin closed, no BOTHUB_ADMIN_PASSWORD) exited 2. It serves
    /healthz, webhooks and the web chat now; the web chat and dashboard open only through the one-time sign-in
    link printed at start (issue 28: no open admin)."""
    llm = FakeOpenAI()
    await llm.start()
    copied = {**envfile.parse(REPO / ".env.example"), "OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": llm.base_url}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOTHUB_", "OPENAI_"))} | copied | {
        "BOTHUB_CONFIG": str(DEPLOY / "docker.yaml"), "BOTHUB_DATA_DIR": str(tmp_path / "data"), "BOTHUB_PORT": "0"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "run", cwd=tmp_path, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        link = (await line_with(proc, "sign in once with ")).split("sign in once with ", 1)[1].split(" ", 1)[0]
        where = await line_with(proc, "serving the web chat at http://")
        base = where.split(" at ", 1)[1].split("/webchat", 1)[0]
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:  # cookies on an IP
            async with http.get(f"{base}/healthz") as health:
                assert health.status == 200
            async with http.get(f"{base}/webchat", allow_redirects=False) as chat:
                assert chat.status != 200  # not open to whoever reaches the container
            async with http.get(link) as signed_in:  # the link leads into the web chat, once
                assert signed_in.status == 200 and signed_in.url.path == "/webchat"
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.communicate(), 30)
        await llm.stop()
    assert proc.returncode == 0


def test_compose_starts_with_only_the_copied_env() -> None:
    compose = (DEPLOY / "docker-compose.yml").read_text(encoding="utf-8")
    assert ":?" not in compose  # no variable the copied .env lacks stops `docker compose up`


def test_the_reverse_proxy_examples_stream_every_event_route_and_name_the_webhooks() -> None:
    """deploy/nginx.conf turns buffering off exactly for the routes that answer with server-sent events."""
    import re

    from adapters.feishu import FeishuConfig
    from adapters.telegram import TelegramConfig

    nginx = (DEPLOY / "nginx.conf").read_text(encoding="utf-8")
    caddy = (DEPLOY / "Caddyfile").read_text(encoding="utf-8")
    pattern = re.search(r"location ~ (\^/\S+) \{\n(?:.*\n)*?\s+proxy_buffering off;", nginx)
    assert pattern is not None
    streams = [path for path, _ in _event_routes()]
    assert streams and all(re.fullmatch(pattern.group(1), path) for path in streams)
    for webhook in (TelegramConfig().webhook_path, FeishuConfig().webhook_path):
        assert webhook in nginx
    assert "ssl_certificate " in nginx and "X-Forwarded-Proto" in nginx and "$http_upgrade" in nginx
    assert "reverse_proxy 127.0.0.1:8080" in caddy and "flush_interval -1" in caddy


def _event_routes() -> list[tuple[str, str]]:
    """(path, file) of every GET route named …/events (the server-sent event streams), read from the source."""
    import re

    found = []
    for source in [*(REPO / "bot").rglob("*.py"), *(REPO / "adapters").rglob("*.py")]:
        text = source.read_text(encoding="utf-8")
        routes = re.findall(r'add_(?:get|route)\((?:"GET", )?"(/[a-z/]*events)"', text)
        found += [(path, source.name) for path in routes]
    return found
