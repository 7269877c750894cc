package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

func matchShape(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	c := cand{code: sdk.CodeShapeMismatch, conf: 0.9, details: map[string]string{"kind": "shape"}}
	switch {
	case strings.Contains(lc, "mat1 and mat2 shapes cannot be multiplied"):
		if k := strings.IndexByte(l.text, '('); k >= 0 {
			c.details["shapes"] = strings.TrimSuffix(l.text[k+1:], ")")
		}
		c.msg = "A matrix multiply got incompatible shapes (" + c.details["shapes"] + "): the layer's input features do not match the previous layer's output."
		if a, b, ok := strings.Cut(c.details["shapes"], " and "); ok {
			ax, bx := strings.Split(a, "x"), strings.Split(b, "x")
			if len(ax) == 2 && len(bx) == 2 {
				c.sugg = []string{"The input has " + ax[1] + " features but the Linear layer expects " + bx[0] + ": set in_features=" + ax[1] + " (or fix the flatten/reshape before it)."}
			}
		}
	case strings.Contains(lc, "size mismatch for"):
		if k := strings.Index(lc, "size mismatch for "); k >= 0 {
			c.details["parameter"] = strings.TrimSuffix(strings.Fields(l.text[k+18:] + " ")[0], ":")
		}
		c.details["kind"] = "checkpoint"
		c.msg = "The checkpoint does not fit the model: " + clip(l.text, 220)
		c.sugg = []string{"Build the model with the same configuration as the checkpoint (number of classes, vocab size, hidden size), or skip mismatched keys (ignore_mismatched_sizes=True in transformers; drop them from the state_dict and load with strict=False)."}
	case has(lc, "expected all tensors to be on the same device", "should be the same or input should be a mkldnn tensor", "input type (torch.cuda", "input type (torch.floattensor) and weight type (torch.cuda", "found at least two devices"):
		c.details["kind"] = "device"
		c.msg = "Tensors on different devices were combined: " + clip(l.text, 220)
		c.sugg = []string{"Move the model and every input to the same device (model.to(device); batch = batch.to(device)); check tensors created inside forward use x.device."}
	case has(lc, "expected scalar type", "found dtype", "must have the same dtype", "expected object of scalar type", "dtype mismatch", "to have the same dtype", "input type (") && !strings.Contains(lc, "device"):
		c.details["kind"] = "dtype"
		c.msg = "Tensors of different dtypes were combined: " + clip(l.text, 220)
		c.sugg = []string{"Cast to a common dtype (x.float(), labels.long() for CrossEntropyLoss), and keep numpy float64 data as float32."}
	case has(lc, "must match the size of tensor", "incompatible shapes", "shapes cannot be multiplied", "is invalid for input of size", "to match target batch_size",
		"expected input batch_size", "channels, but got", "dimensions must be equal", "sizes of tensors must match", "are incompatible", "is incompatible with the layer",
		"could not broadcast", "cannot be broadcast", "operands could not be broadcast", "not aligned", "cannot reshape array of size", "must match the size",
		"target size (", "shape mismatch", "shapes mismatch", "incompatible shapes for broadcasting", "expected input[", "to have 3 channels", "must match second to last dimension", "cannot reshape",
		"contracting dimensions to have the same shape", "but received shape", "but got shape", "got incompatible shapes", "shapes must be equal", "must have the same shape"):
		if strings.Contains(lc, "using a target size") {
			c.soft = true // nn.MSELoss UserWarning: broadcasting, not an error
		}
		c.msg = "Tensor shapes do not match: " + clip(l.text, 220)
		c.sugg = []string{
			"Print the shapes just before the failing op (x.shape) and compare with what the layer expects: input features, channels, sequence length or batch size.",
			"Common causes: a Flatten/view that assumes another image size, labels shaped (N,1) vs (N,), the last batch being smaller, or a model built for another number of classes.",
		}
	default:
		return false
	}
	sc.add(i, c)
	return true
}

func matchNaN(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	c := cand{code: sdk.CodeNaNLoss, conf: 0.9, details: map[string]string{}}
	switch {
	case has(lc, "loss is nan", "loss is inf", "nan loss", "loss became nan", "loss is not finite", "nan or inf loss", "loss has nan", "loss contains nan",
		"invalid loss, terminating training", "minimum loss scale reached", "loss scale already at minimum", "loss is infinite",
		"loss became infinite", "became infinite or nan", "loss is nan or inf"):
		c.msg = "The loss became NaN/Inf and training stopped: " + clip(l.text, 200)
	case strings.Contains(lc, "is not finite") && has(lc, "nan", "inf") && has(lc, "loss", "metric"):
		c.msg = "A monitored loss/metric became NaN/Inf: " + clip(l.text, 200)
	case has(lc, "diverged", "divergence detected") && has(lc, "loss", "training", "train "):
		c.msg = "Training diverged (the loss blew up) and was stopped: " + clip(l.text, 200)
	case has(lc, "probability tensor contains either `inf`, `nan`", "probability tensor contains either inf, nan"):
		c.details["where"] = "logits"
		c.msg = "The model produced NaN/Inf logits (often fp16 overflow) and sampling failed: " + clip(l.text, 200)
	case strings.Contains(lc, "but found invalid values") && sc.nanAfter(i):
		c.details["where"] = "distribution"
		c.msg = "A probability distribution got NaN parameters (the network's outputs became NaN): " + clip(l.text, 200)
	case has(lc, "returned nan values", "returned inf values"):
		c.details["where"] = "backward"
		c.msg = "Anomaly detection found NaN in the backward pass: " + clip(l.text, 200)
	case strings.Contains(lc, "floatingpointerror") && has(lc, "invalid value (nan) encountered", "invalid value (inf) encountered", "divide by zero encountered"):
		c.details["where"] = "debug_nans"
		c.msg = "A NaN/Inf appeared in the computation (caught by a NaN check such as jax_debug_nans or np.seterr): " + clip(l.text, 200)
	case strings.Contains(lc, "non-finite") && has(lc, "grad", "norm"):
		c.details["where"] = "gradients"
		c.msg = "The gradients became non-finite (NaN/Inf): " + clip(l.text, 200)
	case strings.Contains(lc, "error detected in") && strings.Contains(lc, "backward"):
		// autograd anomaly mode names the op whose backward produced NaN/Inf.
		c.details["where"] = "backward"
		c.conf = 0.7
		c.msg = "Anomaly detection stopped training in the backward pass (it fires on NaN/Inf gradients): " + clip(l.text, 200)
	case (sc.roles[i] == roleExc || excPrefix(lc)) && hasWord(lc, "nan") && has(lc, "stop", "loss", "output", "detected", "became", "encountered", "found"):
		// The program's own check: "ValueError: Network outputs is NAN! Stop Training".
		c.msg = "The program stopped because a value became NaN: " + clip(l.text, 200)
	case sc.roles[i] == roleText && lossIsNaN(lc):
		c.soft, c.conf = true, 0.55
		c.msg = "The logged loss is NaN/Inf: " + clip(l.text, 160)
	default:
		return false
	}
	c.sugg = []string{
		"Lower the learning rate (or add warmup) and clip gradients (torch.nn.utils.clip_grad_norm_(params, 1.0)).",
		"With fp16, use bf16 or a GradScaler; check for log(0), division by zero or sqrt of negatives in the loss (add an eps).",
		"Check the data for NaN/Inf and extreme values; torch.autograd.set_detect_anomaly(True) finds the first op that produced NaN.",
	}
	sc.add(i, c)
	return true
}

// lossIsNaN spots "loss: nan", "loss=nan", "'loss': nan", "loss nan".
func lossIsNaN(lc string) bool {
	k := strings.Index(lc, "loss")
	for k >= 0 {
		rest := strings.TrimLeft(lc[k+4:], "'\" :=")
		if strings.HasPrefix(rest, "nan") || strings.HasPrefix(rest, "inf") || strings.HasPrefix(rest, "tensor(nan") {
			return true
		}
		n := strings.Index(lc[k+4:], "loss")
		if n < 0 {
			break
		}
		k += 4 + n
	}
	return false
}

var gateShape = []string{"shape", "size", "dimension", "incompatible", "mismatch", "must match", "same device", "dtype", "scalar type", "channels", "broadcast", "not aligned", "reshape", "should be the same"}

var gateNaN = []string{"nan", "error detected in", "infinite", "divide by zero encountered", "non-finite", "loss scale", "invalid loss", "loss is inf", "returned inf", "loss: inf", "loss=inf", "loss = inf", "'loss': inf", "inf loss", "oss inf", "diverge", "invalid values", "not finite"}

// nanAfter reports a "nan" on the line after i ("found invalid values:\n
// tensor([[nan, nan, ...").
func (sc *scanner) nanAfter(i int) bool {
	_, w := sc.window(i, 3)
	return strings.Contains(w[len(sc.lines[i].lc):], "nan")
}

// hasWord reports w in s not inside a longer word (letters on either side).
func hasWord(s, w string) bool {
	for off := 0; ; {
		k := strings.Index(s[off:], w)
		if k < 0 {
			return false
		}
		k += off
		e := k + len(w)
		if (k == 0 || !isLetter(s[k-1])) && (e >= len(s) || !isLetter(s[e])) {
			return true
		}
		off = k + 1
	}
}

// excPrefix reports a line that starts like an exception: "ValueError:...".
func excPrefix(lc string) bool {
	k := strings.IndexByte(lc, ':')
	return k > 5 && strings.HasSuffix(lc[:k], "error") && !strings.ContainsAny(lc[:k], " []")
}
