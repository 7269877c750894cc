import argparse


def main():
    parser = argparse.ArgumentParser(prog="pipeline")
    sub = parser.add_subparsers(dest="cmd", required=True)
    train = sub.add_parser("train", help="train a model")
    opts = train.add_argument_group("run control")
    opts.add_argument("--dry-run", action="store_true", help="build everything, train nothing")
    train.add_argument("--epochs", type=int, default=10)
    ev = sub.add_parser("eval")
    ev.add_argument("--checkpoint", required=True)
    args = parser.parse_args()
    print(args)


if __name__ == "__main__":
    main()
