"""Outbound fetches: the one address rule (:mod:`.address_policy`) and the HTTP transport
that applies it to every request and connects to the address it checked (:mod:`.guarded`)."""
