"""The `kafkarep` command line: one module per subcommand, wired in `main`."""
