"""``python -m app``: the same command line as the ``isrlab`` console script (``app.cli``)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
