"""Entry point of the adapter host process: `python -m lsrep.host READ_FD WRITE_FD`."""

import sys

from lsrep.host.server import main

sys.exit(main(sys.argv[1:]))
