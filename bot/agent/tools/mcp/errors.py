"""The one MCP failure callers handle: a server that is not running and cannot start right now."""


class McpUnavailable(Exception):
    """The message says why (its error, or how long its restart backoff still lasts)."""
