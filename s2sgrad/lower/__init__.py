"""Lowering a parsed function to the core form: one primitive per statement, SSA names, origins."""
