"""s2sgrad's version: one fact, read by the package, the generated files' headers and the cache key."""

__version__ = "0.1.0"
