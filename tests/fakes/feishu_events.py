"""Feishu webhook events for tests: message and card-action payloads, encrypted and signed like Feishu."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from typing import Any

from Crypto.Cipher import AES  # pycryptodome, a lark-oapi dependency

APP_ID = "cli_test"


# ---- webhook events, encrypted and signed like Feishu -----------------------------------------
def encrypt(encrypt_key: str, plaintext: str) -> str:
    """AES-256-CBC, key = sha256(encrypt_key), random IV prepended, PKCS7 padding, base64."""
    key = hashlib.sha256(encrypt_key.encode()).digest()
    iv = os.urandom(16)
    data = plaintext.encode()
    pad = 16 - len(data) % 16
    return base64.b64encode(iv + AES.new(key, AES.MODE_CBC, iv).encrypt(data + bytes([pad]) * pad)).decode()


def signed_request(encrypt_key: str, event: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """Body and headers of a webhook push: X-Lark-Signature = sha256(ts + nonce + key + body)."""
    body = json.dumps({"encrypt": encrypt(encrypt_key, json.dumps(event))}).encode()
    timestamp, nonce = str(int(time.time())), os.urandom(4).hex()
    signature = hashlib.sha256((timestamp + nonce + encrypt_key).encode() + body).hexdigest()
    return body, {"Content-Type": "application/json", "X-Lark-Request-Timestamp": timestamp,
                  "X-Lark-Request-Nonce": nonce, "X-Lark-Signature": signature}


def _header(event_id: str, event_type: str, token: str) -> dict[str, Any]:
    return {"event_id": event_id, "token": token, "create_time": str(int(time.time() * 1000)),
            "event_type": event_type, "tenant_key": "tk", "app_id": APP_ID}


def message_event(
    event_id: str, *, text: str = "hello", chat_type: str = "group", chat_id: str = "oc_group1",
    mentions: tuple[tuple[str, str, str], ...] = (), message_type: str = "text",
    content: dict[str, Any] | None = None, thread_id: str = "", message_id: str = "",
    sender_type: str = "user", token: str = "",
) -> dict[str, Any]:
    """An im.message.receive_v1 event; `mentions` are (placeholder key, open_id, name)."""
    return {"schema": "2.0", "header": _header(event_id, "im.message.receive_v1", token), "event": {
        "sender": {"sender_id": {"open_id": "ou_user1", "user_id": "u1", "union_id": "on_u1"},
                   "sender_type": sender_type, "tenant_key": "tk"},
        "message": {"message_id": message_id or f"om_in_{event_id}", "root_id": "", "parent_id": "",
                    "create_time": str(int(time.time() * 1000)), "chat_id": chat_id, "thread_id": thread_id,
                    "chat_type": chat_type, "message_type": message_type,
                    "content": json.dumps(content if content is not None else {"text": text}),
                    "mentions": [{"key": key, "id": {"open_id": open_id, "user_id": "", "union_id": ""},
                                  "name": name, "tenant_key": "tk"} for key, open_id, name in mentions]}}}


def card_action_event(
    event_id: str, action: str, *, card_message_id: str, chat_id: str = "oc_group1", token: str = ""
) -> dict[str, Any]:
    """A card.action.trigger callback for a button whose value is {"action": <command text>}."""
    return {"schema": "2.0", "header": _header(event_id, "card.action.trigger", token), "event": {
        "operator": {"tenant_key": "tk", "user_id": "u1", "open_id": "ou_user1", "union_id": "on_u1"},
        "token": "c-update-token", "action": {"value": {"action": action}, "tag": "button"},
        "host": "im_message", "context": {"open_message_id": card_message_id, "open_chat_id": chat_id}}}


def menu_event(event_id: str, event_key: str, *, open_id: str = "ou_user1", token: str = "") -> dict[str, Any]:
    """application.bot.menu_v6: a press on the bot's custom menu in the one-to-one chat (no chat id)."""
    return {"schema": "2.0", "header": _header(event_id, "application.bot.menu_v6", token), "event": {
        "operator": {"operator_name": "Ann", "operator_id": {"open_id": open_id, "user_id": "u1",
                                                              "union_id": "on_u1"}},
        "event_key": event_key, "timestamp": int(time.time())}}
