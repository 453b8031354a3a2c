"""The fleet at run time: each identity's adapter started and stopped (bots.py), every replica following the
changes others make through the store (watch.py)."""
