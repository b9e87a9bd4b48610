"""From a session record to what one rule's consumer receives and what becomes of it:
the stages (match, project, mask, chain), one attempt of delivery under its deadline,
what a record that cannot be finished becomes, and dead letters."""
