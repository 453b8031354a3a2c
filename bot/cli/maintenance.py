"""One-shot maintenance commands: init, doctor, chats, export, import, pair, api-token, migrate-store,
set-password, forget."""

from __future__ import annotations

import argparse
import getpass
import importlib
import sys
from collections.abc import Mapping

from bot.agent.workspace import init_workspace
from bot.chats.api_tokens import ApiTokens
from bot.chats.forgetting import Forgetting
from bot.chats.pairing import Pairing
from bot.cli import skills_cli
from bot.config import Config
from bot.httpkit.auth import hash_password
from bot.i18n import t
from bot.store import Store
from bot.store.backends import POSTGRES, sqlite_path, store_for_url
from bot.store.transfer import TransferError, copy_sqlite_to_postgres
from bot.tree.jsonl import export_jsonl, import_jsonl
from bot.web.login import store_password_hash

MIN_PASSWORD = 8


async def run(cfg: Config, command: str, args: argparse.Namespace, env: Mapping[str, str]) -> int:
    lang = cfg.language
    if command == "init":
        path = args.path or cfg.workspace_dir
        created = init_workspace(path)
        print(t(lang, "cli_init_created", path=path, files=", ".join(created)) if created
              else t(lang, "cli_init_nothing", path=path))
        return 0
    if command == "doctor":
        doctor = importlib.import_module("bot.cli.doctor")
        return int(await doctor.run(cfg, env))
    if command == "set-password":
        return _set_password(cfg)
    if command == "replay":
        from bot.cli.replay import parse_day, replay_chat  # builds the whole app: only when asked

        since = parse_day(args.since, lang)
        return 2 if since is None else await replay_chat(cfg, env, args.chat, since, args.model)
    if command == "skills":
        return skills_cli.run(cfg, args)
    if command == "migrate-store":
        return await _migrate_store(args.source or cfg.database_url, args.target)
    database = sqlite_path(cfg.database_url)
    if command in ("chats", "export", "forget") and database is not None and not database.exists():
        print(t(lang, "cli_no_database", path=database), file=sys.stderr)
        return 1
    store = store_for_url(cfg.database_url, cfg.database.pool_size)
    await store.open()
    try:
        if command == "chats":
            return await _chats(store, lang)
        if command == "export":
            return await _export(store, args.chat, args.conversation_id)
        if command == "import":
            try:
                conv = import_jsonl(args.file.read_text(encoding="utf-8"), "")
            except (OSError, ValueError) as e:
                print(t(lang, "cli_import_failed", file=args.file, error=e), file=sys.stderr)
                return 1
            info = await store.conversations.import_tree(args.chat, conv)
            await store.conversations.set_active(args.chat, info.id)
            print(t(lang, "cli_imported", count=len(conv) - 1, id=info.id, chat=args.chat))
            return 0
        if command == "api-token":
            return await _api_token(ApiTokens(store.api_tokens, store.dashboard), args.action, args.value)
        if command == "forget":
            return await _forget(cfg, store, args.chat, args.user)
        if command == "pair":
            user = await Pairing(store.pairing).approve(args.platform, args.code)
            if user is None:
                print(t(lang, "cli_no_pairing", platform=args.platform, code=args.code), file=sys.stderr)
                return 1
            print(t(lang, "cli_paired", platform=args.platform, user=user))
            return 0
    finally:
        await store.close()
    return 2


async def _migrate_store(source: str, target: str) -> int:
    """Copy a SQLite store into an empty PostgreSQL database; URLs are never printed (they may hold a password)."""
    path = sqlite_path(source)
    if path is None or not target.startswith(POSTGRES):
        print("bothub: migrate-store copies sqlite:///… into postgresql://…", file=sys.stderr)
        return 2
    try:
        copied = await copy_sqlite_to_postgres(path, target)
    except TransferError as e:
        print(f"bothub: migrate-store failed, nothing was copied: {e}", file=sys.stderr)
        return 1
    for table, rows in copied.items():
        print(f"{table:<14} {rows:>8} rows copied and counted")
    return 0


async def _api_token(tokens: ApiTokens, action: str, value: str) -> int:
    if action == "list":
        for token in await tokens.list():
            state = f"revoked {token.revoked_at:%Y-%m-%d %H:%M}" if token.revoked_at else "live"
            print(f"{token.id}  {token.created_at:%Y-%m-%d %H:%M}  {state:<24}  {token.name}")
        return 0
    if not value.strip():
        print(f"bothub: api-token {action} needs {'a name' if action == 'create' else 'the token id'}", file=sys.stderr)
        return 2
    if action == "create":
        made, secret = await tokens.create(value, "cli")
        print(f"token {made.id} ({made.name}); shown only now, keep it secret:\n{secret}")
        return 0
    if not await tokens.revoke(value, "cli"):
        print(f"bothub: no live token with id {value} (see `bothub api-token list`)", file=sys.stderr)
        return 1
    print(f"revoked token {value.strip()}")
    return 0


async def _chats(store: Store, lang: str) -> int:
    summaries = await store.conversations.summaries()
    if not summaries:
        print(t(lang, "cli_no_chats"))
        return 0
    width = max(len("chat"), *(len(key) for key, _ in summaries))
    print(f"{'chat':<{width}}  conversations")
    for key, count in summaries:
        print(f"{key:<{width}}  {count}")
    return 0


async def _export(store: Store, chat: str, wanted: str) -> int:
    """The conversation id may be typed as /list shows it (`a1b2c3d4`, backticks and all) or as a unique prefix."""
    keys = [key for key, _ in await store.conversations.summaries()]
    if chat not in keys:
        similar = [key for key in keys if key.split(":", 1)[-1] == chat]
        if len(similar) != 1:
            print(f"bothub: no chat {chat!r}; chats: {', '.join(keys) or 'none yet'} (see `bothub chats`)",
                  file=sys.stderr)
            return 1
        chat = similar[0]
    found = await store.conversations.find(chat, wanted.strip().strip("`"))
    if len(found) != 1:
        ids = ", ".join(info.id for info in await store.conversations.recent(chat, limit=20, include_archived=True))
        what = "several conversations" if found else "no conversation"
        print(f"bothub: {wanted!r} matches {what} in chat {chat}; its conversations: {ids}", file=sys.stderr)
        return 1
    conv = await store.conversations.load(chat, found[0].id, "")
    assert conv is not None  # found a moment ago, and nothing deletes conversations
    sys.stdout.write(export_jsonl(conv, {"chat": chat}))
    return 0


async def _forget(cfg: Config, store: Store, chat: str | None, user: str | None) -> int:
    """Erase a chat's whole record, or a person's rows outside chats; print the receipt."""
    forgetting = Forgetting(store, cfg.data_dir, None)
    if chat:
        receipt = await forgetting.chat(chat, "cli")
    else:
        platform, _, user_id = (user or "").partition(":")
        if not platform or not user_id:
            print(t(cfg.language, "cli_forget_user_form"), file=sys.stderr)
            return 2
        receipt = await forgetting.user(platform, user_id, "cli")
    print(t(cfg.language, "cli_forgotten", target=chat or user, receipt="\n".join(receipt.lines())))
    return 0


def _set_password(cfg: Config) -> int:
    """Typed twice at a terminal, or the first line of piped input; only its scrypt hash is kept."""
    if sys.stdin.isatty():
        password = getpass.getpass("new dashboard password: ")
        if getpass.getpass("again: ") != password:
            print("bothub: the two passwords differ; nothing was changed", file=sys.stderr)
            return 1
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if len(password) < MIN_PASSWORD:
        print(f"bothub: choose at least {MIN_PASSWORD} characters; nothing was changed", file=sys.stderr)
        return 1
    path = store_password_hash(cfg.data_dir, hash_password(password))
    print(f"dashboard password set (scrypt hash in {path}); restart bothub to use it. "
          "BOTHUB_ADMIN_PASSWORD, when set, still wins.")
    return 0
