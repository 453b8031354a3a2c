"""Run traces out over OpenTelemetry (`traces.otlp_endpoint`): each finished run becomes a span tree in the
GenAI semantic conventions — `invoke_agent` for the run, `chat <model>` per model request, `execute_tool
<tool>` per tool call — sent as OTLP/HTTP protobuf to any collector (Langfuse, Phoenix, Jaeger …).

Spans are built from the finished trace with the times the run recorded, so the answer's path does nothing
but hand the trace over; the SDK's batch processor encodes and posts them on its own thread. The SDK is an
optional extra (`pip install 'bothub[otel]'`): bot/app.py imports this module only when an endpoint is set.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from bot.store.traces import Trace, TraceStep

log = logging.getLogger("bothub.otel")
SERVICE = "bothub"
EXPORT_EVERY_MS = 1000  # the batch processor's delay: spans leave at most a second after their run
Attributes = dict[str, str | int | float]


class OtelExport:
    def __init__(self, endpoint: str, agent: str = "default") -> None:
        self.agent = agent
        self.provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint),
                                                            schedule_delay_millis=EXPORT_EVERY_MS))
        self._tracer = self.provider.get_tracer("bothub.runs")

    def __call__(self, run: Trace, starts: Sequence[float]) -> None:
        """The run's spans, queued for export (never raises: a broken exporter must not fail an answer)."""
        try:
            self._spans(run, starts)
        except Exception:
            log.exception("could not export run %s to OpenTelemetry", run.id)

    def _spans(self, run: Trace, starts: Sequence[float]) -> None:
        t0 = int(run.started_at.timestamp() * 1e9)
        attributes: Attributes = {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": self.agent,
            "gen_ai.request.model": run.model, "gen_ai.usage.input_tokens": run.prompt_tokens,
            "gen_ai.usage.output_tokens": run.completion_tokens, "bothub.chat": run.chat,
            "bothub.trace_id": run.id, "bothub.outcome": run.outcome}
        if run.conversation_id:
            attributes["gen_ai.conversation.id"] = run.conversation_id
        root = self._tracer.start_span(f"invoke_agent {self.agent}", kind=SpanKind.INTERNAL, start_time=t0,
                                       attributes=attributes)
        if run.outcome != "ok":
            root.set_status(Status(StatusCode.ERROR, run.error_id or run.outcome))
        parent = trace.set_span_in_context(root)
        for step, start in zip(run.steps, starts, strict=False):
            begin = t0 + int(start * 1e9)
            name, kind, step_attributes = _step(step)
            span = self._tracer.start_span(name, context=parent, kind=kind, start_time=begin,
                                           attributes=step_attributes)
            if step.outcome == "error":
                span.set_status(Status(StatusCode.ERROR))
            span.end(end_time=begin + step.duration_ms * 1_000_000)
        root.end(end_time=t0 + run.duration_ms * 1_000_000)

    def shutdown(self) -> None:
        """Send what is queued (blocking: call it off the event loop)."""
        self.provider.shutdown()


def _step(step: TraceStep) -> tuple[str, SpanKind, Attributes]:
    if step.kind == "tool":
        return (f"execute_tool {step.name}", SpanKind.INTERNAL,
                {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": step.name,
                 "gen_ai.tool.type": "function"})
    provider, _, model = step.name.rpartition("/")
    attributes: Attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                              "gen_ai.provider.name": provider or "default"}
    for key, value in (("gen_ai.usage.input_tokens", step.prompt_tokens),
                       ("gen_ai.usage.output_tokens", step.completion_tokens), ("bothub.cost", step.cost)):
        if value is not None:
            attributes[key] = value
    if step.outcome == "error":
        attributes["error.type"] = "provider_error"
    return f"chat {model}", SpanKind.CLIENT, attributes
