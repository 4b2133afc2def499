"""The Z3 encoding of the model: induction, bounded model checking, and the agreement check."""
