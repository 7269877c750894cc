import argparse
import math

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from datasets import load_dataset


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="bert-base-uncased")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--max-steps", type=int, default=-1,
                   help="stop after this many optimizer steps (-1: full epochs)")
    return p.parse_args()


def main():
    args = get_args()
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2).cuda()
    ds = load_dataset("imdb", split="train")
    ds = ds.map(lambda b: tok(b["text"], truncation=True, padding="max_length"), batched=True)
    ds.set_format("torch", columns=["input_ids", "attention_mask", "label"])
    dl = DataLoader(ds, batch_size=args.batch_size, shuffle=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for batch in dl:
            batch = {k: v.cuda() for k, v in batch.items()}
            out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["label"])
            out.loss.backward()
            opt.step()
            opt.zero_grad()
            step += 1
            if args.max_steps > 0 and step >= args.max_steps:
                return
        print(f"epoch {epoch} loss {out.loss.item():.4f} ppl {math.exp(out.loss.item()):.2f}")


if __name__ == "__main__":
    main()
