import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    x = torch.randn(256, 512, device="cuda")
    loss = model(x).logsumexp(-1).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
