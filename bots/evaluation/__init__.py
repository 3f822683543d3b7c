"""``teamrag eval``: a team's own question set run through the real runner, scored."""
