"""`python -m worldforge` and the `worldforge` script: the command line, with Ctrl-C handled
from the first import on (loading the CLI's libraries takes a moment)."""

import sys


def main() -> None:
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt:
        from .errors import INTERRUPTED

        sys.stderr.write(INTERRUPTED + "\n")
        sys.exit(130)
    from .plumbing import batch_gc

    batch_gc()
    cli_main()


if __name__ == "__main__":
    main()
