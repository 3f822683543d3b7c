"""Web search providers, behind one small protocol so the provider can be swapped or left out.

:mod:`.provider` holds the protocol, the result and error types and what the providers
share; :mod:`.tavily` (a keyed REST API) and :mod:`.duckduckgo` (a keyless HTML endpoint)
are the two providers. The graph's step that calls them is :mod:`agent.nodes.web_search`.
"""
