"""The HTTP door: ``/api/chat`` (JSON and Server-Sent Events), accounts and tokens,
stored conversations, feedback and usage, an OpenAI-compatible ``/v1``, and the web
chat and admin pages.

Like the Slack and Discord adapters it only translates: a request becomes a
:class:`agent.events.Turn` (platform ``"http"``, the account as the user, the
account's scopes) run by the same runner, and the events come back as JSON or SSE.
"""
