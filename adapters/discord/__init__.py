"""The Discord adapter: ``/ask``, mentions that open a thread, follow-ups in that thread
and direct messages, all answered with live progress, citations and feedback buttons.

It only translates: a Discord interaction or message becomes a :class:`~agent.events.Turn`,
and the agent's events become edits of one Discord message. Modules by responsibility:

- ``client``: the discord.py client (intents, sharding, command sync, event routing);
- ``commands``: the ``/ask`` slash command and the *Ask teamrag* message command;
- ``messages``: which messages are addressed to the bot, threads and follow-ups;
- ``queued`` and ``queued_messages``: answering them from the turn queue, on any process;
- ``buttons``: the thumbs-up/down buttons, which keep working after a restart;
- ``live``: the reply that is edited while the agent works, and its fallbacks;
- ``render``: progress, answer and sources as Discord messages within Discord's limits;
- ``gates``: allowed channels and roles and the channel rules;
- ``turns``: the Turn (and so the conversation) each place on Discord maps to.

The names are the ones the Slack adapter uses for the same roles (:mod:`adapters`).
"""
