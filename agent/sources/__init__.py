"""Sources: places a team's documents live (a website, a Git repository, a wiki), kept in
sync with the knowledge base.

Each kind is a small module behind one interface (:class:`base.SourceKind`): load
everything, list what changed since a checkpoint, list what still exists. The sync
engine (:mod:`sync`) feeds what a kind returns through the one ingestion path
(:class:`agent.retrieval.ingest.Ingestor`) and removes what no longer exists; the
scheduler (:mod:`scheduler`) runs each source at its interval. Sources and their sync
state live in the catalog's SQLite file (:mod:`store`), so they survive restarts.
"""
