"""What every layer may use: exit codes and the bad-input error (`exit_codes`), and the fast
`_replace` of the NamedTuples records and states are made of (`fastreplace`)."""
