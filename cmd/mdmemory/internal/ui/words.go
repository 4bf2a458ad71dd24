package ui

import (
	"errors"
	"strings"

	"github.com/mdmemory/memory"
)

// personWords says a refusal of the library in words for the person at
// the page, with what to do: the library's Hint speaks to a model, and
// names its tools. The library's own account of what was wrong follows,
// as the detail.
func personWords(err error) string {
	var me *memory.Error
	if !errors.As(err, &me) {
		return "Something went wrong on the server: " + err.Error()
	}
	var msg string
	switch {
	case errors.Is(err, memory.ErrBudgetExceeded):
		msg = "Not saved: this would make the memory larger than its budget allows. Make room first: shorten or remove lines that are no longer true or needed (here, or in another file that shares the budget), then save again."
	case errors.Is(err, memory.ErrDuplicateFact):
		msg = "Not saved: the memory already says this. Change the line that says it (named below) instead of adding another, or reword yours so that it says something new."
	case errors.Is(err, memory.ErrTemporaryFact):
		msg = "Not saved: this reads as an instruction for one task (\"this time\", \"for now\"), not a fact that stays true. Facts are kept for every later conversation: leave it out, or reword it as something that lasts."
	case errors.Is(err, memory.ErrSecret):
		msg = "Not saved: this holds a credential's value (its kind and line are named below). Memory goes into every prompt, sync and backup, so it never keeps one: write that the credential exists, what it is for and where it is kept (\"OpenAI API key: in 1Password\"), without the value, and save again."
	case errors.Is(err, memory.ErrConflict):
		msg = "Not saved: the file changed since this page showed it. Reload it and make your change again."
	case errors.Is(err, memory.ErrInvalidContent):
		msg = "Not saved: the text cannot be kept as it is. Fix what is said below and save again."
	case errors.Is(err, memory.ErrInvalidPath):
		msg = "This file cannot be changed here."
	case errors.Is(err, memory.ErrNotFound):
		msg = "The file, or the version asked for, does not exist (any more)."
	case errors.Is(err, memory.ErrPatchFailed):
		msg = "Not saved: the text to change was not found as the page showed it. Reload the page and try again."
	default:
		msg = "Not done."
	}
	if d := detail(me); d != "" {
		msg += " Detail: " + d
	}
	return msg
}

// detail is what the library says was wrong: the end of Error(), after
// the operation, the path and the sentinel.
func detail(me *memory.Error) string {
	s := me.Error()
	if _, after, ok := strings.Cut(s, me.Err.Error()+": "); ok {
		s = after
	}
	s = strings.ReplaceAll(s, "memory_patch", "a change of that line")
	return s
}
