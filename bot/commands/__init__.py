"""Chat commands. Importing this package registers every command module."""

# registration order is the order /help lists them in
from bot.commands import conversations as conversations  # isort: skip
from bot.commands import housekeeping as housekeeping  # isort: skip
from bot.commands import navigation as navigation  # isort: skip
from bot.commands import duel as duel  # isort: skip
from bot.commands import feedback as feedback  # isort: skip
from bot.commands import replay as replay  # isort: skip
from bot.commands import merge as merge  # isort: skip
from bot.commands import handoff as handoff  # isort: skip
from bot.commands import compact as compact  # isort: skip
from bot.commands import control as control  # isort: skip
from bot.commands import info as info  # isort: skip
from bot.commands import memory as memory  # isort: skip
from bot.commands import forget_me as forget_me  # isort: skip
from bot.commands import schedule as schedule  # isort: skip
from bot.commands import tasks as tasks  # isort: skip
from bot.commands import tools as tools  # isort: skip
from bot.commands import usage as usage  # isort: skip
from bot.commands import voice as voice  # isort: skip
from bot.commands.registry import COMMANDS, Command, CommandContext, UsageError, menu, parse_command
from bot.commands.services import CommandServices

__all__ = ["COMMANDS", "Command", "CommandContext", "CommandServices", "UsageError", "menu", "parse_command"]
