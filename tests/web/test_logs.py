"""The log view: the process's newest log lines, filtered by level, with secrets masked."""

from __future__ import annotations

import logging

import aiohttp

from tests.web.conftest import PASSWORD, Dashboard


async def test_the_log_view_tails_by_level_and_masks_secrets(dashboard: Dashboard,
                                                             http: aiohttp.ClientSession) -> None:
    await http.post(dashboard.url("/login"), data={"password": PASSWORD})
    log = logging.getLogger("bothub.test_logs")
    log.warning("someone typed the admin password %s", PASSWORD)  # a secret of this hub: masked
    log.error("a plain error line")
    page = await (await http.get(dashboard.url("/logs?level=WARNING"))).text()
    assert "someone typed the admin password ***" in page and PASSWORD not in page
    assert "a plain error line" in page and '<option value="WARNING" selected>' in page
    errors_only = await (await http.get(dashboard.url("/logs?level=ERROR&part=lines"))).text()
    assert "a plain error line" in errors_only and "admin password" not in errors_only
    assert "<html" not in errors_only  # the part the page refreshes, without the page around it
    async with aiohttp.ClientSession() as stranger:
        refused = await stranger.get(dashboard.url("/logs"), allow_redirects=False)
        assert refused.status == 302 and refused.headers["Location"].startswith("/login")
