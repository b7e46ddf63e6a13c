"""MkDocs hook: the CLI reference page, generated at build time from the Typer app
(``typer``'s own Markdown writer, as ``typer gpuscale.cli utils docs`` prints it)."""

from __future__ import annotations

from typing import Any

CLI_PAGE = "reference/cli.md"


def cli_markdown() -> str:
    """Every ``gpuscale`` command's usage, arguments and options, as Markdown."""
    import click
    import typer
    from typer.cli import get_docs_for_click

    from gpuscale.cli import app

    command = typer.main.get_command(app)
    ctx = click.Context(command, info_name="gpuscale", obj={})
    text = get_docs_for_click(obj=command, ctx=ctx, name="gpuscale", title="CLI reference")
    intro = (
        "Generated from the Typer app when the site is built: the same text as "
        "`gpuscale COMMAND --help`.\n\n"
    )
    title, _, rest = text.strip().partition("\n")
    return f"{title}\n\n{intro}{rest.strip()}\n"


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, CLI_PAGE, content=cli_markdown()))
    return files
