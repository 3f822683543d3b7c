"""What the Slack and Discord adapters share: the live reply, splitting, de-duplication,
feedback records, channel rules and the few fixed phrases a chat reply needs."""
