"""Entry points: `python -m lsrep.host --zygote SOCKET_FD [--sandbox] [--listen FD]` (the fork server, see `zygote`), or
`python -m lsrep.host READ_FD WRITE_FD` (one host on two pipes)."""

import sys

if sys.argv[1:2] == ["--zygote"]:
    from lsrep.host.zygote import serve

    rest = sys.argv[3:]
    listen = int(rest[rest.index("--listen") + 1]) if "--listen" in rest else None
    sys.exit(serve(int(sys.argv[2]), sandboxed="--sandbox" in rest, listen=listen))

from lsrep.host.server import main

sys.exit(main(sys.argv[1:]))
