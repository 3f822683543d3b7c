"""Web search providers, behind one small protocol so the provider can be swapped or left out.

:mod:`.provider` holds the protocol, the result and error types, what the providers share
and Tavily (keyed REST API); :mod:`.duckduckgo` is the keyless HTML endpoint. The graph's
step that calls them is :mod:`agent.nodes.web_search`.
"""
