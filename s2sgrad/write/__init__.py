"""Writing generated code: codegen with black, and loading it as callables."""
