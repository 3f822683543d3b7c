"""Routing: which path a message takes, decided without the LLM when it can be.

:mod:`.intent` routes by multilingual embedding prototypes (the examples are in
:mod:`.prototypes`) plus cheap memory-command and follow-up checks; :mod:`.bypass`
keeps a smalltalk, general or tools decision only when the documents do not claim
the message. The router node itself is :mod:`agent.nodes.router`.
"""
