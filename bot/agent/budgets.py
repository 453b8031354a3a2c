"""Budgets (`budgets:`): before a run, today's and this month's spending of the chat, the user and everyone
against their caps, in one database read; past a cap the run is refused with when it resets.

A check happens before a run, and a run's cost is known only after it, so concurrent runs that all pass
the check can together go past a cap by at most what those runs cost (one run per chat at a time).
"""

from __future__ import annotations

from datetime import date, timedelta

from bot.agent.usage import UsageLedger
from bot.i18n import t
from bot.llmconfig import BudgetLimit, BudgetsConfig
from bot.store.usage import Period, Scope, Spent


class Budgets:
    def __init__(self, cfg: BudgetsConfig, ledger: UsageLedger) -> None:
        self.cfg, self.ledger = cfg, ledger

    async def refusal(self, chat: str, user_id: str, is_admin: bool, lang: str) -> str | None:
        """The polite refusal when a cap is reached, else None (and None without caps or for exempt admins)."""
        if not self.cfg.active or (is_admin and self.cfg.admins_exempt):
            return None
        spent = await self.ledger.spent(chat, user_id)
        scopes: tuple[tuple[Scope, BudgetLimit], ...] = (
            ("chat", self.cfg.chat), ("user", self.cfg.user), ("all", self.cfg.everyone))
        for scope, limits in scopes:
            periods: tuple[tuple[Period, float | None], ...] = (("day", limits.daily), ("month", limits.monthly))
            for period, limit in periods:
                if limit is not None and (used := self._used(spent, scope, period)) >= limit:
                    return t(lang, "budget_reached", which=t(lang, f"budget_{scope}_{period}"),
                             used=self._shown(used), limit=self._shown(limit),
                             reset=_reset(self.ledger.today(), period).isoformat() + " 00:00")
        return None

    def _used(self, spent: Spent, scope: Scope, period: Period) -> float:
        cell = (scope, period)
        return spent.money[cell] if self.cfg.unit == "money" else spent.tokens[cell]

    def _shown(self, amount: float) -> str:
        return f"{amount:.4f}".rstrip("0").rstrip(".") if self.cfg.unit == "money" else f"{round(amount)} tokens"


def _reset(today: date, period: Period) -> date:
    if period == "day":
        return today + timedelta(days=1)
    return (today.replace(day=28) + timedelta(days=4)).replace(day=1)
