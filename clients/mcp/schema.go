package mcp

import (
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// inferIn is the input schema of T: infer's, with every nullable type
// union (["null", "number"], which Go's pointers give) made the plain
// type. An optional argument is optional by its absence (its default is
// in its description); clients that fill a form from the schema (the MCP
// Inspector) cannot send a number for a union and send a string instead.
func inferIn[T any]() *jsonschema.Schema {
	sc := infer[T]()
	noNull(sc)
	return sc
}

// noNull removes "null" from the type unions of sc and everything below it.
func noNull(sc *jsonschema.Schema) {
	if sc == nil {
		return
	}
	if i := slices.Index(sc.Types, "null"); i >= 0 {
		sc.Types = slices.Delete(slices.Clone(sc.Types), i, i+1)
		if len(sc.Types) == 1 {
			sc.Type, sc.Types = sc.Types[0], nil
		}
	}
	for _, p := range sc.Properties {
		noNull(p)
	}
	noNull(sc.Items)
	for _, s := range sc.AnyOf {
		noNull(s)
	}
	noNull(sc.AdditionalProperties)
}
