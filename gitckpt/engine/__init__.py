"""Timelines and what is done with them: steps, drifts, notes, memory, handoff, restore,
revert, watch, compress and doctor."""
