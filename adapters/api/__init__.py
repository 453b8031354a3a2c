"""The HTTP API: other systems talk to the bot with a bearer token the dashboard (or `bothub api-token`) made.

Each token is its own namespace of chats: `POST /api/v1/chat/{conversation_key}/messages` speaks in the
chat "<token id>.<conversation_key>", so two tokens never see each other's conversations. The reply comes
back as JSON, as a server-sent event stream, or later in a POST to a callback URL (behind the same SSRF
guard as web_fetch). It runs when `api: {enabled: true}` or `platforms: [..., api]` says so.
"""

from __future__ import annotations

from collections.abc import Mapping

from adapters.api.adapter import ApiAdapter
from adapters.api.config import ApiConfig
from bot.adapter import AdapterServices, AdapterSpec


def _create(section: ApiConfig, env: Mapping[str, str], services: AdapterServices) -> ApiAdapter:
    return ApiAdapter(section, services)


SPEC = AdapterSpec(name="api", config_model=ApiConfig, create=_create)
