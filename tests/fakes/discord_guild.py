"""The fake Discord's one guild: the bot, a user, channels and threads, as the gateway's GUILD_CREATE has them."""

from __future__ import annotations

from datetime import UTC, datetime

APP_ID = "900000000000000001"  # a bot's user id equals its application id
GUILD_ID = "800000000000000001"
BOT_ROLE_ID = "800000000000000009"  # the managed role Discord gives the bot in the guild
CHANNEL_ID = "800000000000000002"
THREAD_ID = "800000000000000003"
THREAD2_ID = "800000000000000005"
DM_CHANNEL_ID = "800000000000000004"
CHANNEL2_ID = "800000000000000006"  # a second text channel: a chat of its own
GUILD2_ID = "800000000004194305"  # with two shards: shard 0 (GUILD_ID is on shard 1)
GUILD2_CHANNEL_ID = "800000000004194306"
USER_ID = "700000000000000001"

BOT_USER = {"id": APP_ID, "username": "hub", "discriminator": "0", "global_name": None,
            "avatar": None, "bot": True, "flags": 0}
HUMAN = {"id": USER_ID, "username": "ann", "discriminator": "0", "global_name": "Ann", "avatar": None}
OTHER_BOT = {"id": "700000000000000099", "username": "otherbot", "discriminator": "0",
             "global_name": None, "avatar": None, "bot": True}


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def _thread(thread_id: str, name: str, parent_id: str = CHANNEL_ID) -> dict:
    return {"id": thread_id, "type": 11, "name": name, "parent_id": parent_id, "owner_id": USER_ID,
            "guild_id": GUILD_ID, "message_count": 0, "member_count": 2, "rate_limit_per_user": 0,
            "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                                "archive_timestamp": now_iso(), "locked": False}}


def _channel(channel_id: str, name: str, position: int) -> dict:
    return {"id": channel_id, "type": 0, "name": name, "position": position, "permission_overwrites": [],
            "nsfw": False, "parent_id": None}


def _roles(guild_id: str) -> list[dict]:
    everyone = {"id": guild_id, "name": "@everyone", "permissions": "2248473465835073", "position": 0,
                "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}
    bot_role = {**everyone, "id": BOT_ROLE_ID, "name": BOT_USER["username"], "position": 1, "managed": True,
                "tags": {"bot_id": APP_ID}}  # the role Discord gives every bot it adds to a guild
    return [everyone, bot_role]


def guild_payload(channels: tuple[str, ...] = (), threads: tuple[tuple[str, str], ...] = ()) -> dict:
    """The test guild; `channels` and `threads` ((id, parent id)) are extra ones, e.g. for benchmarks."""
    member = {"user": BOT_USER, "roles": [], "joined_at": now_iso(), "deaf": False, "mute": False, "flags": 0}
    return {
        "id": GUILD_ID, "name": "test-guild", "owner_id": USER_ID, "member_count": 2, "roles": _roles(GUILD_ID),
        "channels": [_channel(channel, name, n) for n, (channel, name) in enumerate(
            ((CHANNEL_ID, "general"), (CHANNEL2_ID, "random"), *((c, f"channel-{c[-4:]}") for c in channels)))],
        "threads": [_thread(THREAD_ID, "first-thread"), _thread(THREAD2_ID, "second-thread"),
                    *(_thread(t, f"thread-{t[-4:]}", parent) for t, parent in threads)],
        "members": [member], "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": [],
        "emojis": [], "stickers": [], "features": [], "unavailable": False, "large": False,
    }


def other_guild_payload(guild_id: str = GUILD2_ID, channel_id: str = GUILD2_CHANNEL_ID) -> dict:
    """Another guild with one channel (and no threads), e.g. on another shard."""
    return {**guild_payload(), "id": guild_id, "name": "other-guild", "roles": _roles(guild_id),
            "channels": [_channel(channel_id, "general", 0)], "threads": []}
