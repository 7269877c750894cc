//go:build wasip1

package sdk

import (
	"errors"
	"runtime"
	"strconv"
	"unsafe"
)

// The guest side of ABI v1. It encodes and decodes JSON with the
// reflection-free codec of jsondecode*.go and jsonencode*.go, not
// encoding/json: encoding/json (and with it reflect and fmt) made a
// module about 40% bigger, and wazero validates and decodes the whole
// module every time the host loads it, even from its compilation cache.

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
	return answer(func(dst []byte) ([]byte, error) {
		if registered == nil {
			return dst, errors.New("no plugin registered: call sdk.Register from an init func")
		}
		m := registered.Normalize()
		return appendManifest(dst, &m), nil
	})
}

//go:wasmexport runbox_plan
func plan(ptr, size int32) int64 {
	return call(ptr, size, func(in string, dst []byte) ([]byte, error) {
		if registered == nil || registered.Plan == nil {
			return dst, errors.New("plugin does not implement plan")
		}
		var pi PlanInput
		if err := unmarshalPlanInput(in, &pi); err != nil {
			return dst, errors.New("decode plan input: " + err.Error())
		}
		po, err := registered.Plan(pi)
		if err != nil {
			return dst, err
		}
		return appendPlanOutput(dst, &po), nil
	})
}

//go:wasmexport runbox_classify
func classify(ptr, size int32) int64 {
	return call(ptr, size, func(in string, dst []byte) ([]byte, error) {
		if registered == nil || registered.Classify == nil {
			return dst, errors.New("plugin does not implement classify")
		}
		var ci ClassifyInput
		if err := unmarshalClassifyInput(in, &ci); err != nil {
			return dst, errors.New("decode classify input: " + err.Error())
		}
		f, err := registered.Classify(ci)
		if err != nil {
			return dst, err
		}
		b, err := appendFailure(dst, f)
		if err != nil {
			return b, errors.New("encode result: " + err.Error())
		}
		return b, nil
	})
}

// runbox_parse is called for every batch of lines: the decoder returns
// lines without escapes as substrings of the input, and the updates are
// thinned (ParseOutput.Thinned: those a metric history needs, at most
// MaxUpdates) before ParseOutput.AppendJSON writes them.
//
//go:wasmexport runbox_parse
func parse(ptr, size int32) int64 {
	return call(ptr, size, func(in string, dst []byte) ([]byte, error) {
		if registered == nil || registered.Parse == nil {
			return dst, errors.New("plugin does not implement parse")
		}
		var pi ParseInput
		if err := unmarshalParseInput(in, &pi); err != nil {
			return dst, errors.New("decode parse input: " + err.Error())
		}
		po, err := registered.Parse(pi)
		if err != nil {
			return dst, err
		}
		po = po.Thinned()
		b, err := po.AppendJSON(dst)
		if err != nil {
			return b, errors.New("encode result: " + parseOutputError(&po).Error())
		}
		return b, nil
	})
}

// call takes the pinned input at ptr (releasing it) and answers with fn,
// which gets a copy of the input (so that strings decoded from it may share
// its memory) and appends its result to dst.
func call(ptr, size int32, fn func(in string, dst []byte) ([]byte, error)) int64 {
	buf, ok := pinned[uint32(ptr)]
	delete(pinned, uint32(ptr))
	defer func() {
		if ok && cap(buf) > cap(spare) {
			spare = buf[:0]
		}
	}()
	return answer(func(dst []byte) ([]byte, error) {
		if !ok || int(size) > len(buf) || size < 0 {
			return dst, errors.New("input at 0x" + strconv.FormatUint(uint64(uint32(ptr)), 16) + " (" +
				strconv.Itoa(int(size)) + " bytes) was not allocated with runbox_alloc")
		}
		return fn(string(buf[:size]), dst)
	})
}

// answer runs fn, which appends a result payload, recovers a panic into an
// error, and pins the envelope: {"result":payload} or {"error":message},
// byte for byte what encoding/json writes for an Envelope. The envelope is
// built in the buffer of the previous answer (the host is done with it).
func answer(fn func(dst []byte) ([]byte, error)) (packed int64) {
	const head = `{"result":`
	b, err := protect(fn, append(out[:0], head...))
	if err != nil {
		b = appendErrorEnvelope(b[:0], err.Error())
	} else {
		b = append(b, '}')
	}
	out = b
	return int64(uint64(uintptr(unsafe.Pointer(&out[0])))<<32 | uint64(len(out)))
}

// protect calls fn(dst), turning a panic into an error with the stack.
func protect(fn func([]byte) ([]byte, error), dst []byte) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = dst, errors.New("panic: "+panicText(r)+"\n"+string(stack()))
		}
	}()
	return fn(dst)
}

// panicText words a panic value as fmt's %v would for the usual kinds
// (errors, strings, Stringers, numbers, bools); fmt is not linked (see the
// top of this file), so others only get a placeholder.
func panicText(r any) (s string) {
	defer func() {
		if e := recover(); e != nil {
			s = "(panic in the Error or String method of the panic value)"
		}
	}()
	switch v := r.(type) {
	case error:
		return v.Error()
	case interface{ String() string }:
		return v.String()
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int8:
		return strconv.FormatInt(int64(v), 10)
	case int16:
		return strconv.FormatInt(int64(v), 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint:
		return strconv.FormatUint(uint64(v), 10)
	case uint8:
		return strconv.FormatUint(uint64(v), 10)
	case uint16:
		return strconv.FormatUint(uint64(v), 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case uintptr:
		return strconv.FormatUint(uint64(v), 10)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return "(a panic value of a type the SDK cannot print without fmt)"
}

// stack is runtime/debug.Stack without runtime/debug (which links fmt).
func stack() []byte {
	buf := make([]byte, 1024)
	for {
		n := runtime.Stack(buf, false)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
