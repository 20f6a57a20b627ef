"""``python -m dpaudit``: the same command as the ``dpaudit`` script (:mod:`dpaudit.cli.main`)."""

import sys

from dpaudit.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
