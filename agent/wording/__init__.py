"""What the bot says, in Korean and English (what it asks the model is :mod:`agent.prompts`).

:mod:`.language` tells which of the two a message is written in; :mod:`.texts` holds the
one rule for looking a text up; :mod:`.replies` the replies given without an LLM,
:mod:`.progress` the steps shown while a turn runs. The chat adapters' own words around
an answer use the same rule (``adapters/chat/phrases.py``).
"""
