"""Composition root: config → store → agent → hub → adapters, plus the hub's own web server."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Mapping, Sequence
from datetime import timedelta

from aiohttp import web

from bot.adapter import Adapter, AdapterServices, ConversationChoice, WebHandler, find_spec
from bot.agent import skill_create
from bot.agent.approvals import Approvals
from bot.agent.budgets import Budgets
from bot.agent.compaction import Compactor
from bot.agent.group_context import GroupContext
from bot.agent.llm import LLMClient
from bot.agent.loop import AgentLoop
from bot.agent.memory import Memory
from bot.agent.memory import register as register_memory_tools
from bot.agent.prompt import PromptBuilder
from bot.agent.skill_tools import SkillTools
from bot.agent.skills import SkillSet
from bot.agent.titles import Titler
from bot.agent.tools import browser as browser_tool
from bot.agent.tools import default_registry, delegate, egress, shell, web_search
from bot.agent.tools import schedule as schedule_tool
from bot.agent.tools import transcribe as transcribe_tool
from bot.agent.tools import web as web_tool
from bot.agent.tools.browser.launch import BrowserPool
from bot.agent.tools.mcp import McpTools
from bot.agent.tools.registry import RegistryView, ToolRegistry
from bot.agent.trace import Tracer, TraceWriter, otel_export
from bot.agent.usage import UsageLedger
from bot.agent.workspace import ready_workspace
from bot.chats.access import Access, Verdict
from bot.chats.api_tokens import ApiTokens
from bot.chats.conversations import Conversations
from bot.chats.forgetting import Forgetting
from bot.chats.handoff import Handoffs
from bot.chats.history import ChatHistory
from bot.chats.housekeeping import Housekeeping
from bot.chats.pairing import Pairing
from bot.chats.sessions import IDLE_SESSIONS, SessionKey
from bot.commands import CommandServices, menu
from bot.config import Config, ConfigError, proxy_for
from bot.fleet.catalog import Catalog, build
from bot.fleet.defaults import default_agent, default_identities, workspace_of
from bot.fleet.model import DEFAULT_AGENT, Agent
from bot.fleet.service import Fleet
from bot.httpkit.auth import Auth
from bot.httpkit.hygiene import GuardedRunner, Limits, hygiene
from bot.httpkit.netguard import allow_list
from bot.hub.hub import Hub
from bot.hub.intake import MediaIntake
from bot.hub.scheduled import JobTurns
from bot.hub.tasks import TaskTurns
from bot.lanes import Lanes
from bot.live.bots import Bots, Routes, tagged
from bot.live.console import FleetConsole
from bot.live.watch import FleetWatch
from bot.messages import ChatRef, IncomingMessage
from bot.ops import logring, redact
from bot.ops.health import Health
from bot.ops.metrics import Metrics
from bot.ops.redact import secret_values
from bot.ops.startup import Starter
from bot.ops.watchdog import Watchdog
from bot.replicas.partitions import Partitions
from bot.run.roster import Roster
from bot.run.runner import AgentRunner
from bot.run.voice import VoiceReplies
from bot.scheduler.clock import Clock, SystemClock
from bot.scheduler.runner import Scheduler
from bot.scheduler.service import Schedules
from bot.store.backends import store_for_url
from bot.tree.model import utc_now
from bot.web.dashboard import Deps
from bot.web.login import stored_password_hash
from bot.web.routes import mount

log = logging.getLogger("bothub.app")

QUOTAS_KEPT_DAYS = 62  # a month's quota row starts on the 1st: two months on, its period is over
HOUSEKEEPING_EVERY = 300.0  # seconds: deleted conversations go within 5 minutes after their undo window
# Objects made before the cyclic collector's youngest generation is scanned. Every answer allocates thousands of
# short-lived objects (tasks, futures, events, JSON) and almost no cycles: at Python's default (700) a burst of a
# thousand answers ran ~390 young, 35 middle and 3 full collections, ~0.45 s of CPU that freed 32 objects.
GC_YOUNG_THRESHOLD = 10_000


class App:
    """Owns every long-lived component; `start` and `stop` are the only lifecycle calls."""

    def __init__(self, cfg: Config, env: Mapping[str, str], clock: Clock | None = None, *,
                 platforms: Sequence[str] = (), adapters: Sequence[Adapter] = (), echo_traces: bool = False,
                 guest: bool = False) -> None:
        """`platforms`: adapters found by name (their spec); `adapters`: adapter objects made elsewhere;
        `echo_traces`: each run's trace is sent after its answer (`bothub chat --trace`); `guest`: beside the
        replicas of a shared database, not one of them (`bothub chat`: it takes only its own chats)."""
        self.cfg = cfg
        self.env = env
        self.store = store_for_url(cfg.database_url, cfg.database.pool_size, cfg.replica_id, guest)
        self.partitions = Partitions(self.store.claims)
        self.clock = clock or SystemClock()
        self._job_changes = asyncio.Event()  # set when a job is added or resumed: the scheduler looks again
        self.schedules = (Schedules(self.store, cfg.scheduler, cfg.heartbeat.interval, self.clock,
                                    self._job_changes.set) if cfg.scheduler.enabled else None)
        self.metrics = Metrics()
        self.llm = LLMClient(cfg.llm, on_usage=lambda model, used: self.metrics.activity.add_tokens(
            model, used.prompt_tokens + used.completion_tokens), env=env)  # env: the proxy variables
        skills = ready_workspace(cfg.workspace_dir)
        self.prompts = PromptBuilder(cfg.workspace_dir, skills, language=cfg.language)
        self.approvals = Approvals(rules=self.store.approval_rules, audit=self.store.dashboard)
        self.mcp = McpTools(cfg.mcp.servers, env, cfg.data_dir / "logs" / "mcp", self.approvals)
        self.memory = Memory(self.store.memories, cached_chats=IDLE_SESSIONS,  # as many as sessions stay loaded
                             embed=self.llm.embedder(cfg.llm.embedding_model))
        self.usage = UsageLedger(self.store.usage)
        self.browsers: BrowserPool | None = None  # the browse tool's Chromium, when it is on
        self._skill_model = cfg.llm.skill_model or cfg.llm.chat_model
        self.tools = self._tools(skills)
        self.budgets = Budgets(cfg.budgets, self.store.quotas, cfg.llm.prices) if cfg.budgets.active else None
        self._agent_budgets: dict[str, Budgets] = {}  # the other agents' (bot/fleet)
        self.loop = AgentLoop(self.llm, self.tools, cfg.llm.chat_model, cfg.llm.max_turns, cfg.llm.show_thinking,
                              self.usage, self.budgets, cfg.language)
        self.metrics.watch_usage(lambda: (self.llm.total_usage.prompt_tokens, self.llm.total_usage.completion_tokens),
                                 lambda: self.llm.total_cost)
        self.metrics.watch_providers(self.llm.health_views)
        self.conversations = Conversations(self.store.conversations)
        self.housekeeping = Housekeeping(self.conversations, self.store.housekeeping, cfg.data_dir, self.clock.now)
        self.compactor = Compactor(self.llm, self.store.summaries, cfg.llm.skill_model or cfg.llm.chat_model,
                                   cached_conversations=IDLE_SESSIONS)  # one active conversation per session
        off = [name for name, section in cfg.sections.items() if not section.group_context]
        self.group_context = GroupContext(self.store.group_context, cfg.group_context, off, self.clock)
        self.traces = TraceWriter(self.store.traces, cfg.traces.per_chat)
        self.otel = otel_export(cfg.traces.otlp_endpoint)
        self.titler = (Titler(self.llm, self.store.housekeeping, cfg.llm.skill_model or cfg.llm.chat_model)
                       if cfg.llm.auto_titles else None)
        self._tracer = Tracer(self.traces, secret_values(env), self.otel)
        self._voice = VoiceReplies(self.llm.speaker(cfg.llm.speech_model, cfg.llm.speech_voice), cfg.llm.voice_replies)
        self._echo_traces = echo_traces
        default = default_agent(cfg)
        self.runner = self._runner(default, self.loop, self.prompts)
        self.fleet = Fleet(self.store.fleet, env, lambda: ([default], default_identities(cfg, env, platforms)))
        self.roster = Roster(build([default], [], [], None), {default.name: self.runner})
        self.lanes = Lanes(self.store.claims, self.store.inbox)  # the one door into every chat's lane
        self.tasks = TaskTurns(self.lanes, lambda reached: self.hub.delivery(reached), self.conversations,
                               self.roster.for_chat, self.store, cfg.llm, cfg.max_tasks)
        services = CommandServices(self.conversations, self.store, self.prompts, self.memory, self.approvals,
                                   Pairing(self.store.pairing), self.lanes, cfg.llm, self.tools, self.mcp,
                                   self.compactor, self.housekeeping, self.schedules, self.usage,
                                   Handoffs(self.store, self.conversations, cfg.data_dir, cfg.media.max_bytes),
                                   Forgetting(self.store, cfg.data_dir, self.memory, self.traces), self.traces,
                                   self.metrics, self.tasks)
        media = MediaIntake(cfg.media, self.llm.transcriber(cfg.llm.transcription_model))
        self.hub = Hub(cfg, self.store, services, self.runner, self.metrics, media, self.group_context, self.roster)
        self.hub.tasks = self.tasks.pulled
        self.scheduler: Scheduler | None = None
        if self.schedules is not None:
            turns = JobTurns(self.lanes, self.hub.delivery, self.conversations, self.roster.for_chat, self.store,
                             self.clock, cfg.language)
            self.hub.scheduled = turns.pulled
            self.scheduler = Scheduler(self.store.jobs, self.clock, turns, catch_up=cfg.scheduler.catch_up,
                                       poll=cfg.scheduler.poll, wake=self._job_changes)
        self.web = web.Application(middlewares=[hygiene])  # first: the real client address, the body deadline
        self._adapter_routes = False
        self.adapters = [*(self._load_adapter(name) for name in platforms), *adapters]  # + identities' (bot/live)
        for adapter in self.adapters:
            self.hub.attach(self.metrics.instrument(adapter))
        self.routes = Routes()  # identities' webhooks, under /bots/<identity>/
        self.routes.mount(self.web)
        self.bots = Bots(cfg, env, self.services(), self.routes, self._attach, self._detach, self._start_adapter,
                         lambda name: self.lanes.settled(f"{name}:", cfg.shutdown_grace))
        self.fleet_watch = FleetWatch(self.fleet, self._apply_fleet, cfg.fleet.poll)
        self.health = Health(self.adapters, self.metrics,
                             lambda: self.partitions.report(lambda: self.lanes.owners.chats))
        self.starter = Starter(self._start_adapter)
        self.watchdog = Watchdog(self.adapters, self._start_adapter, self.metrics, skip=self.starter.retrying)
        self.auth: Auth | None = None
        if cfg.server.dashboard:  # the environment's password wins over the stored one; neither: a sign-in link
            logs = logring.install(secret_values(env))  # the dashboard's log view
            self.auth = Auth(env.get("BOTHUB_ADMIN_PASSWORD") or None, stored_password_hash(cfg.data_dir))
            console = FleetConsole(cfg, env, self.fleet, self.fleet_watch, self.bots, self.roster, self.adapters)
            mount(self.web, Deps(cfg, self.store, services, self.health, self.metrics, console, logs), self.auth)
        self._web_runner: web.AppRunner | None = None
        self._housekeeping: asyncio.Task[None] | None = None
        self.web_port: int | None = None  # the bound port (config may say 0)

    def _tools(self, skills: SkillSet, own_workspace: bool = False) -> ToolRegistry:
        """Built-in tools, the optional risky ones as configured, then tool skills (which may use them)."""
        tools = default_registry()
        register_memory_tools(tools, self.memory)
        network = egress.Policy(allow_list(self.cfg.tools.web_allow_hosts)) if self.cfg.tools.shell_network else None
        shell.register(tools, self.approvals, self.cfg.tools.shell_timeout, self.cfg.tools.shell_enabled, network)
        if self.cfg.tools.web_fetch_enabled:
            web_tool.register(tools, self.cfg.tools.web_allow_hosts, proxy_for=lambda url: proxy_for(url, self.env))
        if backend := self.cfg.tools.web_search_backend:
            tools_cfg = self.cfg.tools
            web_search.register(tools, backend, tools_cfg.web_search_url, tools_cfg.web_search_results,
                                tools_cfg.web_search_per_minute, self.env, lambda url: proxy_for(url, self.env))
        if self.cfg.tools.browser_enabled:
            t = self.cfg.tools
            self.browsers = browser_tool.register(tools, t.web_allow_hosts, t.browser_timeout,
                                                  t.browser_memory_mb * 2**20, self.cfg.media.max_bytes)
        if self.schedules is not None:
            schedule_tool.register(tools, self.schedules, Access(self.cfg).may_change)
        if transcriber := self.llm.transcriber(self.cfg.llm.transcription_model):
            transcribe_tool.register(tools, transcriber)
        tools.add_source(self.mcp.refresh)
        delegate.register(tools, lambda ctx, task: self.tasks.delegated(ctx, task))  # background sub-agents
        skill_tools = SkillTools(tools, self._make_loop, self._skill_model)
        skill_tools.register(skills)
        if not own_workspace:  # skill_create saves into the configured workspace, then reads its skills afresh
            skill_create.register(tools, self.prompts.workspace, self.approvals,
                                  skill_create.reloading(self.prompts, skill_tools))
        return tools

    def _make_loop(self, registry: ToolRegistry, model: str, max_turns: int) -> AgentLoop:
        return AgentLoop(self.llm, registry, model, max_turns, usage=self.usage)

    def _runner(self, agent: Agent, loop: AgentLoop, prompts: PromptBuilder) -> AgentRunner:
        return AgentRunner(self.cfg, self.conversations, loop, prompts, self.compactor, memory=self.memory,
                           metrics=self.metrics, group_context=self.group_context, tracer=self._tracer,
                           titler=self.titler, voice=self._voice, echo_traces=self._echo_traces, agent=agent)

    def _agent_runner(self, agent: Agent) -> AgentRunner:
        """An agent's runner: its workspace (read here: call it off the event loop), its model, its tools policy.
        The configured workspace shares the default agent's prompt builder and tools."""
        cfg = self.cfg
        own = agent.workspace is not None or agent.language is not None
        skills = ready_workspace(workspace_of(cfg, agent)) if own else self.prompts.skills
        prompts = (PromptBuilder(workspace_of(cfg, agent), skills, language=agent.language or cfg.language)
                   if own else self.prompts)
        registry = self._tools(skills, own_workspace=True) if agent.workspace is not None else self.tools
        tools = RegistryView(registry, agent.tools.permits)
        budgets = self.budgets  # an agent's own `budgets.agent` quota is counted under its name
        if budgets is not None and agent.name != DEFAULT_AGENT:
            budgets = self._agent_budgets.setdefault(agent.name, Budgets(cfg.budgets, self.store.quotas,
                                                                         cfg.llm.prices, agent=agent.name))
        loop = AgentLoop(self.llm, tools, agent.model or cfg.llm.chat_model, cfg.llm.max_turns, cfg.llm.show_thinking,
                         self.usage, budgets, agent.language or cfg.language)
        return self._runner(agent, loop, prompts)

    async def _apply_fleet(self, catalog: Catalog) -> None:
        """A new catalog: agents that changed get new runners (a run in progress keeps its own), identities
        start or stop; nothing else restarts."""
        built = {}
        for agent in self.roster.changed_agents(catalog):
            try:
                built[agent.name] = await asyncio.to_thread(self._agent_runner, agent)
            except ConfigError as e:
                log.error("agent %s keeps its previous settings: %s", agent.name, e)
        self.roster.update(catalog, built)
        self.hub.runner = self.roster.default
        redact.add_secrets(value for identity in catalog.identities.values() for value in identity.credentials.values())
        await self.bots.sync(catalog)

    def _attach(self, adapter: Adapter, name: str) -> Adapter:
        """An identity's adapter under its address, so deliveries, health lines and the watchdog tell it apart."""
        counted = self.metrics.instrument(adapter)
        counted.name = name
        self.hub.attach(counted)
        self.adapters.append(counted)  # /readyz and the watchdog see it
        return counted

    def _detach(self, name: str) -> None:
        self.hub.detach(name)
        self.adapters[:] = [a for a in self.adapters if a.name != name]

    def services(self) -> AdapterServices:
        async def list_conversations(chat: ChatRef, user_id: str) -> list[ConversationChoice]:
            """Only for someone the access rules let into this chat: titles are the chat's own data."""
            asker = IncomingMessage(chat.platform, chat.chat_id, chat.thread_id, "", user_id, "", chat.is_group,
                                    True, "")
            if await self.hub.verdict(asker) is not Verdict.ALLOW:
                return []
            key = SessionKey.at(chat).storage_key
            infos = await self.store.conversations.recent(key, limit=50, include_archived=True)
            return [ConversationChoice(i.id, i.title, i.archived, i.updated_at, i.message_count) for i in infos]

        def add_route(method: str, path: str, handler: WebHandler) -> None:
            self._adapter_routes = True
            self.web.router.add_route(method, path, handler)

        return AdapterServices(list_conversations, self.store.inbox.seen, add_route, self.cfg.language,
                               self.hub.answered, menu(), self.cfg.media.max_bytes,
                               ApiTokens(self.store.api_tokens, self.store.dashboard).check,
                               self.partitions.share, ChatHistory(self.store.conversations).page, self.store.relay,
                               self.store.inbox.unsee)

    def _load_adapter(self, platform: str) -> Adapter:
        """Adapters are found by name (their spec) so the core never depends on a platform package."""
        spec = find_spec(platform)
        if spec is None:
            raise ConfigError(f"no adapter named {platform!r}")
        section = self.cfg.sections.get(platform) or spec.config_model()
        return spec.create(section, self.env, self.services())

    async def start(self) -> None:
        gc.set_threshold(max(GC_YOUNG_THRESHOLD, gc.get_threshold()[0]), *gc.get_threshold()[1:])
        await self.store.open()
        if self.store.relay is not None:
            await self.store.relay.start()  # before any chat is owned: no reply is made before it is heard
        await self.hub.start()  # replicas: claims before adapters, whose roles (poller, shards) need them
        if self._adapter_routes or self.cfg.server.enabled:
            self.health.add_routes(self.web)
            server = self.cfg.server
            limits = Limits(server.header_timeout, server.body_timeout, server.max_connections_per_address,
                            tuple(server.trusted_proxies))
            self._web_runner = GuardedRunner(self.web, limits, access_log=None)
            await self._web_runner.setup()
            await web.TCPSite(self._web_runner, server.host, server.port).start()
            self.web_port = self._web_runner.addresses[0][1]
            log.info("web server on %s:%s", server.host, self.web_port)
            if (link := self.sign_in_path()) is not None:
                log.info("dashboard sign-in (one use, no password set): %s", link)
        await self.fleet_watch.load()  # the stored agents and bindings; further identities join self.adapters
        await self.starter.start_all(list(self.adapters))  # an unreachable platform is retried in the background
        self.bots.live = True
        if resumed := await self.hub.resume():
            log.info("answering %d message(s) accepted before the restart", resumed)
        self.watchdog.start()
        await self.fleet_watch.start()
        self._housekeeping = asyncio.create_task(self._housekeep(), name="housekeeping")
        if self.scheduler is not None:
            self.scheduler.start()  # after the adapters: a job due at start-up needs its platform

    def sign_in_path(self) -> str | None:
        """`/login?token=…` while the one-time sign-in token is unspent (no password configured), else None."""
        token = self.auth.sign_in_token if self.auth is not None else None
        return f"/login?token={token}" if token else None

    async def _start_adapter(self, adapter: Adapter) -> None:
        await adapter.start(self.health.track(adapter.name, tagged(self.hub.handle, adapter.name)))
        log.info("%s adapter started", adapter.name)

    async def _housekeep(self) -> None:
        while True:
            await self.purge()
            await self.clock.sleep(HOUSEKEEPING_EVERY)  # an injected clock lets tests step through it

    async def purge(self) -> None:
        """One pass: expired dedupe keys (the table holds about a week of events, not all of them), group context
        past its age in chats that went quiet (active chats trim their own on every message), conversations
        deleted longer ago than /undo reaches (with their files), run traces older than `traces.keep_days`, and
        quotas of periods long over."""
        cutoff = utc_now() - timedelta(days=self.cfg.traces.keep_days)
        quotas_before = (utc_now() - timedelta(days=QUOTAS_KEPT_DAYS)).date().isoformat()
        for name, purge in (("expired dedupe keys", self.store.inbox.purge_expired),
                            ("old group context lines", self.group_context.purge),
                            ("deleted conversations", self.housekeeping.purge),
                            ("old run traces", lambda: self.store.traces.prune(cutoff)),
                            ("old quotas", lambda: self.store.quotas.prune(quotas_before))):
            try:
                log.debug("purged %d %s", await purge(), name)
            except Exception:
                log.exception("purging %s failed", name)

    async def stop(self) -> None:
        if self._housekeeping is not None:
            self._housekeeping.cancel()
        await self.starter.stop()
        await self.fleet_watch.stop()
        await self.watchdog.stop()
        if self.scheduler is not None:
            await self.scheduler.stop()
        await self.lanes.stop_taking()
        await self.hub.shutdown(self.cfg.shutdown_grace)
        await self.partitions.stop()
        for adapter in list(self.adapters):
            try:
                await adapter.stop()
            except Exception:
                log.exception("stopping %s failed", adapter.name)
        await self.lanes.stop()  # the chats' claims go: other replicas answer what is left
        if self._web_runner is not None:
            await self._web_runner.cleanup()
        await self.mcp.stop()
        if self.browsers is not None:
            await self.browsers.close()
        if self.titler is not None:
            await self.titler.close()
        await self.llm.close()
        await self.traces.drain()
        if self.otel is not None:
            await asyncio.to_thread(self.otel.shutdown)  # what is queued goes out
        await self.usage.drain()
        if self.store.relay is not None:
            await self.store.relay.stop()
        for budgets in (self.budgets, *self._agent_budgets.values()):
            if budgets is not None:
                await budgets.drain()
        await self.store.close()


