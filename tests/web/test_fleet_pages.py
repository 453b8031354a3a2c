"""Issue 30: agents, bots and bindings made on the dashboard while the hub runs, in one real Chromium shared by
the module (each test goes on from where the last one left the fleet): a new agent, its SOUL.md edited and the
prompt preview following; a second Telegram bot connected (a wrong token refused by the platform, the right one
stored and never shown again) and bound, answering within 5 s with that agent's persona while the default bot is
not restarted; the figures per agent on the overview and in /metrics; the bot disabled."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import TOKEN
from tests.fakes.telegram_cloud import TelegramCloud
from tests.fleet.conftest import KEY, SUPPORT_TOKEN
from tests.harness import wait_for
from tests.web.browser import chromium
from tests.web.conftest import Dashboard, serving, sign_in

pytestmark = pytest.mark.asyncio(loop_scope="module")
PERSONA = "You are Helper, the support desk. persona-helper"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def cloud() -> AsyncIterator[TelegramCloud]:
    server = TelegramCloud()
    await server.start()
    server.add_bot(TOKEN, "hub_test_bot", 1000001)
    server.add_bot(SUPPORT_TOKEN, "support_bot", 2000002)
    yield server
    await server.stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub(tmp_path_factory: pytest.TempPathFactory, cloud: TelegramCloud) -> AsyncIterator[Dashboard]:
    fake = FakeOpenAI()  # echoes the last user message
    await fake.start()
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": cloud.api_base, "BOTHUB_SECRET_KEY": KEY}
    try:  # fleet.poll far off: a dashboard change is applied here at once, not at the next look
        async with serving(tmp_path_factory.mktemp("hub"), fake, ("telegram",), config={"fleet": {"poll": 60}},
                           env=env) as running:
            running.fake = fake  # type: ignore[attr-defined]
            yield running
    finally:
        await fake.stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def page(hub: Dashboard) -> AsyncIterator[Page]:
    async with chromium(hub.app.cfg.data_dir.parent) as browser:
        await sign_in(browser, hub)
        await browser.page.wait_for_url(hub.url("/overview"))
        yield browser.page


def fake_of(hub: Dashboard) -> FakeOpenAI:
    return hub.fake  # type: ignore[attr-defined, no-any-return]


async def test_a_new_agent_and_its_soul_shown_in_the_prompt_preview(hub: Dashboard, page: Page) -> None:
    await page.click("nav#nav >> text=Agents")
    await expect(page.locator("table.agents tr[data-agent=default]")).to_be_visible()
    await page.fill("form.new-agent input[name=name]", "Helper!")  # not a name: refused, said why
    await page.click("form.new-agent button[type=submit]")
    await expect(page.locator("p.error")).to_contain_text("a name is 1-32 of a-z")
    await page.fill("form.new-agent input[name=name]", "helper")
    await page.fill("form.new-agent input[name=model]", "helper-model")
    await page.click("form.new-agent button[type=submit]")
    await expect(page.locator("p.notice")).to_contain_text("Agent helper saved")
    assert (hub.app.cfg.data_dir / "ws" / "helper" / "SOUL.md").is_file()  # its own workspace, seeded
    preview = page.locator("pre.prompt-text")
    await expect(preview).to_contain_text("[SECTION: SOUL]")
    assert "persona-helper" not in await preview.inner_text()
    before = await page.locator("p.budget").inner_text()
    await expect(page.locator("table.sections tr", has_text="SOUL")).to_contain_text("P0")
    await page.fill("form.workspace-file textarea", PERSONA)
    await page.click("form.workspace-file button[type=submit]")
    await expect(page.locator("p.notice")).to_contain_text("SOUL.md of helper saved")
    await expect(preview).to_contain_text("persona-helper")
    assert await page.locator("p.budget").inner_text() != before  # the budget line follows the file
    await page.click("nav.files >> text=USER.md")
    await page.fill("form.workspace-file textarea", "word " * 3000)  # over P1's budget: cut, and shown so
    await page.click("form.workspace-file button[type=submit]")
    await expect(page.locator("table.sections tr", has_text="USER")).to_contain_text("trimmed to its budget")


async def test_a_bot_connected_and_bound_on_the_dashboard_answers_within_5_s_with_that_agent(
        hub: Dashboard, page: Page, cloud: TelegramCloud) -> None:
    default, support = cloud.bots[TOKEN], cloud.bots[SUPPORT_TOKEN]
    started = len(default.calls_of("getMe"))
    await page.click("nav#nav >> text=Bots")
    await expect(page.locator("table.identities tr[data-identity=telegram]")).to_contain_text("running")
    await page.select_option("form.pick-platform select", "telegram")
    await page.click("form.pick-platform button")
    await page.fill("form.connect input[name=name]", "support")
    await page.fill("form.connect input[name=cred_TELEGRAM_BOT_TOKEN]", "999999:NOT-A-BOT")
    await page.click("form.connect button[type=submit]")
    await expect(page.locator("p.error")).to_contain_text("support not connected")  # the platform said no
    assert "NOT-A-BOT" not in await page.content() and "support" not in (await hub.app.fleet.load()).identities
    await page.fill("form.connect input[name=cred_TELEGRAM_BOT_TOKEN]", SUPPORT_TOKEN)
    typed = time.monotonic()
    await page.click("form.connect button[type=submit]")
    await expect(page.locator("p.notice")).to_contain_text("support connected")
    await wait_for(lambda: bool(support.calls_of("getUpdates")), within=5)
    row = page.locator("table.identities tr[data-identity=support]")
    await page.reload()
    await expect(row).to_contain_text("running")
    await expect(row).to_contain_text("TELEGRAM_BOT_TOKEN=••••OKEN")
    assert SUPPORT_TOKEN not in await page.content()  # never shown again
    await page.select_option("form.new-binding select[name=identity]", "support")
    await page.select_option("form.new-binding select[name=agent]", "helper")
    await page.click("form.new-binding button[type=submit]")
    await expect(page.locator("table.bindings tr[data-binding='support/*/*/*/*']")).to_contain_text("helper")
    support.inject_message(42, "hi helper")
    await wait_for(lambda: support.bot_texts(42) != [], within=5)
    print(f"\nconnect clicked → the new bot's first answer with its agent: {time.monotonic() - typed:.2f} s")
    assert time.monotonic() - typed < 5 + 5  # the 5 s after binding, plus the connect's own check
    request = fake_of(hub).requests[-1]["body"]
    assert request["model"] == "helper-model" and "persona-helper" in request["messages"][0]["content"]
    assert len(default.calls_of("getMe")) == started  # the default bot was not restarted
    default.inject_message(7, "still there?")
    await wait_for(lambda: default.bot_texts(7) != [], within=5)
    assert "persona-helper" not in fake_of(hub).requests[-1]["body"]["messages"][0]["content"]


async def test_the_figures_per_agent_on_the_overview_and_in_metrics(hub: Dashboard, page: Page) -> None:
    await page.click("nav#nav >> text=Overview")
    row = page.locator("table.agent-figures tr[data-agent=helper][data-identity=support]")
    await expect(row.locator("td.answers")).to_have_text("1")
    await expect(page.locator("table.agent-figures tr[data-agent=default][data-identity=telegram] td.answers"
                              )).to_have_text("1")
    async with aiohttp.ClientSession() as http, http.get(hub.url("/metrics")) as response:
        text = await response.text()
    assert 'bothub_agent_answers_total{agent="helper",identity="support"} 1.0' in text
    assert 'bothub_agent_first_text_seconds_count{agent="helper",identity="support"} 1.0' in text
    assert "chat" not in {label for line in text.splitlines() if line.startswith("bothub_agent_")
                          for label in line[line.find("{") + 1:line.find("}")].split(",")}


async def test_an_agent_switched_off_gives_its_place_to_the_default_one(hub: Dashboard, page: Page,
                                                                       cloud: TelegramCloud) -> None:
    support = cloud.bots[SUPPORT_TOKEN]
    await page.goto(hub.url("/agents/edit?name=helper"))
    await page.uncheck("form.agent-settings input[name=enabled]")
    await page.click("form.agent-settings button[type=submit]")
    await expect(page.locator("p.notice")).to_contain_text("Agent helper saved")
    await page.click("nav#nav >> text=Agents")
    await expect(page.locator("table.agents tr[data-agent=helper]")).to_contain_text("off")
    support.inject_message(43, "who answers now?")
    await wait_for(lambda: support.bot_texts(43) != [], within=5)
    request = fake_of(hub).requests[-1]["body"]
    assert request["model"] == "fake-model" and "persona-helper" not in request["messages"][0]["content"]
    await page.goto(hub.url("/lang?to=zh&next=/agents"))  # the pages in Chinese
    await expect(page.locator("h1")).to_have_text("智能体")
    await expect(page.locator("table.agents tr[data-agent=helper]")).to_contain_text("停用")
    await page.goto(hub.url("/lang?to=en&next=/agents"))


async def test_the_pages_and_their_forms_need_a_signed_in_session(hub: Dashboard) -> None:
    async with aiohttp.ClientSession() as http:
        for path in ("/agents", "/agents/edit?name=helper", "/identities"):
            async with http.get(hub.url(path), allow_redirects=False) as response:
                assert response.status == 302 and response.headers["Location"].startswith("/login")
        for path in ("/agents/save", "/agents/file", "/identities/connect", "/identities/switch", "/bindings",
                     "/bindings/remove"):
            async with http.post(hub.url(path), data={"name": "x"}) as response:
                assert response.status == 401


async def test_a_bot_disabled_on_the_dashboard_stops_and_the_change_is_audited(hub: Dashboard, page: Page) -> None:
    await page.click("nav#nav >> text=Bots")
    await page.click("table.identities tr[data-identity=support] >> text=Disable")
    await expect(page.locator("p.notice")).to_contain_text("Identity support disabled")
    await wait_for(lambda: "support" not in hub.app.bots.running, within=5)
    await expect(page.locator("table.identities tr[data-identity=support]")).to_contain_text("stopped")
    changes = [(c.actor, c.kind, c.name) for c in await hub.app.fleet.changes()]
    assert ("dashboard", "identity", "support") in changes and ("dashboard", "agent", "helper") in changes
    await page.click("nav#nav >> text=Admin")
    await expect(page.locator("table.audit")).to_contain_text("identity-connect")


async def sign_in_as(page: Page, hub: Dashboard, account: str, password: str) -> None:
    await page.click("form.logout button")
    await page.fill("input[name=account]", account)
    await page.fill("input[name=password]", password)
    await page.click("form.login button[type=submit]")


async def test_accounts_see_only_their_agents_part_and_a_viewer_only_reads(hub: Dashboard, page: Page) -> None:
    await page.click("nav#nav >> text=Accounts")
    for name, role in (("ann", "admin"), ("vic", "viewer")):
        await page.fill("form.new-account input[name=name]", name)
        await page.select_option("form.new-account select[name=role]", role)
        await page.check("form.new-account input[name=agents][value=helper]")
        await page.fill("form.new-account input[name=password]", f"{name}-password-1")
        await page.click("form.new-account button[type=submit]")
        await expect(page.locator("p.notice")).to_contain_text(f"Account {name} saved")
    await expect(page.locator("table.accounts tr[data-account=ann]")).to_contain_text("helper")
    await sign_in_as(page, hub, "ann", "not her password")
    await expect(page.locator("p.error")).to_be_visible()
    await page.fill("input[name=account]", "ann")
    await page.fill("input[name=password]", "ann-password-1")
    await page.click("form.login button[type=submit]")
    await page.wait_for_url(hub.url("/chats"))  # an account's home: its chats
    assert await page.locator("nav#nav a[href='/admin']").count() == 0
    listed = await page.locator("table").inner_text()
    assert "telegram@support:42" in listed and "telegram:7" not in listed  # the default agent's chat is not hers
    for path, status in (("/chats/view?chat=telegram:7", 404), ("/chats/view?chat=telegram@support:42&chat=telegram:7",
                                                                  404), ("/admin", 403), ("/overview", 403),
                         ("/identities", 403), ("/agents/edit?name=default", 403), ("/search?q=hi", 403)):
        response = await page.goto(hub.url(path))
        assert response is not None and response.status == status, path
    await page.goto(hub.url("/chats/view?chat=telegram@support:42"))
    await expect(page.locator("main")).to_contain_text("telegram@support:42")
    await page.click("nav#nav >> text=Agents")
    rows = await page.locator("table.agents tbody tr").all()
    assert [await r.get_attribute("data-agent") for r in rows] == ["helper"]
    await page.click("table.agents tr[data-agent=helper] a.edit")
    await page.check("form.agent-settings input[name=enabled]")  # she switches her agent back on
    await page.click("form.agent-settings button[type=submit]")
    await expect(page.locator("p.notice")).to_contain_text("Agent helper saved")
    assert ("dashboard:ann", "agent", "helper") in [(c.actor, c.kind, c.name) for c in await hub.app.fleet.changes()]
    await sign_in_as(page, hub, "vic", "vic-password-1")
    await page.wait_for_url(hub.url("/chats"))
    await page.goto(hub.url("/agents/edit?name=helper"))
    await page.fill("form.workspace-file textarea", "a viewer's edit")
    await page.click("form.workspace-file button[type=submit]")
    await expect(page.locator("body")).to_contain_text("may not open that page")
    soul = (hub.app.cfg.data_dir / "ws" / "helper" / "SOUL.md").read_text(encoding="utf-8")
    assert soul == PERSONA  # unchanged
