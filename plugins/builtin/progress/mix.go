package progress

import "strconv"

// SyntheticMix returns n deterministic log lines, about 1% of them
// progress lines of the formats this plugin reads and the rest ordinary
// output of a training job (logger lines, warnings, tracebacks, paths,
// dates, downloads). It is the benchmark input shared by the native
// benchmark here and the wasm benchmark in plugins/.
func SyntheticMix(n int) []string {
	out := make([]string, 0, n)
	x := uint32(2463534242)
	next := func() uint32 { // xorshift32: same sequence everywhere
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return x
	}
	for i := 0; i < n; i++ {
		r := next()
		if r%100 == 0 {
			p := mixProgress[int(next()%uint32(len(mixProgress)))]
			out = append(out, mixFormat(p, i%1000, 1000))
			continue
		}
		t := mixOther[int(r>>8)%len(mixOther)]
		out = append(out, "2024-05-17 10:"+two(i/60%60)+":"+two(i%60)+",123 "+t+" "+strconv.Itoa(i))
	}
	return out
}

// mixFormat is fmt.Sprintf(p, a, b) for the mixProgress patterns (two %d
// verbs, %% for a percent sign), without linking fmt into the module.
func mixFormat(p string, a, b int) string {
	out := make([]byte, 0, len(p)+8)
	args := [2]int{a, b}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && i+1 < len(p) {
			switch p[i+1] {
			case 'd':
				out = strconv.AppendInt(out, int64(args[n]), 10)
				n++
				i++
				continue
			case '%':
				out = append(out, '%')
				i++
				continue
			}
		}
		out = append(out, p[i])
	}
	return string(out)
}

func two(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

var mixProgress = []string{
	"Epoch 3:  %d/%d |████▌     | [00:10<00:12, 4.50it/s, loss=0.123, v_num=0]",
	" 45%%|████▌     | %d/%d [00:10<00:12,  4.50it/s]",
	"##PROGRESS## {\"step\": %d, \"total\": %d, \"phase\": \"train\"}",
	"%d/%d [==============>...............] - ETA: 12s - loss: 0.1234 - accuracy: 0.9500",
	"Step %d/%d loss=0.52 lr=0.001",
	"{'loss': 0.4321, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.5} %d %d",
	"Iter %d: Train loss 2.345, Learning Rate 1.000e-05, It/sec 1.234, Tokens/sec 567.8, Trained Tokens %d, Peak mem 5.678 GB",
	"[%d]\ttrain-rmse:0.12345\teval-rmse:0.23456 %d",
	"Epoch(train)  [1][%d/%d]  lr: 1.0000e-02  eta: 0:10:00  time: 0.5  loss: 1.2",
	"Training:  45%%|████▌     | %d/%d [00:10<00:12, 4.50it/s]",
}

var mixOther = []string{
	"INFO root: loading dataset from /data/imagenet/train",
	"WARNING torch.distributed: Setting OMP_NUM_THREADS environment variable for each process to be 1",
	"INFO model: Total params: 124,439,808 trainable",
	"DEBUG urllib3.connectionpool: https://huggingface.co:443 \"HEAD /bert-base-uncased/resolve/main/config.json HTTP/1.1\" 200 0",
	"INFO data: found 50000 images in 1000 classes",
	"  File \"/usr/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl",
	"UserWarning: The given NumPy array is not writable, and PyTorch does not support non-writable tensors.",
	"INFO checkpoint: saved model to /runs/exp1/ckpt-000.pt",
	"INFO trainer: using device cuda:0 (NVIDIA A100-SXM4-80GB)",
	"Collecting numpy==1.26.4",
	"Requirement already satisfied: torch>=2.0 in /opt/conda/lib/python3.11/site-packages (2.3.0)",
	"INFO config: {\"model\": \"resnet50\", \"optimizer\": \"adamw\", \"weight_decay\": 0.05}",
	"INFO io: read 1.2.3/4 shard manifest from 10.0.0.12 on 2024/01/02",
	"[W socket.cpp:464] [c10d] The server socket has failed to listen on any local network address.",
	"INFO metrics: gpu_util=87 mem_used=40GiB temp=71C",
	"Downloading shards: done",
	"INFO trainer: will save a checkpoint every 500 steps",
	"INFO data: tokenizer pad_token set to eos_token",
	"INFO sched: warmup ratio 0.03, cosine decay",
	"DEBUG collate: padding to multiple of 8",
}
