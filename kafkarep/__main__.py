from kafkarep.cli.main import entry

entry()
