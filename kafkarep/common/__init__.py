"""What every layer may use: exit codes and the bad-input error (`exit_codes`), the fast
`_replace` of the NamedTuples records and states are made of (`fastreplace`), and the compiled
hot path with the check that it was built from these sources (`compiled`)."""
