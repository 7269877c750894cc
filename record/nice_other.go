//go:build !unix

package record

func lower(int) {}
