"""Thread memory (checkpointer), per-user memory (store), and the token budget.

The submodules are imported directly (``agent.memory.backends``, ``.profile``,
``.budget``, ``.trimming``) so that the budget and trimming helpers stay importable
without loading the SQLite and Postgres drivers.
"""
