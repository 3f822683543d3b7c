"""``python -m bots`` is the same as the ``teamrag`` command."""

from bots.cli import app

app(prog_name="teamrag")
