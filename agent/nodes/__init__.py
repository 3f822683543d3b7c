"""The graph's nodes, grouped by phase: entry, routing, retrieval, answering, finishing."""
