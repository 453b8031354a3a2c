"""A chat's order: its own dense sequence (bot/store/inbox.py, numbered as the accepting statements commit),
corrected by the platform's order key where the platform may deliver out of it.

A platform may send a bot's events over parallel webhook connections and redeliver one whose delivery failed (a
replica killed while it held the request), or redeliver after a gateway resume. So, while chats are changing hands
between replicas (for SETTLING seconds after a replica here took partitions: bot/replicas/ownership.py), an
arrival of such a platform is held back ORDER_HOLD seconds on the chat's owner, with whatever else the chat
receives meanwhile, and the chat's entries not routed yet then take their places in the platform's order: a
redelivered earlier message runs before the later one that overtook it. Past the hold, what runs first stays
first: message n runs only after n - 1 is answered, in the sequence as it then stands. In steady state, and in a
single process, nothing is held: every answer would otherwise start ORDER_HOLD later.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from bot.store.inbox import InboxEntry

ORDER_HOLD = 0.3  # seconds a fresh arrival waits for an earlier one on a platform that may reorder


def places(entries: Sequence[InboxEntry], movable: Collection[int]) -> list[tuple[int, int]]:
    """New places (entry id, seq) that put the movable entries with an order key in the platform's order, each
    taking one of their own places (the others keep theirs); empty when they are in order already."""
    keyed = [e for e in entries if e.id in movable and e.order is not None]
    seqs = sorted(e.seq for e in keyed)
    wanted = sorted(keyed, key=lambda e: (e.order or 0, e.seq))
    return [(e.id, seq) for e, seq in zip(wanted, seqs, strict=True) if e.seq != seq]
