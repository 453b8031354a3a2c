"""What a `bothub run` process loads: facts about imports (not timings) that keep its memory in budget.

Resident memory each costs when imported into a bare interpreter (bench/results.md, "Imports"): lark_oapi
≈ 168 MB (any submodule runs its package __init__), openai 58, asyncpg 25, pypdf 29, Pillow 14. The
Feishu adapter speaks the platform's protocols itself; the others are imported where they are used.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WATCHED = ("lark_oapi", "google.protobuf", "Crypto", "cryptography", "requests", "asyncpg", "PIL", "pypdf", "mcp",
           "croniter", "click", "pygments", "telegram")


def loaded_after(code: str) -> set[str]:
    """Which of WATCHED a fresh interpreter has in sys.modules after running `code`."""
    probe = f"import sys; {code}; print(' '.join(m for m in {WATCHED!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True,
                         timeout=120).stdout
    return set(out.split())


def test_the_feishu_adapter_loads_neither_lark_oapi_nor_protobuf_nor_aes() -> None:
    # AES (cryptography) comes with the first encrypted webhook event; the long connection never needs it
    assert loaded_after("import adapters.feishu, adapters.feishu.adapter, adapters.feishu.longconn") == set()


def test_the_app_and_cli_load_no_optional_backend_media_or_cron_library() -> None:
    assert loaded_after("import bot.cli.main, bot.app") == set()


def test_the_telegram_adapter_leaves_out_the_extras_python_telegram_bot_would_load() -> None:
    # cryptography (Telegram Passport) and click/pygments (httpx's command line): bothub uses neither
    create = ("from adapters.telegram import SPEC\ntry:\n    SPEC.create(SPEC.config_model(), {}, None)\n"
              "except Exception as e:\n    refused = str(e)\nassert 'TELEGRAM_BOT_TOKEN' in refused")
    assert loaded_after(create) == {"telegram"}
    # still importable afterwards, for Feishu's encrypted webhooks
    decrypt = ("from adapters.feishu import crypto; from tests.fakes.feishu_events import encrypt; "
               "assert crypto.decrypt('k', encrypt('k', 'hi')) == 'hi'")
    assert "cryptography" in loaded_after(f"{create}\n{decrypt}")


def test_an_encrypted_event_brings_in_aes_only_then() -> None:
    code = ("from adapters.feishu import crypto; from tests.fakes.feishu_events import encrypt; "
            "assert 'cryptography' not in sys.modules; assert crypto.decrypt('k', encrypt('k', 'hi')) == 'hi'")
    assert "cryptography" in loaded_after(code)


def test_the_dingtalk_spec_and_adapter_load_no_sdk_until_stream_mode_starts() -> None:
    # dingtalk-stream (and the `requests` it imports) comes with the Stream connection, not with the spec
    assert loaded_after("import adapters.dingtalk, adapters.dingtalk.adapter") == set()
    assert loaded_after("import adapters.dingtalk.stream") == {"requests"}


def test_the_dingtalk_stream_costs_at_most_25_mb_over_the_app() -> None:
    code = ("import resource, bot.app; before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
            "import adapters.dingtalk.adapter, adapters.dingtalk.stream; "
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                         timeout=120).stdout
    assert float(out) <= 25.0


def test_the_slack_adapter_stays_inside_its_25_mb_and_loads_nothing_watched() -> None:
    # measured after the app itself (aiohttp, pydantic are the hub's anyway): slack_sdk's client, Socket Mode and
    # the signature check cost ≈ 4 MB resident
    code = ("\ndef rss(): return int(open('/proc/self/statm').read().split()[1]) * 4096\n"
            "import bot.app, bot.cli.main\nbefore = rss()\nimport adapters.slack, adapters.slack.adapter\n"
            "assert rss() - before <= 25_000_000, rss() - before")
    assert loaded_after(code) == set()
