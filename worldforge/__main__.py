"""`python -m worldforge` and the `worldforge` script: the command line, with Ctrl-C handled
from the first import on (loading the CLI's libraries takes a moment)."""

import sys


def main() -> None:
    try:
        try:
            from .cli import main as cli_main
            from .plumbing import batch_gc

            batch_gc()
        except KeyboardInterrupt:
            from .errors import INTERRUPTED

            sys.stderr.write(INTERRUPTED + "\n")
            sys.exit(130)
        cli_main()
    except SystemExit as exc:
        if exc.code == 130:  # the interrupt was handled: exit 130, not killed by SIGINT on the way out
            from .plumbing import forget_handled_interrupt

            forget_handled_interrupt()
        raise


if __name__ == "__main__":
    main()
