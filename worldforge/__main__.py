"""`python -m worldforge` runs the command line, like the `worldforge` script."""

from .cli import main

main()
