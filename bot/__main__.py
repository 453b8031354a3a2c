"""`python -m bot` is the same as the `bothub` command."""

from bot.cli.main import main

raise SystemExit(main())
