import click
import pandas as pd


@click.command()
@click.argument("csv_path")
@click.option("--validate/--no-validate", default=True, help="check the schema first")
@click.option(
    "--smoke",
    is_flag=True,
    help="Process only the first 100 rows (smoke test).",
)
@click.option("--out", default="out.parquet")
def main(csv_path, validate, smoke, out):
    df = pd.read_csv(csv_path, nrows=100 if smoke else None)
    df.to_parquet(out)


if __name__ == "__main__":
    main()
