"""Chat commands. Importing this package registers every command module."""

from bot.commands import control, conversations, info, navigation  # noqa: F401  (registration)
from bot.commands.registry import COMMANDS, Command, CommandContext, UsageError, parse_command

__all__ = ["COMMANDS", "Command", "CommandContext", "UsageError", "parse_command"]
