"""Replicas sharing one database: which chats this one answers, and which shared roles (poller, shards) it holds."""
