"""A run: one agent turn for a session, one file per step — prompt.py, model.py, persist.py, handoff.py — and
runner.py, which takes a turn (turn.py) through them."""
