"""The HTTP kit: what the dashboard and the HTTP adapters (web chat, API) share, below both in the layering.

Server-sent events (`sse`), the in-memory sign-in sessions (`auth`), the one security middleware with its
CSRF check and headers (`security`), Markdown → safe HTML (`markdown`), the browser's language (`lang`),
the SSRF guard for URLs someone else chose (`netguard`, used by web_fetch and API callbacks), and for the
chat platforms' HTTP APIs an access token renewed in the background (`tokens`) and a bounded map of what was
recently sent (`recent`). It imports
nothing else from bot/, so an adapter may use it without reaching into core.
"""
