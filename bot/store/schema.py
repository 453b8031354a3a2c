"""What both backends' migrations share: a replica of an older release refuses a schema newer than it knows."""

from __future__ import annotations


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer bothub: an older one could misread what the newer one writes (a
    rolling upgrade starts the new release's replicas first; the old ones are stopped, never restarted)."""

    def __init__(self, found: int, known: int) -> None:
        super().__init__(f"database schema version {found} is newer than this program ({known}): a newer bothub "
                         "migrated it; upgrade this replica")
        self.found = found
        self.known = known
