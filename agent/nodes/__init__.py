"""The graph's nodes, grouped by phase: entry, routing, planning, retrieval, web search,
answering, finishing."""
