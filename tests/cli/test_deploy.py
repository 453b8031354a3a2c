"""deploy/: the systemd unit passes `systemd-analyze verify`; the Dockerfile copies what exists and runs bothub."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from bot.config import load_config

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
