"""Platform adapters: each translates between its platform and the agent's Turn and events.

The chat adapters name a module after its role, the same on Slack and Discord
(``adapters/slack/x.py`` and ``adapters/discord/x.py`` do the same job):

- ``gates``: the checks a question passes before it is queued. Slack: Bolt middleware
  (first delivery, channel rule, a question at all, rate limit); Discord: allowed
  channels and roles, then the channel rule.
- ``messages``: which messages are for the bot (mentions, DMs, follow-ups in its
  threads), taken and queued. Slack: the Bolt listeners; Discord: ``on_message``.
- ``commands``: ``/ask``. Slack: the slash command; Discord: the slash command and the
  *Ask teamrag* message command (Slack's is ``shortcut``).
- ``queued``: a question on the turn queue, answered by whichever worker reads it.
  Slack: ``SlackBot``, which queues and answers messages (``/ask`` adds its own answer,
  in ``commands``); Discord: ``/ask`` answered through the interaction's webhook
  (messages: ``queued_messages``).
- ``live``: the reply shown while the agent works. Slack: a native stream or a posted
  message that is edited; Discord: the deferred response or a message that is edited.
- ``render``: progress, answer and sources in the platform's format and limits. Slack:
  Block Kit messages; Discord: content and embeds.
- ``buttons``: the thumbs under an answer, recorded with it. Slack: a block action;
  Discord: a persistent ``DynamicItem``.
- ``parts``: the later messages of a long answer, noted with the queued turn so a
  take-over edits them instead of posting them twice.
- ``turns``: the Turn (and so the conversation) a question belongs to.
- ``history``: the ``slack`` and ``discord`` source kinds, a channel's messages as
  documents (what both share: ``adapters/chat/history.py``).

``chat/`` holds what the chat adapters share (queue, live relay, splitting, feedback and
usage records, channel rules); ``http/`` is the HTTP API and web chat; ``console`` and
``terminal`` serve ``teamrag ask`` and ``teamrag chat``.
"""
