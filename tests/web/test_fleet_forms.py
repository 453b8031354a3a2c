"""The agents, bots, bindings and accounts forms sent wrong or about what is not there, as a stale page or a
hand-made request would (plain HTTP, no browser): each is refused with what the form needs or a notice, and nothing
is stored or audited; then what the right ones leave: bindings listed by precedence, an unchanged agent said so."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from bot.httpkit.auth import hash_password
from bot.i18n import t
from bot.live.console import MAX_FILE_CHARS
from bot.store.accounts import Account
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import TOKEN
from tests.fakes.telegram_cloud import TelegramCloud
from tests.fleet.conftest import SUPPORT_TOKEN
from tests.web.conftest import Dashboard, serving
from tests.web.test_admin_forms import post
from tests.web.test_api import signed_in

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Dashboard]:
    """The dashboard with the default Telegram bot, a second bot's token known to the cloud, no BOTHUB_SECRET_KEY."""
    cloud, fake = TelegramCloud(), FakeOpenAI()
    await cloud.start()
    await fake.start()
    cloud.add_bot(TOKEN, "hub_test_bot", 1000001)
    cloud.add_bot(SUPPORT_TOKEN, "support_bot", 2000002)
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": cloud.api_base}
    try:
        async with serving(tmp_path_factory.mktemp("hub"), fake, ("telegram",), config={"fleet": {"poll": 60}},
                           env=env) as running:
            yield running
    finally:
        await fake.stop()
        await cloud.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def signed(hub: Dashboard) -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        yield http, await signed_in(http, hub)


def refusal(status_and_body: tuple[int, str]) -> tuple[int, str]:
    """(status, the page's error paragraph)."""
    status, body = status_and_body
    found = re.search(r'<p class="error"[^>]*>(.*?)</p>', body, re.DOTALL)
    return status, html.unescape(found.group(1).strip()) if found else body


async def test_bots_that_cannot_be_connected_or_switched_are_refused(
        hub: Dashboard, signed: tuple[aiohttp.ClientSession, str]) -> None:
    http, csrf = signed
    connect = "/identities/connect"
    assert refusal(await post(http, hub, csrf, connect, name="support", platform="telegram")) == (
        400, t("en", "id_needs", fields="TELEGRAM_BOT_TOKEN"))
    assert refusal(await post(http, hub, csrf, connect, name="support", platform="carrier-pigeon")) == (
        400, t("en", "id_needs", fields="?"))
    status, error = refusal(await post(http, hub, csrf, connect, name="Bad Name!", platform="telegram",
                                       cred_TELEGRAM_BOT_TOKEN=SUPPORT_TOKEN))
    assert status == 400 and error.startswith("name: ") and SUPPORT_TOKEN not in error
    status, error = refusal(await post(http, hub, csrf, connect, name="support", platform="telegram",
                                       cred_TELEGRAM_BOT_TOKEN=SUPPORT_TOKEN))  # the platform says yes; no key
    assert status == 400 and "BOTHUB_SECRET_KEY is not set" in error
    status, error = refusal(await post(http, hub, csrf, connect, name="telegram", platform="telegram",
                                       cred_TELEGRAM_BOT_TOKEN=TOKEN))
    assert status == 400 and "is the platform's default identity" in error
    for name in ("nobody", "telegram"):  # unknown, and the default one (its settings are the config file's)
        assert await post(http, hub, csrf, "/identities/switch", name=name, enabled="on") == (
            400, "name a stored identity")
    catalog = await hub.app.fleet.load()
    assert list(catalog.identities) == ["telegram"] and await hub.app.fleet.changes() == []
    assert [e.action for e in await hub.app.store.dashboard.list_audit()] == []


async def test_bindings_listed_by_precedence_and_removed_once(
        hub: Dashboard, signed: tuple[aiohttp.ClientSession, str]) -> None:
    http, csrf = signed
    status, error = refusal(await post(http, hub, csrf, "/bindings", identity="ghost", agent="default"))
    assert status == 400 and "no identity named 'ghost'" in error
    status, error = refusal(await post(http, hub, csrf, "/bindings", identity="telegram", agent="default",
                                       kind="channel"))
    assert status == 400 and error.startswith("kind: ")
    made = [{"kind": "group"}, {"chat_id": "42", "thread_id": "7"}, {}, {"user_id": "9"}, {"chat_id": "42"}]
    for narrowed in made:
        status, _ = await post(http, hub, csrf, "/bindings", identity="telegram", agent="default", **narrowed)
        assert status == 303
    page = await (await http.get(hub.url("/identities"))).text()
    rows = re.findall(r'<tr data-binding="([^"]+)"><td>(\d)</td>', page)
    assert rows == [("telegram/42/7/*/*", "1"), ("telegram/42/*/*/*", "2"), ("telegram/*/*/9/*", "3"),
                    ("telegram/*/*/*/group", "4"), ("telegram/*/*/*/*", "5")]
    assert await post(http, hub, csrf, "/bindings/remove", key="telegram/42/*/*/*") == (
        303, t("en", "bd_removed", binding="telegram/42/*/*/*"))
    assert await post(http, hub, csrf, "/bindings/remove", key="telegram/42/*/*/*") == (
        303, t("en", "bd_none", binding="telegram/42/*/*/*"))
    assert "telegram/42/*/*/*" not in [b.key for b in (await hub.app.fleet.load()).bindings]
    audit = [e.action for e in await hub.app.store.dashboard.list_audit()]
    assert audit.count("bind") == len(made) and audit.count("unbind") == 1


async def test_agent_forms_refused_and_an_unchanged_agent_said_so(
        hub: Dashboard, signed: tuple[aiohttp.ClientSession, str]) -> None:
    http, csrf = signed
    async with http.get(hub.url("/agents/edit?name=nobody")) as response:
        assert response.status == 404
    async with http.get(hub.url("/agents/edit?name=default&file=../../etc/passwd")) as response:
        page = html.unescape(await response.text())
        assert response.status == 200 and '<input type="hidden" name="file" value="SOUL.md">' in page
    assert refusal(await post(http, hub, csrf, "/agents/save", name="default", new="1")) == (
        400, t("en", "ag_exists", name="default"))
    status, error = refusal(await post(http, hub, csrf, "/agents/save", name="default"))  # "enabled" unticked
    assert status == 400 and "the default agent cannot be disabled" in error
    form = {"name": "default", "enabled": "on", "admins": "7", "allow": "read_file"}
    assert await post(http, hub, csrf, "/agents/save", **form) == (303, t("en", "ag_saved", name="default"))
    assert await post(http, hub, csrf, "/agents/save", **form) == (303, t("en", "ag_unchanged", name="default"))
    for name, file in (("nobody", "SOUL.md"), ("default", "../secrets.env")):
        assert await post(http, hub, csrf, "/agents/file", name=name, file=file, text="x") == (
            400, "name an agent and one of its workspace files")
    status, error = refusal(await post(http, hub, csrf, "/agents/file", name="default", file="SOUL.md",
                                       text="x" * (MAX_FILE_CHARS + 1)))
    assert (status, error) == (400, f"SOUL.md: longer than {MAX_FILE_CHARS} characters")
    audit = [e.action for e in await hub.app.store.dashboard.list_audit()]
    assert audit.count("agent-set") == 1 and "workspace-file" not in audit


async def test_account_forms_refused_and_an_account_removed_once(
        hub: Dashboard, signed: tuple[aiohttp.ClientSession, str]) -> None:
    http, csrf = signed
    good = "a-long-password"
    for name, role in (("Ann!", "admin"), ("ann", "king")):
        assert refusal(await post(http, hub, csrf, "/accounts", name=name, role=role, password=good,
                                  agents="default")) == (400, t("en", "acc_bad", name=name))
    assert refusal(await post(http, hub, csrf, "/accounts", name="ann", role="admin", password="short",
                              agents="default")) == (400, t("en", "acc_short", n=10))
    assert refusal(await post(http, hub, csrf, "/accounts", name="ann", role="admin", password=good)) == (
        400, t("en", "acc_agents"))
    assert refusal(await post(http, hub, csrf, "/accounts", name="ann", role="viewer", password=good,
                              agents="nobody")) == (400, t("en", "acc_agents"))
    assert await hub.app.store.accounts.get("ann") is None
    assert await post(http, hub, csrf, "/accounts", name="ann", role="viewer", password=good, agents="default") == (
        303, t("en", "acc_saved", name="ann"))
    for notice in ("acc_removed", "acc_none"):
        assert await post(http, hub, csrf, "/accounts/remove", name="ann") == (303, t("en", notice, name="ann"))
    assert await hub.app.store.accounts.get("ann") is None
    audit = [e.action for e in await hub.app.store.dashboard.list_audit()]
    assert audit.count("account-set") == 1 and audit.count("account-remove") == 1


async def test_an_account_naming_a_chat_that_is_no_chat_key_finds_nothing(hub: Dashboard) -> None:
    store = hub.app.store
    await store.accounts.put(Account("ada", "viewer", ("default",)), hash_password("ada-password-1"))
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        await http.post(hub.url("/login"), data={"account": "ada", "password": "ada-password-1"})
        for chat in ("no-colon", "telegram:"):
            async with http.get(hub.url(f"/chats/view?chat={chat}")) as response:
                assert (response.status, await response.text()) == (404, "no such chat"), chat
        async with http.get(hub.url("/chats")) as response:
            assert response.status == 200  # signed in: the refusals above were hers, not a sign-in's
