"""The suite runs the Python of the model, compiled or not (`kafkarep compile`): tests seed bugs
by replacing a module's function, which compiled callers would not see. `KAFKAREP_COMPILED=1
pytest ...` runs a suite compiled (when built); tests/test_compiled.py runs both."""

import os

os.environ.setdefault("KAFKAREP_COMPILED", "0")
