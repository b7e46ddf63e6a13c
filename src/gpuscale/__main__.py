"""``python -m gpuscale`` and the ``gpuscale`` command: the command line, but for a lone
``--version``, answered before the commands are imported (their import costs ~0.3 s)."""

import sys

from gpuscale.version import VERSION_LINE


def main() -> None:
    """The console script: ``gpuscale --version`` printed here, anything else parsed by
    the command line (``gpuscale.cli.main``), where ``--version`` among other words is
    read as ever."""
    if sys.argv[1:] == ["--version"]:
        print(VERSION_LINE)
        return
    from gpuscale.cli import main as command_line  # lazy: every command, ~0.3 s

    command_line()


if __name__ == "__main__":
    main()
