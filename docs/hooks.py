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


API_PAGE = "reference/api.md"
# the calls whose keywords are a request's fields: their docstrings list them at import
# (``tables.requests.keyword_doc``), which the docstrings read from source lack
KEYWORD_CALLS = (
    "gpuscale.advice.api.advise_by_keywords",
    "gpuscale.analysis.analyze.analyze",
    "gpuscale.planning.api.plan",
)


def with_keywords(markdown: str) -> str:
    """The API page with each of ``KEYWORD_CALLS`` followed by its keywords, each with
    its meaning and unit (the generated part of its docstring)."""
    import importlib

    for path in KEYWORD_CALLS:
        module, _, name = path.rpartition(".")
        doc = getattr(importlib.import_module(module), name).__doc__ or ""
        keywords = doc[doc.find("Keywords (") :] if "Keywords (" in doc else ""
        markdown = markdown.replace(f"::: {path}\n", f"::: {path}\n\n{keywords}\n", 1)
    return markdown


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The CLI page's text, generated (the repository holds a stub, so links to it
    work there too); the API page with the keywords of the calls that take a request's."""
    if page.file.src_uri == API_PAGE:
        return with_keywords(markdown)
    return cli_markdown() if page.file.src_uri == CLI_PAGE else markdown
