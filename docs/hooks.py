"""MkDocs hook: the CLI reference page, generated at build time from the Typer app
(``typer``'s own Markdown writer, as ``typer gpuscale.cli utils docs`` prints it) in
place of the stub ``docs/reference/cli.md`` the repository holds."""

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


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The CLI page's text, generated (the repository holds a stub, so links to it
    work there too)."""
    return cli_markdown() if page.file.src_uri == CLI_PAGE else markdown
