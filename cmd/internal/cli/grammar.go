package cli

import (
	"reflect"
	"strings"
	"unicode"
)

// Building kong's model of the whole CLI costs a fresh process about 2 ms
// of CPU (reflection over every command's flags, interpolation of every
// help text), most of a thin-client command's start: `runbox status`,
// `runbox ls` or `runbox run -w DIR -- CMD` use one command out of twenty.
// So parse builds a model that holds the globals and only the command the
// line names (oneCommand); kong then reads the line as it would with the
// whole model, since everything it checks after choosing a command (the
// command's flags, the globals, the command's subcommands, the help of
// that command) lies on the chosen path. Lines where the choice is not
// plain — top-level help, an unknown command, a flag before the command
// other than a well-formed global — get the whole model, so kong's own
// messages for them stay as they were. The top-level help alone (or no
// command at all) gets a model of the commands' names and help texts
// without their flags (commandList). TestOneCommandAgreesWithKong holds
// the two models to the same result and the same help for every command.

// grammarFor returns the grammar parse reads args with, and a pointer to
// its Globals.
func grammarFor(args []string) (grammar any, globals *Globals) {
	if name, ok := commandNamed(args); ok {
		if grammar, globals, ok := oneCommand(name); ok {
			return grammar, globals
		}
	}
	if topLevelOnly(args) {
		return commandList()
	}
	var c CLI
	return &c, &c.Globals
}

// topLevelOnly reports whether args are only well-formed globals and
// -h/--help: `runbox --help`, `runbox`, `runbox --json`. kong then prints
// the top-level help, which lists the commands by name and help text
// only, or fails with "expected one of" and their names; it never runs a
// command.
func topLevelOnly(args []string) bool {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--json" || a == "--progress-lines" || a == "-h" || a == "--help" || strings.HasPrefix(a, "--home="):
		case a == "--home" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			i++
		default:
			return false
		}
	}
	return true
}

// commandList returns a grammar with CLI's Globals and each of its
// commands, with its tags, as an empty struct: what the top-level help
// and the "expected one of" error read, without the commands' flags.
func commandList() (grammar any, globals *Globals) {
	t := reflect.TypeFor[CLI]()
	empty := reflect.TypeFor[struct{}]()
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		f.Index, f.Offset = nil, 0
		if _, isCmd := f.Tag.Lookup("cmd"); isCmd {
			f.Type = empty
		}
		fields = append(fields, f)
	}
	v := reflect.New(reflect.StructOf(fields))
	g, _ := t.FieldByName("Globals")
	return v.Interface(), v.Elem().FieldByIndex(g.Index).Addr().Interface().(*Globals)
}

// commandNamed returns the name of the top-level command args select,
// reading them as kong does at the top level: the globals (--json,
// --progress-lines, --home DIR, --home=DIR) may come first, and the first
// other word is the command. ok is false for a line that starts any other
// way (help, "--", another flag, a --home with no value or a value that
// looks like a flag, no command at all).
func commandNamed(args []string) (name string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--json" || a == "--progress-lines" || strings.HasPrefix(a, "--home="):
		case a == "--home":
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				return "", false
			}
			i++
		case a == "" || strings.HasPrefix(a, "-"):
			return "", false
		default:
			return a, true
		}
	}
	return "", false
}

// oneCommand returns a pointer to a new struct that holds CLI's Globals
// and its field for the top-level command called name, with their tags as
// in CLI, and a pointer to that struct's Globals; ok is false when CLI has
// no such command.
func oneCommand(name string) (grammar any, globals *Globals, ok bool) {
	t := reflect.TypeFor[CLI]()
	g, _ := t.FieldByName("Globals")
	for i := range t.NumField() {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); !isCmd || !commandCalled(f, name) {
			continue
		}
		g.Index, g.Offset = nil, 0
		f.Index, f.Offset = nil, 0
		v := reflect.New(reflect.StructOf([]reflect.StructField{g, f}))
		return v.Interface(), v.Elem().Field(0).Addr().Interface().(*Globals), true
	}
	return nil, nil, false
}

// commandCalled reports whether the command field f answers to name as
// kong names it: its name tag, or its field name dashed and lower-cased,
// or one of its aliases.
func commandCalled(f reflect.StructField, name string) bool {
	own := f.Tag.Get("name")
	if own == "" {
		own = kongName(f.Name)
	}
	if own == name {
		return true
	}
	aliases := f.Tag.Get("aliases")
	return aliases != "" && strings.Contains(","+aliases+",", ","+name+",")
}

// kongName is kong's default name for a field: its camel-case words
// joined by dashes, lower-cased (RunCmd -> run-cmd). CLI's command fields
// are single words; TestOneCommandCoversEveryCommand checks every
// command's name against kong's.
func kongName(field string) string {
	var b strings.Builder
	for i, r := range field {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
