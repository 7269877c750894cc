import typer
from typing_extensions import Annotated

app = typer.Typer()


@app.command()
def sync(
    bucket: str,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="show the plan, change nothing")] = False,
    limit: int = typer.Option(0, "--limit"),
):
    print(bucket, dry_run, limit)


if __name__ == "__main__":
    app()
