"""``python -m gpuscale.cli``."""

from gpuscale.cli import main

main()
