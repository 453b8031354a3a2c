"""Reminders, recurring jobs and heartbeats: time parsing, next-due arithmetic and the claiming runner."""
