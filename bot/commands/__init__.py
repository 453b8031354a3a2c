"""Chat commands. Importing this package registers every command module."""

from bot.commands import control as control
from bot.commands import conversations as conversations
from bot.commands import info as info
from bot.commands import memory as memory
from bot.commands import navigation as navigation
from bot.commands.registry import COMMANDS, Command, CommandContext, UsageError, parse_command

__all__ = ["COMMANDS", "Command", "CommandContext", "UsageError", "parse_command"]
