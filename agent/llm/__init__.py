"""The LLM wire: how the graph calls a model and what it gets back.

:mod:`.calls` builds the two models (fast and chat) and makes the graph's three kinds of
call (structured, streamed, with tools), every failure one ``LLMError``;
:mod:`.route_models` picks the model that answers a route; :mod:`.schemas` holds the
structured replies (``Analysis``, ``Review``, ``Verdict``). Underneath, :mod:`.direct`
sends structured and streamed calls straight to :mod:`.endpoint` (aiohttp, the SDK's
retry rules), and :mod:`.sdk_client` is the OpenAI SDK client LangChain uses for the rest.

Nothing is re-exported here: importing :mod:`.schemas` or :mod:`.endpoint` must not load
LangChain or the SDK.
"""
