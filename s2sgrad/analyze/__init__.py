"""Analyses over the core form: activity (varied and useful values)."""
