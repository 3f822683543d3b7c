"""The graph's nodes, which :mod:`agent.graph` wires together, one module per step of a turn.

A module is named after the node it holds, or the phase when it holds several: ``entry``
(input_guard, cache_lookup), ``router`` (router, context_enhancement), ``short_routes``
(direct_response, tools, memory), ``planning`` (planner), ``retrieve`` (retrieve,
collect), ``web_search``, ``judging`` (judge, gate), ``answering`` (generate, verify,
output_guard, fallback), ``refine`` (research), ``creative``, ``finishing``
(blocked_response, finalize, cache_store). What the nodes call lives in the packages beside
them: :mod:`agent.routing`, :mod:`agent.retrieval`, :mod:`agent.websearch`.
"""
