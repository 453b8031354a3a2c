"""A run's trace as a few lines of text: what `bothub chat --trace` prints after each answer (seed 003)."""

from __future__ import annotations

from bot.store.traces import Trace, TraceStep

MAX_ARGUMENTS = 80  # characters of a tool call's arguments shown


def _tokens(prompt: int | None, completion: int | None) -> str:
    return f"{prompt or 0} → {completion or 0} tokens"


def _step(n: int, step: TraceStep) -> str:
    mark = "" if step.outcome == "ok" else "  ✘"
    if step.kind == "model":
        first = f" (first token {step.ttft_ms} ms)" if step.ttft_ms is not None else ""
        calls = f", {step.tool_calls} tool call{'s' * (step.tool_calls != 1)}" if step.tool_calls else ""
        return f"{n:>2}. model {step.name}  {step.duration_ms} ms{first}  " \
               f"{_tokens(step.prompt_tokens, step.completion_tokens)}{calls}{mark}"
    arguments = step.arguments if len(step.arguments) <= MAX_ARGUMENTS else step.arguments[:MAX_ARGUMENTS] + "…"
    return f"{n:>2}. tool  {step.name}  {step.duration_ms} ms  {arguments} → {step.result_chars} chars{mark}"


def render(trace: Trace) -> str:
    first = f" · first text {trace.ttft_ms} ms" if trace.ttft_ms is not None else ""
    cost = f" · ${trace.cost:.4f}" if trace.cost is not None else ""
    head = (f"trace {trace.id} · {trace.outcome} · {trace.duration_ms} ms{first} · "
            f"{_tokens(trace.prompt_tokens, trace.completion_tokens)}{cost}")
    prompt = " · ".join(f"{s.name} {s.tokens}" for s in trace.sections if s.tokens)
    lines = [head, *(_step(n, step) for n, step in enumerate(trace.steps, 1))]
    return "\n".join([*lines, f"prompt: {prompt}"] if prompt else lines)
