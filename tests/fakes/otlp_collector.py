"""An OpenTelemetry collector's OTLP/HTTP trace endpoint on 127.0.0.1: POST /v1/traces with a protobuf
ExportTraceServiceRequest (what the SDK's exporter sends), decoded with the OTLP protobuf classes and kept,
span by span; anything else is refused as a collector would (415 for another content type, 400 for a body
that does not decode)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.fakes.serve import serve_local

PROTOBUF = "application/x-protobuf"


@dataclass(frozen=True)
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    start_ns: int
    end_ns: int
    status: int  # 0 unset, 1 ok, 2 error
    attributes: dict[str, Any]
    service: str


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class FakeCollector:
    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.requests = 0
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/traces", self._export)
        self._runner, self.port = await serve_local(app)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _export(self, request: web.Request) -> web.Response:
        if request.content_type != PROTOBUF:
            return web.Response(status=415, text="unsupported content type")
        body = ExportTraceServiceRequest()
        try:
            body.ParseFromString(await request.read())
        except DecodeError:
            return web.Response(status=400, text="cannot decode")
        self.requests += 1
        for resource_spans in body.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                self.spans += [Span(s.name, s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.kind,
                                    s.start_time_unix_nano, s.end_time_unix_nano, s.status.code,
                                    {a.key: _value(a.value) for a in s.attributes},
                                    str(resource.get("service.name"))) for s in scope.spans]
        return web.Response(body=ExportTraceServiceResponse().SerializeToString(), content_type=PROTOBUF)
