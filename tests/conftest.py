"""Shared fixtures. Everything listens on 127.0.0.1 port 0."""
