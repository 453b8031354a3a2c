"""One-shot maintenance commands: init, doctor, export, import, pair."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from bot.agent.workspace import init_workspace
from bot.chats.pairing import Pairing
from bot.config import Config
from bot.store.sqlite import SqliteStore
from bot.tree.jsonl import export_jsonl, import_jsonl


async def run(cfg: Config, command: str, args: argparse.Namespace) -> int:
    if command == "init":
        path = args.path or cfg.workspace_dir
        created = init_workspace(path)
        print(f"workspace {path}: created {', '.join(created) if created else 'nothing (all files exist)'}")
        return 0
    if command == "doctor":
        doctor = importlib.import_module("bot.cli.doctor")
        return int(await doctor.run(cfg, dict(os.environ)))
    store = SqliteStore(cfg.data_dir / "bothub.sqlite3")
    await store.open()
    try:
        if command == "export":
            conv = await store.conversations.load(args.chat, args.conversation_id, "")
            if conv is None:
                print(f"bothub: no conversation {args.conversation_id!r} in chat {args.chat!r}", file=sys.stderr)
                return 1
            sys.stdout.write(export_jsonl(conv, {"chat": args.chat}))
            return 0
        if command == "import":
            try:
                conv = import_jsonl(args.file.read_text(encoding="utf-8"), "")
            except (OSError, ValueError) as e:
                print(f"bothub: cannot import {args.file}: {e}", file=sys.stderr)
                return 1
            info = await store.conversations.import_tree(args.chat, conv)
            print(f"imported {len(conv) - 1} messages as conversation {info.id} in chat {args.chat}")
            return 0
        if command == "pair":
            user = await Pairing(store.pairing).approve(args.platform, args.code)
            if user is None:
                print(f"bothub: no pending {args.platform} pairing with code {args.code} (codes expire after an hour)",
                      file=sys.stderr)
                return 1
            print(f"approved {args.platform} user {user}")
            return 0
    finally:
        await store.close()
    return 2
