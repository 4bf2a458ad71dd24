package memory

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/search"
)

// The fact guard. Facts are lasting truths loaded into every prompt, so a
// change of a fact file is refused, as a model error, when a line it adds
//
//   - is worded as temporary: "this time", "for now", "just today",
//     "temporarily", "for this task", "这次", "暂时", "今天先", "先不" and the
//     like (see temporaryPhrases): an instruction for one task is not a fact
//     ([ErrTemporaryFact]);
//   - says again what a line of the fact files says already, in any fact
//     file: the same text, or nearly: more than 70% of the two lines' words
//     in common (Jaccard similarity of their sets of search terms, so that
//     "reviews" and "reviewed" compare as memory_search matches them;
//     Chinese by its characters), every word of one in the other (a line
//     that swaps a word, "Father lives in Hangzhou" beside "Mother lives in
//     Hangzhou", states another fact), the same numbers in the same order,
//     and the same small words of order and quantity ("before", "all":
//     "prefers Chinese for all conversations" says more than "prefers
//     Chinese conversation"; see orderWords)
//     ([ErrDuplicateFact]);
//   - restates the key of a line of the same file ("- Language: English"
//     when a "- Language: …" line is there): a fact that changed replaces its
//     line instead of piling up beside it ([ErrDuplicateFact]). A key is a
//     list, and another line with it allowed, when the file holds it on two
//     or more lines already, or when it names what a person has many of
//     (colleagues, friends, children, lessons, …; see listKey).
//
// The error names the file and line of the line concerned, quotes it, and
// says what to do: patch that line instead, or leave the new one out.
//
// Only what a change adds is checked: the lines of the new content that
// were not in the file before, so that a memory_write that keeps a person's
// questionable line as it is, or condenses the file, is not held up by it,
// and a change that only removes or reorders lines always passes. The lines
// one change adds are not compared with each other: a list written at once
// is a list. A world topic is guarded as a fact file is, its lines
// compared with those of every topic, the other agents' included. The guard
// applies to every change of a fact file or topic, by the tools
// (memory_write, memory_patch, memory_append) and by [Store.Write],
// [Store.WriteIf], [Store.Patch] and [Store.Append] alike, and never to
// episodes, which are about one task by nature.
//
// A fact line is a top-level list item of the file's body, its nested and
// wrapped lines included, or one line of a top-level paragraph; headings,
// the title and summary, code blocks, HTML and blockquotes are not facts,
// nor is a line with no word in it ("---").

// A factLine is one fact of a fact file.
type factLine struct {
	line  int      // 1-based line in its file
	src   string   // its text as in the file, trimmed: what tells old lines from new
	first string   // its first line without the list marker: what is quoted, and keyed
	norm  string   // its text without list markers, lower-cased, spaces collapsed
	key   string   // the key of "Key: value", normalised; "" when it has none
	terms []string // the search terms of its text, sorted, each once
	small string   // its words of order and quantity (orderWords, quantityWords), sorted
	nums  string   // the numbers in its text, in order ("3 15" for "room 3 from March 15")
}

// vetFacts refuses a change of the fact file or topic t from old (nil for
// a new file) to data that adds a line that is temporary, repeats a line of
// the files it is compared with or restates a key of t; see the fact guard
// above. list lists t's folder (see commit).
func (s *Store) vetFacts(ctx context.Context, op string, t target, old, data []byte, list func() ([]Entry, error)) error {
	before := factLines(old)
	added, keptAt := diffFacts(before, factLines(data))
	if len(added) == 0 {
		return nil
	}
	describeAll(added)
	for _, a := range added {
		if phrase := temporary(a.norm); phrase != "" {
			return modelErr(op, t.path, ErrTemporaryFact,
				fmt.Sprintf("the new line %s is about this task only (%q marks it as temporary)", quoteLine(a.first), phrase),
				fmt.Sprintf("; nothing was written. Skip it: what holds for one task is not a fact (an episode may record it). If it is meant to last, state it without %q", phrase))
		}
	}
	others, err := s.otherFacts(ctx, op, t, list)
	if err != nil {
		return err
	}
	describeAll(before)
	kept := make([]factLine, len(keptAt))
	for i, k := range keptAt {
		kept[i] = before[k]
	}
	files := append([]factFile{{t.path, kept}}, others...)
	// The first line of each text, and the first kept line of each key with
	// how many lines of the file held it before the change.
	type at struct {
		file string
		line factLine
	}
	texts := map[string]at{}
	for _, f := range files {
		for _, b := range f.lines {
			if _, ok := texts[b.norm]; !ok {
				texts[b.norm] = at{f.path, b}
			}
		}
	}
	keys, held := map[string]factLine{}, map[string]int{}
	for _, b := range before {
		held[b.key]++
	}
	for _, b := range kept {
		if _, ok := keys[b.key]; !ok && b.key != "" {
			keys[b.key] = b
		}
	}
	pairs := 0
	for _, a := range added {
		if len(a.terms) == 0 {
			continue // no word: not a fact
		}
		if same, ok := texts[a.norm]; ok {
			return modelErr(op, t.path, ErrDuplicateFact,
				fmt.Sprintf("the new line %s is already in %s at line %d", quoteLine(a.first), same.file, same.line.line),
				"; nothing was written. Leave it out: there is nothing to add")
		}
		if b, ok := keys[a.key]; ok && held[a.key] == 1 && !listKey(a) {
			return modelErr(op, t.path, ErrDuplicateFact,
				fmt.Sprintf("the new line %s restates the key of %s line %d, %s", quoteLine(a.first), t.path, b.line, quoteLine(b.first)),
				"; nothing was written. If the fact changed, "+replaceInstead(op, true, t.path, b)+
					", so that the old fact does not stay beside the new one; if both hold, merge them into that line, or give the new line a more specific key. If it adds nothing, leave it out")
		}
		for _, f := range files {
			for _, b := range f.lines {
				if pairs++; pairs > maxFactPairs {
					break
				}
				if a.nums == b.nums && a.small == b.small && nested(a.terms, b.terms) && jaccard(a.terms, b.terms) > nearRepeat {
					return modelErr(op, t.path, ErrDuplicateFact,
						fmt.Sprintf("the new line %s nearly repeats %s line %d, %s", quoteLine(a.first), f.path, b.line, quoteLine(b.first)),
						"; nothing was written. If it corrects or adds to that line, "+replaceInstead(op, f.path == t.path, f.path, b)+"; otherwise leave it out")
				}
			}
		}
	}
	return nil
}

// nearRepeat is the share of words two lines have in common (Jaccard
// similarity of their sets of search terms) over which one repeats the
// other; maxFactPairs bounds the pairs of lines compared for it in one
// change, under the lock: a change of a person's oversized file may check
// fewer.
const (
	nearRepeat   = 0.7
	maxFactPairs = 1 << 18
)

// replaceInstead says how to change line b of the fact file p instead of
// adding a line: a patch, or, when the change is a whole-file write of p
// itself (same), the content written.
func replaceInstead(op string, same bool, p string, b factLine) string {
	if op == "write" && same {
		return "replace that line with the new one in the content instead of keeping both"
	}
	line, _, _ := strings.Cut(b.src, "\n")
	return fmt.Sprintf("memory_patch line %d of %s instead (oldText %s, newText the new line)", b.line, p, quoteLine(line))
}

// quoteLine quotes a line of a file for a message, made printable and cut
// when long.
func quoteLine(s string) string {
	return `"` + cut(printable(s), 200) + `"`
}

// A factFile is the fact lines of one file.
type factFile struct {
	path  string
	lines []factLine
}

// otherFacts returns the fact lines of the files other than t that list
// lists: the other fact files for a fact file, the other topics for a world
// topic. A file that cannot be listed or read (a person made it unreadable
// or not a file, the backend failed) has none: the comparison with the
// other files is a help, and this change is to t alone. Only a done context
// or a closed store fails it.
func (s *Store) otherFacts(ctx context.Context, op string, t target, list func() ([]Entry, error)) ([]factFile, error) {
	entries, err := list()
	if classify(err) == faultStopped {
		return nil, hostErr(op, t.path, err)
	}
	var out []factFile
	for _, e := range entries {
		if e.Name == t.path {
			continue
		}
		c, err := s.b.Read(ctx, e.Name, readLimit)
		switch {
		case err == nil:
			out = append(out, factFile{e.Name, describeAll(factLines(c.Data))})
		case classify(err) == faultStopped:
			return nil, hostErr(op, t.path, err)
		}
	}
	return out, nil
}

// diffFacts splits the fact lines of the new content, after, into those
// added and those kept from before: a line of the new content is kept when
// the old content had a line with the same text that no earlier line of
// the new content was matched with. kept holds the indices in before of
// the lines kept, whose line numbers are those of the file as the model
// sees it.
func diffFacts(before, after []factLine) (added []factLine, kept []int) {
	old := map[string][]int{}
	for i, b := range before {
		old[b.src] = append(old[b.src], i)
	}
	for _, a := range after {
		if same := old[a.src]; len(same) > 0 {
			kept = append(kept, same[0])
			old[a.src] = same[1:]
			continue
		}
		added = append(added, a)
	}
	return added, kept
}

// factLines returns the fact lines of a fact file's content, in order,
// with their line and src only: describe fills in the rest.
func factLines(src []byte) []factLine {
	if len(src) == 0 {
		return nil
	}
	d := markdown.Parse(src)
	body := d.Body().Start
	var out []factLine
	pos, line := 0, 1 // line is the number of the line at pos; add is called in source order
	add := func(start, end int) {
		line += bytes.Count(src[pos:start], []byte("\n"))
		pos = start
		out = append(out, factLine{line: line, src: strings.TrimSpace(string(src[start:end]))})
	}
	items, heads := d.Items, d.Headings
	for i, b := range d.Blocks {
		end := len(src)
		if i+1 < len(d.Blocks) {
			end = d.Blocks[i+1]
		}
		if b < body {
			continue
		}
		if len(items) > 0 && items[0].Start <= b {
			// A list: its items, each with its nested and wrapped lines.
			for len(items) > 0 && items[0].Start < end {
				add(items[0].Start, items[0].End)
				items = items[1:]
			}
			continue
		}
		for len(heads) > 0 && heads[0].Start < b {
			heads = heads[1:]
		}
		if len(heads) > 0 && heads[0].Start == b || !paragraph(src[b:end]) {
			continue
		}
		// A paragraph: each line is a fact, up to the blank line that
		// ends it.
		for at := b; at < end; {
			next := end
			if i := bytes.IndexByte(src[at:end], '\n'); i >= 0 {
				next = at + i + 1
			}
			if len(bytes.TrimSpace(src[at:next])) == 0 {
				break
			}
			add(at, next)
			at = next
		}
	}
	return out
}

// describe fills in what the guard compares of a line, from its src.
func (l *factLine) describe() {
	first, rest, _ := strings.Cut(l.src, "\n")
	l.first = stripMarker(strings.TrimSpace(first))
	text := l.first
	for rest != "" {
		var ln string
		ln, rest, _ = strings.Cut(rest, "\n")
		text += " " + stripMarker(strings.TrimSpace(ln))
	}
	if strings.Contains(text, "  ") || strings.ContainsFunc(text, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) {
		text = strings.Join(strings.Fields(text), " ")
	}
	l.norm = strings.ToLower(text)
	l.key = keyOf(l.first)
	l.terms = termSet(l.norm)
	l.small = smallWords(l.norm, orderWords, quantityWords)
	l.nums = numbers(l.norm)
}

func describeAll(lines []factLine) []factLine {
	for i := range lines {
		lines[i].describe()
	}
	return lines
}

// paragraph reports whether the top-level block whose source starts src is
// a paragraph (or a table, which this markdown reads as one), not a code
// block, HTML, a blockquote or a thematic break.
func paragraph(src []byte) bool {
	line, _, _ := strings.Cut(string(src), "\n")
	if strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
		return false // indented code
	}
	line = strings.TrimSpace(line)
	for _, p := range []string{"```", "~~~", "<", ">"} {
		if strings.HasPrefix(line, p) {
			return false
		}
	}
	return strings.ContainsFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

// stripMarker drops a list marker and a task box from the start of a line:
// "- ", "* ", "+ ", "1. ", "1) ", "[ ] ", "[x] ".
func stripMarker(line string) string {
	rest := line
	switch {
	case strings.HasPrefix(rest, "- "), strings.HasPrefix(rest, "* "), strings.HasPrefix(rest, "+ "):
		rest = rest[2:]
	default:
		i := 0
		for i < len(rest) && i < 9 && '0' <= rest[i] && rest[i] <= '9' {
			i++
		}
		if i == 0 || i+1 >= len(rest) || rest[i] != '.' && rest[i] != ')' || rest[i+1] != ' ' {
			return line
		}
		rest = rest[i+2:]
	}
	rest = strings.TrimSpace(rest)
	for _, box := range []string{"[ ] ", "[x] ", "[X] "} {
		rest = strings.TrimPrefix(rest, box)
	}
	return rest
}

// keyOf returns the normalised key of a fact line "Key: value" (the words
// before a colon that ends a word, at most three; "姓名：张三" too): its
// search terms, in order, joined by spaces, and its words of order (see
// orderWords), so that "Languages" and "language" are one key, and "Coffee
// before 10am" and "Coffee after 10am" two. A line with no key gives "".
func keyOf(first string) string {
	label, ok := factKey(first)
	if !ok {
		return ""
	}
	if terms := search.Tokenize(label); len(terms) > 0 {
		if order := smallWords(label, orderWords); order != "" {
			terms = append(terms, "("+order+")")
		}
		return strings.Join(terms, " ")
	}
	return strings.ToLower(label) // a key of stopwords alone ("Me:") is its own
}

// factKey returns the label of a fact line, as the summary names it: the
// words before a colon that ends a word, when there are one to three of
// them, with emphasis marks around them dropped.
func factKey(text string) (string, bool) {
	for i, r := range text {
		if r == '：' || r == ':' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t') {
			label := strings.Trim(strings.TrimSpace(text[:i]), "*_`")
			if label != "" && len(strings.Fields(label)) <= 3 {
				return label, true
			}
			return "", false
		}
	}
	return "", false
}

// listKey reports whether the key of l names what a person has many of,
// so that a fact file holds it on as many lines as there are: relations
// (colleague, friend, child, …), belongings and interests (pet, hobby,
// project, …) and the experience memory.md keeps (lesson, insight, tip,
// …). Its last word decides ("Former colleagues", "前同事").
func listKey(l factLine) bool {
	words := strings.Fields(l.key)
	if slices.Contains(listWords, words[len(words)-1]) {
		return true
	}
	label, _ := factKey(l.first)
	return slices.ContainsFunc(listWordsCJK, func(w string) bool { return strings.HasSuffix(label, w) })
}

// listWords are the search terms of the English nouns listKey knows
// ("colleagu" is the term of "colleague" and "colleagues"); the tests check
// each against search.Tokenize. listWordsCJK are Chinese nouns, matched as
// the end of the key.
var (
	listWords = []string{
		"colleagu", "coworker", "worker", "teammat", "friend", "child", "children", "kid", "son", "daughter",
		"sibl", "brother", "sister", "cousin", "relativ", "grandchild", "grandchildren", "contact", "client", "customer",
		"report", "pet", "dog", "cat", "hobbi", "interest", "project", "allergi", "dislik", "like", "habit",
		"preferenc", "lesson", "insight", "pattern", "tip", "note", "rule", "idea", "goal", "tool", "skill",
		"book", "event", "meet", "deadlin", "anniversari", "reminder", "favorit", "favourit",
	}
	listWordsCJK = []string{
		"同事", "朋友", "孩子", "儿子", "女儿", "兄弟", "姐妹", "亲戚", "联系人", "客户", "队友", "下属",
		"宠物", "爱好", "兴趣", "项目", "过敏", "习惯", "偏好", "喜好", "教训", "经验", "心得", "技巧",
		"提示", "备注", "笔记", "规则", "目标", "工具", "技能", "会议", "纪念日", "提醒",
	}
)

// numbers returns the runs of digits in text, in order, separated by
// spaces. Lines whose numbers differ are not repeats, however many words
// they share ("counter 0: 1" and "counter 1: 0", "Room 101: projector
// broken" and "Room 102: projector broken"): they state different values,
// and a changed value of one key is the key check's case.
func numbers(text string) string {
	var b strings.Builder
	in := false
	for _, r := range text {
		d := unicode.IsDigit(r)
		if d && !in && b.Len() > 0 {
			b.WriteByte(' ')
		}
		if d {
			b.WriteRune(r)
		}
		in = d
	}
	return b.String()
}

// smallWords returns the words of text that are in one of sets, as the
// set names them, sorted, each once, joined by spaces: "after all".
func smallWords(text string, sets ...map[string]string) string {
	var found []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		for _, set := range sets {
			if c, ok := set[w]; ok {
				found = append(found, c)
			}
		}
	}
	slices.Sort(found)
	return strings.Join(slices.Compact(found), " ")
}

// termSet returns the search terms of text, sorted, each once, with two
// changes: CJK text gives its characters rather than its bigrams, so that
// a word inserted (每周末, 每个周末) keeps the others, and "every", which the
// search keeps, is left to quantityWords.
func termSet(text string) []string {
	var terms []string
	for _, t := range search.Tokenize(text) {
		switch {
		case t == everyTerm:
		case strings.ContainsFunc(t, isCJK):
			for _, r := range t {
				terms = append(terms, string(r))
			}
		default:
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	return slices.Compact(terms)
}

// everyTerm is the search term of "every".
var everyTerm = search.Tokenize("every")[0]

// isCJK reports a character of the scripts the search cuts into bigrams.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// nested reports whether one of two sorted sets holds the other.
func nested(a, b []string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	for _, w := range a {
		if _, found := slices.BinarySearch(b, w); !found {
			return false
		}
	}
	return true
}

// Stopwords of the search that tell facts apart, though they do not count
// as words two lines share (as "the", "is" or "of" do not: "wife's
// birthday is in March" and "son's birthday is in March" are two facts).
// Two lines with different sets of them are never near repeats: words of
// order ("coffee before 10am" is not "coffee after 10am"), which also tell
// keys apart, and of quantity ("prefers Chinese for all conversations"
// says more than "prefers Chinese conversation"; "each", "every" and "all"
// count as one).
var (
	orderWords    = map[string]string{"before": "before", "after": "after", "during": "during"}
	quantityWords = map[string]string{"all": "all", "each": "all", "every": "all"}
)

// jaccard returns |a ∩ b| / |a ∪ b| for sorted sets; 0 when both are empty.
func jaccard(a, b []string) float64 {
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			common++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - common
	if union == 0 {
		return 0
	}
	return float64(common) / float64(union)
}

// A tempPhrase is wording that marks a line as temporary. English phrases
// match whole words only; Chinese ones anywhere. A match does not count
// when the text before it ends with one of notBefore ("from this time on"
// lasts) or the text after it starts with one of notAfter ("this time
// zone", "暂时的" is an adjective).
type tempPhrase struct {
	text                string
	notBefore, notAfter []string
}

// temporaryPhrases are the curated wordings of temporary instructions.
// Left out on purpose, because lasting facts use them: "right now" and "at
// the moment" ("is learning Go at the moment" describes a lasting state),
// "currently", "today" alone, "next time" and "下次" (a rule for the
// future), "temporary" and "临时" as adjectives ("temporary files").
var temporaryPhrases = []tempPhrase{
	{text: "this time", notBefore: []string{"from ", "since "}, notAfter: []string{" of ", " zone"}},
	{text: "this once"},
	{text: "this one time"},
	{text: "for now", notBefore: []string{"from "}, notAfter: []string{" on"}},
	{text: "for the time being"},
	{text: "for the moment"},
	{text: "just today"},
	{text: "just for today"},
	{text: "only today"},
	{text: "only for today"},
	{text: "today only"},
	{text: "for today only"},
	{text: "tonight"},
	{text: "this morning"},
	{text: "this afternoon"},
	{text: "this evening"},
	{text: "temporarily"},
	{text: "for this task"},
	{text: "in this task"},
	{text: "this task only"},
	{text: "this conversation"},
	{text: "this session"},
	{text: "this chat"},
	{text: "for this request"},
	{text: "until tomorrow"},

	{text: "这次"},
	{text: "這次"},
	{text: "这一次"},
	{text: "這一次"},
	{text: "这回", notAfter: []string{"事"}},
	{text: "這回", notAfter: []string{"事"}},
	{text: "本次"},
	{text: "此次"},
	{text: "暂时", notAfter: []string{"的", "性"}},
	{text: "暫時", notAfter: []string{"的", "性"}},
	{text: "暂且"},
	{text: "姑且"},
	{text: "今天先"},
	{text: "今天就先"},
	{text: "今天只"},
	{text: "只今天"},
	{text: "仅今天"},
	{text: "就今天"},
	{text: "今天不要", notBefore: []string{"从"}},
	{text: "今天别", notBefore: []string{"从"}},
	{text: "今晚"},
	{text: "目前先"},
	{text: "现在先"},
	{text: "眼下先"},
	// 先不 and 先别 ("not … for now"), but not where 先 ends a word:
	// 首先 (first), 原先 (formerly), 事先 (in advance), 优先 (priority), ….
	{text: "先不", notBefore: []string{"首", "原", "事", "预", "优", "领", "早", "争", "抢", "率", "祖", "起", "最", "当", "居", "占", "在"}},
	{text: "先别", notBefore: []string{"首", "原", "事", "预", "优", "领", "早", "争", "抢", "率", "祖", "起", "最", "当", "居", "占", "在"}},
	{text: "这个任务"},
	{text: "這個任務"},
	{text: "这项任务"},
	{text: "本任务"},
	{text: "此任务"},
}

// temporary returns the phrase that marks text (lower-cased, spaces
// collapsed) as temporary, or "".
func temporary(text string) string {
	for _, p := range temporaryPhrases {
		for from := 0; ; {
			i := strings.Index(text[from:], p.text)
			if i < 0 {
				break
			}
			i += from
			from = i + len(p.text)
			before, after := text[:i], text[from:]
			if p.text[0] < utf8.RuneSelf && (wordEnd(before, true) || wordEnd(after, false)) {
				continue // part of a longer word: "this timer", "nowhere"
			}
			if slices.ContainsFunc(p.notBefore, func(s string) bool { return strings.HasSuffix(before, s) }) ||
				slices.ContainsFunc(p.notAfter, func(s string) bool { return strings.HasPrefix(after, s) }) {
				continue
			}
			return p.text
		}
	}
	return ""
}

// wordEnd reports whether s, the text before (last) or after a match, has
// a letter or digit next to it.
func wordEnd(s string, last bool) bool {
	var r rune
	if last {
		r, _ = utf8.DecodeLastRuneInString(s)
	} else {
		r, _ = utf8.DecodeRuneInString(s)
	}
	return s != "" && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
