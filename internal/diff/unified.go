package diff

import (
	"strconv"
	"strings"
)

// noNewline follows a line that ends its text without a newline.
const noNewline = "\n\\ No newline at end of file\n"

// Unified returns the difference between a and b as diff -u prints it: the
// lines "--- aName" and "+++ bName", then hunks of the changed lines with
// context lines of each side around them ("@@ -l,s +l,s @@"), two changes
// closer than 2×context lines sharing a hunk, and "\ No newline at end of
// file" after a last line without one. It returns "" when a and b are
// equal. A negative context counts as 0.
func Unified(aName, bName, a, b string, context int) string {
	if a == b {
		return ""
	}
	context = max(context, 0)
	la, lb := lines(a), lines(b)
	runs := compare(la, lb)
	// The changes: what lies between one run and the next.
	type change struct{ a0, a1, b0, b1 int }
	var changes []change
	ea, eb := 0, 0
	for _, r := range runs {
		if r.a > ea || r.b > eb {
			changes = append(changes, change{ea, r.a, eb, r.b})
		}
		ea, eb = r.a+r.n, r.b+r.n
	}
	var out strings.Builder
	out.WriteString("--- " + aName + "\n+++ " + bName + "\n")
	for i := 0; i < len(changes); {
		j := i + 1
		for j < len(changes) && changes[j].a0-changes[j-1].a1 <= 2*context {
			j++
		}
		first, last := changes[i], changes[j-1]
		a0 := max(first.a0-context, 0)
		a1 := min(last.a1+context, len(la))
		b0 := first.b0 - (first.a0 - a0)
		b1 := last.b1 + (a1 - last.a1)
		out.WriteString("@@ -" + lineRange(a0, a1-a0) + " +" + lineRange(b0, b1-b0) + " @@\n")
		at := a0
		for _, c := range changes[i:j] {
			writeLines(&out, ' ', la[at:c.a0])
			writeLines(&out, '-', la[c.a0:c.a1])
			writeLines(&out, '+', lb[c.b0:c.b1])
			at = c.a1
		}
		writeLines(&out, ' ', la[at:a1])
		i = j
	}
	return out.String()
}

// lineRange formats the lines [start, start+count) of a hunk's header as
// diff -u does: "l,s" numbered from 1, "l" for one line, and for none the
// number of the line before them, ",0".
func lineRange(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(count)
}

// writeLines writes each of ls behind the mark, noting a last line with
// no newline.
func writeLines(out *strings.Builder, mark byte, ls []string) {
	for _, l := range ls {
		out.WriteByte(mark)
		if strings.HasSuffix(l, "\n") {
			out.WriteString(l)
		} else {
			out.WriteString(l + noNewline)
		}
	}
}
