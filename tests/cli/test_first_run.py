"""Issue 12 §7: the README's first-run path, step by step, in a fresh clone with the console and a fake LLM.

The steps are read from the README's `<!-- first-run -->` block, so the README and this test cannot drift
apart. To keep the run short and offline-friendly, the clone's .venv is created beforehand and sees this
checkout's installed dependencies (a .pth line); `make run` then does everything else it does on a first run.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.fakes.openai_api import API_KEY, FakeOpenAI
from tests.harness import answer_requests

REPO = Path(__file__).resolve().parents[2]


def first_run_steps() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- first-run -->", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def seeded_venv(clone: Path) -> None:
    """A .venv in the clone that already sees our dependencies, so `make run` installs only bothub itself."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(clone / ".venv")], check=True, timeout=120)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (clone / ".venv" / "lib" / version / "site-packages" / "outer.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")


def clone_and_configure(tmp_path: Path, steps: list[str], llm_url: str) -> Path:
    """Steps 1 and 2 (clone, copy .env.example), then "edit .env": the key, and here a local endpoint."""
    clone = tmp_path / "bothub"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    subprocess.run(steps[1], shell=True, cwd=clone, check=True, timeout=30)
    env_file = clone / ".env"
    text = env_file.read_text(encoding="utf-8")
    text = text.replace("OPENAI_API_KEY=sk-your-key-here", f"OPENAI_API_KEY={API_KEY}")
    (clone / "test-config.yaml").write_text("server:\n  port: 0\n", encoding="utf-8")  # 8080 may be taken here
    env_file.write_text(text + f"OPENAI_BASE_URL={llm_url}\nBOTHUB_MODEL=fake-model\n"
                        f"BOTHUB_CONFIG={clone / 'test-config.yaml'}\n", encoding="utf-8")
    seeded_venv(clone)
    return clone


@pytest.mark.timeout(600)
async def test_the_readme_first_run_path_works_in_a_fresh_clone(tmp_path: Path) -> None:
    steps = first_run_steps()
    assert steps == ["git clone <this repository> bothub && cd bothub", "cp .env.example .env", "make run"]
    llm = FakeOpenAI()
    await llm.start()
    try:
        clone = await asyncio.to_thread(clone_and_configure, tmp_path, steps, llm.base_url)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("BOTHUB_", "OPENAI_", "TELEGRAM_", "DISCORD_", "FEISHU_", "SLACK_", "PYTHON",
                                    "VIRTUAL_ENV"))}
        proc = await asyncio.create_subprocess_exec(
            "make", "run", cwd=clone, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(b"hello from a newcomer\n/status\n"), 540)
    finally:
        await llm.stop()
    said = out.decode(errors="replace")
    assert proc.returncode == 0, said[-3000:]
    assert "==> first run: creating .venv and installing bothub" in said  # progress, not a silent minute
    assert "hello from a newcomer" in said.split("bin/bothub run", 1)[1]  # the console chat answered
    assert "Messages: 2" in said
    assert "http://127.0.0.1:" in said and "http://127.0.0.1:8080" not in said  # moved off the default port
    assert "/login?token=" in said and "&next=/webchat" in said  # the web chat is one click away, signed in
    assert (clone / "data" / "bothub.sqlite3").exists() and (clone / ".venv" / "bin" / "bothub").exists()
    assert len(answer_requests(llm)) == 1  # and perhaps the title, asked for in the background
