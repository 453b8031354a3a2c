"""Who may talk to the bot where, and who is an admin; decided per platform from config."""

from __future__ import annotations

from enum import Enum

from bot.adapter import AccessConfig
from bot.config import Config
from bot.messages import IncomingMessage


class Verdict(Enum):
    ALLOW = "allow"
    DENY = "deny"  # one polite line at most, never a run
    PAIR = "pair"  # DM sender not on the allow-list under dm_policy=pairing: allowed once paired


class Access:
    def __init__(self, cfg: Config) -> None:
        self._policies: dict[str, AccessConfig] = {
            name: section.access for name, section in cfg.sections.items() if section.access is not None
        }

    def policy(self, platform: str) -> AccessConfig | None:
        return self._policies.get(platform)

    def is_admin(self, msg: IncomingMessage) -> bool:
        policy = self.policy(msg.platform)
        return policy is None or msg.user_id in policy.admins

    def check(self, msg: IncomingMessage) -> Verdict:
        policy = self.policy(msg.platform)
        if policy is None or msg.user_id in policy.admins:
            return Verdict.ALLOW  # the local console, and admins everywhere
        if msg.is_group:
            return Verdict.ALLOW if self.allows_group(msg.platform, msg.chat_id) else Verdict.DENY
        if policy.dm_policy == "open" or msg.user_id in policy.allow_users:
            return Verdict.ALLOW
        return Verdict.PAIR if policy.dm_policy == "pairing" else Verdict.DENY

    def allows_group(self, platform: str, chat_id: str) -> bool:
        """Whether the bot works in this group at all (whoever speaks): its talk may be kept as context."""
        policy = self.policy(platform)
        return policy is None or policy.group_policy == "open" or chat_id in policy.allow_chats

    def may_navigate(self, msg: IncomingMessage) -> bool:
        """Config may reserve /new, /switch, /goto, /retry (and creating jobs) in groups to admins."""
        return self.may_change(msg.platform, msg.user_id, msg.is_group)

    def may_change(self, platform: str, user_id: str, is_group: bool) -> bool:
        policy = self.policy(platform)
        if policy is None or not is_group or policy.group_commands == "anyone":
            return True
        return user_id in policy.admins
