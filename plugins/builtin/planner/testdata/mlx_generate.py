import argparse

import mlx.core as mx
from mlx_lm import generate, load


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mlx-community/Mistral-7B-Instruct-v0.3-4bit")
    parser.add_argument("--smoke-test", action="store_true", help="generate 4 tokens and exit")
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()
    model, tokenizer = load(args.model)
    print(mx.default_device())
    text = generate(model, tokenizer, prompt="hello", max_tokens=4 if args.smoke_test else args.max_tokens)
    print(text)


if __name__ == "__main__":
    main()
