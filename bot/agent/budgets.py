"""Budgets (`budgets:`): quotas per user, chat and agent, daily and monthly, in tokens or money, exact across
replicas. Before each model request its estimate (the prompt's estimate plus `reserve_output_tokens`) is
reserved on every quota it counts against in one conditional database statement; after it, the difference to
what the provider reported is settled in batches, off the answer's path. A request with no room is refused
politely with when the quota resets; the first request of a period to reach `warn_at` earns one soft warning.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from bot.agent.batches import BatchWriter
from bot.agent.modelapi import Usage
from bot.agent.prices import cost
from bot.agent.usage import utc_today
from bot.i18n import t
from bot.llmconfig import BudgetLimit, BudgetsConfig, PriceConfig
from bot.store.quotas import QuotaKey, QuotaLine, QuotaPeriod, QuotaScope, QuotaState, QuotaStore

log = logging.getLogger("bothub.budgets")
DEFAULT_AGENT = "default"


@dataclass(frozen=True, slots=True)
class Hold:
    """A granted reservation, to settle once the request's real use is known."""

    keys: tuple[QuotaKey, ...]
    amount: float
    warning: str | None = None  # the period's soft warning, due with this answer


class Budgets:
    def __init__(self, cfg: BudgetsConfig, quotas: QuotaStore, prices: Mapping[str, PriceConfig],
                 agent: str = DEFAULT_AGENT, today: Callable[[], date] = utc_today) -> None:
        self.cfg, self.quotas, self.prices, self.agent, self.today = cfg, quotas, prices, agent, today
        self._settle: BatchWriter[tuple[QuotaKey, float]] = BatchWriter(quotas.settle, "quota settlement", log)

    async def reserve(self, chat: str, user_id: str, is_admin: bool, model: str, prompt_tokens: int,
                      lang: str) -> Hold | str | None:
        """A Hold, the polite refusal, or None when nothing counts (no quotas; an exempt admin)."""
        if not self.cfg.active or (is_admin and self.cfg.admins_exempt):
            return None
        lines = self._lines(chat, user_id)
        amount = self._amount(model, Usage(prompt_tokens, self.cfg.reserve_output_tokens))
        got = await self.quotas.reserve(lines, amount, self.cfg.warn_at)
        if not got.ok:
            return self._say(lang, "budget_reached", got.refused[0])
        due = [s for s in got.granted if s.warn]
        return Hold(tuple(s.key for s in got.granted), amount,
                    self._say(lang, "budget_warning", due[0]) if due else None)

    def settle(self, hold: Hold | None, usage: Usage | None, money: float | None) -> None:
        """What the request really used replaces its estimate; a failed one (no usage) gives it all back."""
        if hold is None:
            return
        if usage is None:
            used = 0.0
        elif self.cfg.unit == "money":
            used = money or 0.0
        else:
            used = float(usage.prompt_tokens + usage.completion_tokens)
        if used != hold.amount:
            for key in hold.keys:
                self._settle.submit((key, used - hold.amount))

    async def drain(self) -> None:
        await self._settle.drain()

    def _amount(self, model: str, usage: Usage) -> float:
        if self.cfg.unit == "tokens":
            return float(usage.prompt_tokens + usage.completion_tokens)
        return cost(self.prices, model, usage) or 0.0  # an unpriced model costs no money

    def _lines(self, chat: str, user_id: str) -> list[QuotaLine]:
        today = self.today()
        starts: dict[QuotaPeriod, str] = {"day": today.isoformat(), "month": today.replace(day=1).isoformat()}
        scopes: tuple[tuple[QuotaScope, str, BudgetLimit], ...] = (
            ("user", user_id, self.cfg.user), ("chat", chat, self.cfg.chat), ("agent", self.agent, self.cfg.agent))
        lines = []
        for scope, subject, limits in scopes:
            periods: tuple[tuple[QuotaPeriod, float | None], ...] = (("day", limits.daily), ("month", limits.monthly))
            lines += [QuotaLine(QuotaKey(scope, subject, period, starts[period]), limit)
                      for period, limit in periods if limit is not None]
        return lines

    def _say(self, lang: str, key: str, state: QuotaState) -> str:
        scope, period = state.key.scope, state.key.period
        return t(lang, key, which=t(lang, f"budget_{scope}_{period}"), used=self._shown(state.used),
                 limit=self._shown(state.limit), percent=round(100 * state.used / state.limit) if state.limit else 100,
                 reset=_reset(date.fromisoformat(state.key.start), period).isoformat() + " 00:00")

    def _shown(self, amount: float) -> str:
        return f"{amount:.4f}".rstrip("0").rstrip(".") if self.cfg.unit == "money" else f"{round(amount)} tokens"


def _reset(start: date, period: QuotaPeriod) -> date:
    if period == "day":
        return start + timedelta(days=1)
    return (start.replace(day=28) + timedelta(days=4)).replace(day=1)
