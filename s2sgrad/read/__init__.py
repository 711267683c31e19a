"""Reading user code: source capture, libcst parse with metadata, and the fence of the supported subset."""
