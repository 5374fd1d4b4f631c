"""The framework floor: a bare Typer app with ten subcommands and a few options each,
doing nothing. bench/run.py times aidp against it, alternating the two, so the ratio
says what aidp costs on top of starting Python and Typer in the same environment."""

import typer

app = typer.Typer(add_completion=False)


def _make(n: int):
    def command(
        name: str = typer.Option("x", "--name", "-n", help="A name."),
        count: int = typer.Option(1, "--count", help="A count."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        print(f'{{"command": {n}, "name": "{name}", "count": {count}}}' if as_json else name)

    command.__doc__ = f"Subcommand number {n}."
    return command


for number in range(10):
    app.command(f"cmd{number}")(_make(number))

if __name__ == "__main__":
    app()
