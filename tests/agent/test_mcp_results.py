"""What the model reads of an MCP tool's result: text as it is, every other content kind as a short note, the
structured content when there is no text, errors marked, and long output cut (real MCP result types)."""

from __future__ import annotations

import base64

import mcp_types as types

from bot.agent.tools.mcp.calls import format_result


def result(*blocks: object, structured: dict[str, object] | None = None, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=list(blocks), structured_content=structured, is_error=error)


def test_each_content_kind_becomes_text_the_model_can_read() -> None:
    png = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()
    blocks = [types.TextContent(type="text", text="hello"),
              types.ImageContent(type="image", data=png, mime_type="image/png"),
              types.AudioContent(type="audio", data=png, mime_type="audio/wav"),
              types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                  uri="file:///notes.txt", text="inside the resource")),
              types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
                  uri="file:///blob.bin", blob=png)),
              types.ResourceLink(type="resource_link", uri="file:///linked.txt", name="linked")]
    assert format_result(result(*blocks), 10_000).split("\n") == [
        "hello", "[image image/png, 102 bytes, not shown]", "[audio audio/wav, 102 bytes, not shown]",
        "inside the resource", "[binary resource file:///blob.bin]", "[resource file:///linked.txt]"]


def test_structured_content_stands_in_for_missing_text_and_nothing_is_said_so() -> None:
    assert format_result(result(structured={"sum": 3, "名": "值"}), 100) == '{"sum": 3, "名": "值"}'
    assert format_result(result(), 100) == "(no output)"


def test_an_error_is_marked_and_long_output_is_cut() -> None:
    assert format_result(result(types.TextContent(type="text", text="boom"), error=True), 100) == (
        "Error reported by the tool: boom")
    assert format_result(result(types.TextContent(type="text", text="x" * 500)), 100) == (
        "x" * 100 + "\n… [output cut at 100 characters]")
