from argparse import ArgumentParser

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, _):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--fast-dev-run", type=int, default=0,
                        help="run N batches of train/val to catch bugs")
    args = parser.parse_args()
    data = TensorDataset(torch.randn(1024, 8), torch.randn(1024, 1))
    trainer = L.Trainer(max_epochs=args.epochs, fast_dev_run=args.fast_dev_run)
    trainer.fit(Model(), DataLoader(data, batch_size=64))
