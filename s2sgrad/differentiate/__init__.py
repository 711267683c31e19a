"""Building the adjoint program from the core form and the rule table."""
