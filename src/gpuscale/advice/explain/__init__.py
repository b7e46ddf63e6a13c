"""Words: each term, finding and decision rendered from data (types only: nothing
here evaluates the model)."""
