"""The browser chat: each signed-in dashboard session is a chat of its own, answers stream over SSE.

It rides on the dashboard's sign-in: the pages and endpoints live under /webchat, which the dashboard's
middleware protects (session cookie, CSRF on the send). Whoever signed in is the admin, so there are no
access rules of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from adapters.web.adapter import WebChatAdapter
from bot.adapter import AccessConfig, AdapterServices, AdapterSpec, PlatformConfig


class WebConfig(PlatformConfig):
    access: AccessConfig | None = None


def _create(section: WebConfig, env: Mapping[str, str], services: AdapterServices) -> WebChatAdapter:
    return WebChatAdapter(services)


SPEC = AdapterSpec(name="web", config_model=WebConfig, create=_create)
