"""Agents, bot identities and bindings: the model (model.py), credentials at rest (secrets.py), the defaults from
today's config (defaults.py), a snapshot to route by (catalog.py) and changes through the store (service.py)."""
