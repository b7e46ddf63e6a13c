"""``python -m gpuscale``: the command line."""

from gpuscale.cli import main

main()
