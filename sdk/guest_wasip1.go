//go:build wasip1

package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"unsafe"
)

// registered is the plugin this module exports; set once from an init func.
var registered *Plugin

// Register makes p the plugin this module exports through ABI v1. Call it
// exactly once, from an init function of package main; a second call panics
// (during _initialize, so the host refuses the module with the message).
func Register(p Plugin) {
	if registered != nil {
		panic("sdk: Register called twice")
	}
	registered = &p
}

// Memory ownership (see docs/PLUGINS.md): runbox_alloc hands the host a
// buffer that stays pinned here until the next export call consumes it; the
// answer of an export stays pinned in out until the next export call.
var (
	pinned = map[uint32][]byte{}
	out    []byte
	// spare is the last input buffer, handed out again by runbox_alloc
	// once its call has consumed it (inputs are copied when decoded).
	spare []byte
)

//go:wasmexport runbox_abi_version
func abiVersion() int32 { return ABIVersion }

//go:wasmexport runbox_alloc
func alloc(size int32) int32 {
	if size <= 0 {
		return 0
	}
	var buf []byte
	if int(size) <= cap(spare) {
		buf, spare = spare[:size], nil
	} else {
		buf = make([]byte, size)
	}
	ptr := uint32(uintptr(unsafe.Pointer(&buf[0])))
	pinned[ptr] = buf
	return int32(ptr)
}

//go:wasmexport runbox_describe
func describe() int64 {
	return answer(func() (any, error) {
		if registered == nil {
			return nil, errors.New("no plugin registered: call sdk.Register from an init func")
		}
		return registered.Normalize(), nil
	})
}

//go:wasmexport runbox_plan
func plan(ptr, size int32) int64 {
	return call(ptr, size, func(in []byte) (any, error) {
		if registered == nil || registered.Plan == nil {
			return nil, errors.New("plugin does not implement plan")
		}
		var pi PlanInput
		if err := json.Unmarshal(in, &pi); err != nil {
			return nil, fmt.Errorf("decode plan input: %w", err)
		}
		return registered.Plan(pi)
	})
}

//go:wasmexport runbox_classify
func classify(ptr, size int32) int64 {
	return call(ptr, size, func(in []byte) (any, error) {
		if registered == nil || registered.Classify == nil {
			return nil, errors.New("plugin does not implement classify")
		}
		var ci ClassifyInput
		if err := json.Unmarshal(in, &ci); err != nil {
			return nil, fmt.Errorf("decode classify input: %w", err)
		}
		return registered.Classify(ci)
	})
}

// runbox_parse is called for every batch of lines, so it skips
// encoding/json: ParseInput.DecodeJSON and ParseOutput.AppendJSON (see
// parsecodec.go) read and write the same JSON, faster.
//
//go:wasmexport runbox_parse
func parse(ptr, size int32) int64 {
	return call(ptr, size, func(in []byte) (any, error) {
		if registered == nil || registered.Parse == nil {
			return nil, errors.New("plugin does not implement parse")
		}
		var pi ParseInput
		if err := pi.DecodeJSON(string(in)); err != nil {
			return nil, fmt.Errorf("decode parse input: %w", err)
		}
		out, err := registered.Parse(pi)
		return out.Collapsed(), err
	})
}

// call takes the pinned input at ptr (releasing it) and answers with fn.
func call(ptr, size int32, fn func([]byte) (any, error)) int64 {
	buf, ok := pinned[uint32(ptr)]
	delete(pinned, uint32(ptr))
	defer func() {
		if ok && cap(buf) > cap(spare) {
			spare = buf[:0]
		}
	}()
	return answer(func() (any, error) {
		if !ok || int(size) > len(buf) || size < 0 {
			return nil, fmt.Errorf("input at %#x (%d bytes) was not allocated with runbox_alloc", ptr, size)
		}
		return fn(buf[:size])
	})
}

// answer runs fn, recovering a panic into an error, and pins the envelope.
func answer(fn func() (any, error)) (packed int64) {
	var env Envelope
	done := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				env = Envelope{Error: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
			}
		}()
		v, err := fn()
		if err != nil {
			env.Error = err.Error()
			return
		}
		if po, ok := v.(ParseOutput); ok {
			// The envelope as encoding/json writes it, in the buffer of the
			// previous answer (the host is done with it).
			b, err := po.AppendJSON(append(out[:0], `{"result":`...))
			if err == nil {
				out, done = append(b, '}'), true
				return
			} // NaN or ±Inf: let encoding/json word the error
		}
		b, err := json.Marshal(v)
		if err != nil {
			env.Error = fmt.Sprintf("encode result: %v", err)
			return
		}
		env.Result = b
	}()
	if !done {
		b, err := json.Marshal(env)
		if err != nil {
			b = []byte(`{"error":"encode envelope"}`)
		}
		out = b
	}
	return int64(uint64(uintptr(unsafe.Pointer(&out[0])))<<32 | uint64(len(out)))
}
