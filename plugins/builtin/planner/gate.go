package planner

import (
	"regexp"
	"strings"
)

// gatedRe is a regexp behind a cheap substring test: most statements
// contain none of the literals a pattern needs, and strings.Contains is far
// cheaper than running a pattern with many alternatives.
type gatedRe struct {
	re   *regexp.Regexp
	lits []string
}

func gate(re *regexp.Regexp, lits ...string) gatedRe { return gatedRe{re, lits} }

func (g gatedRe) open(s string) bool {
	for _, l := range g.lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

func (g gatedRe) MatchString(s string) bool { return g.open(s) && g.re.MatchString(s) }

func (g gatedRe) FindStringIndex(s string) []int {
	if !g.open(s) {
		return nil
	}
	return g.re.FindStringIndex(s)
}

func (g gatedRe) FindStringSubmatch(s string) []string {
	if !g.open(s) {
		return nil
	}
	return g.re.FindStringSubmatch(s)
}

func (g gatedRe) FindAllStringIndex(s string, n int) [][]int {
	if !g.open(s) {
		return nil
	}
	return g.re.FindAllStringIndex(s, n)
}

func (g gatedRe) FindAllStringSubmatch(s string, n int) [][]string {
	if !g.open(s) {
		return nil
	}
	return g.re.FindAllStringSubmatch(s, n)
}

func (g gatedRe) FindAllStringSubmatchIndex(s string, n int) [][]int {
	if !g.open(s) {
		return nil
	}
	return g.re.FindAllStringSubmatchIndex(s, n)
}
