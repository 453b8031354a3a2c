"""Delivery: getting replies onto a platform — paced, retried, split, streamed by edits, "typing…"; below the hub."""

from bot.delivery.sending import Delivery
from bot.delivery.stream import HeldReply, StreamWriter

__all__ = ["Delivery", "HeldReply", "StreamWriter"]
