package factguard

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/search"
)

// describe fills in what the guard compares of a line, from its Src.
func (l *Line) describe() {
	l.describeText()
	l.terms = termSet(l.norm)
	l.small = smallWords(l.norm, orderWords, quantityWords)
	l.nums = numbers(l.norm)
}

// describeText fills in First, norm and key, from Src: the texts of the
// line, which may share its Src's memory, and where Src holds them (at), so
// that a later version's line with the same Src takes them from its own
// Src without a search; the words describe adds do not.
func (l *Line) describeText() {
	first, rest, _ := strings.Cut(l.Src, "\n")
	l.First = stripMarker(strings.TrimSpace(first))
	text := l.First
	for rest != "" {
		var ln string
		ln, rest, _ = strings.Cut(rest, "\n")
		text += " " + stripMarker(strings.TrimSpace(ln))
	}
	if strings.Contains(text, "  ") || strings.ContainsFunc(text, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) {
		text = strings.Join(strings.Fields(text), " ")
	}
	l.norm = strings.ToLower(text)
	l.key = keyOf(l.First)
	for k, s := range [3]string{l.First, l.norm, l.key} {
		l.at[k] = int32(strings.Index(l.Src, s))
	}
}

// paragraph reports whether the top-level block whose source starts src is
// a paragraph (or a table, which this markdown reads as one), not a code
// block, HTML, a blockquote or a thematic break.
func paragraph(src string) bool {
	line, _, _ := strings.Cut(src, "\n")
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
func listKey(l Line) bool {
	words := strings.Fields(l.key)
	if slices.Contains(listWords, words[len(words)-1]) {
		return true
	}
	label, _ := factKey(l.First)
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
