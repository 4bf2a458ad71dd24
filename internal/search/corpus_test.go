package search_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/mdmemory/memory/internal/search"
)

// This file generates a seeded synthetic memory corpus in the spirit of
// ../shared/bench/gen_corpus.py, in memory: n episode entries spread over
// monthly files (every 20th entry in Chinese), fact files of "Key: value"
// bullets, and queries with a known answer. A planted entry's main event
// (person, object, place) occurs in no other entry's summary; English
// queries use the base form of the verb the entry holds in the past tense,
// so stemming matters. Same n and seed, same corpus.

var (
	people = strings.Fields(`Priya Marcus Elena Tomas Aisha Kenji Sofia Daniel Maya Oliver Fatima Lucas Hannah
Mateo Chloe Ibrahim Grace Noah Leila Samuel Yuki Victor Amara Felix Nora Diego Ingrid Rafael
Zara Hugo Mei Arjun Clara Emeka Rosa Anton Layla Ethan Freya Omar Julia Kofi Sara Pavel Lena
Tariq Alice Bruno Nadia Liam Eva Jonas Mina Gabriel Iris Hassan Paula Erik Ana Dmitri`)
	places = append(strings.Fields(`Lisbon Porto Berlin Munich Oslo Kyoto Osaka Seoul Denver Austin Boston Chicago Toronto
Montreal Dublin Edinburgh Madrid Valencia Prague Vienna Zurich Geneva Milan Naples Athens Istanbul
Nairobi Lagos Mumbai Pune Singapore Jakarta Sydney Melbourne Auckland Lima Bogota Seattle Portland
Vancouver`), "the library", "the office", "the cafe", "the park", "the studio",
		"the garage", "the clinic", "the community garden", "the train station")
	mods = strings.Fields(`quarterly annual kitchen garden garage travel family school team client marketing
backup database website insurance tax holiday birthday wedding moving recycling`)
	nouns = strings.Fields(`budget report schedule contract proposal server migration invoice roadmap playlist
recipe itinerary checklist presentation dashboard newsletter renovation inventory workshop survey`)
	verbs = [][2]string{{"review", "reviewed"}, {"plan", "planned"}, {"fix", "fixed"}, {"discuss", "discussed"},
		{"schedule", "scheduled"}, {"cancel", "cancelled"}, {"update", "updated"},
		{"finish", "finished"}, {"start", "started"}, {"test", "tested"}, {"present", "presented"},
		{"organize", "organized"}, {"revise", "revised"}, {"check", "checked"},
		{"draft", "drafted"}, {"buy", "bought"}, {"write", "wrote"}, {"sell", "sold"}}
	details = []string{
		"{p2} suggested looking at the {o2} before the end of the week.",
		"We spent about {n} minutes on it and {p2} took notes.",
		"The {o2} came up again because the {n2} was running late.",
		"I called {p2} from {pl2} to confirm the next steps.",
		"It rained in {pl} so we moved the conversation indoors.",
		"The cost came to roughly {n} dollars, a bit more than expected.",
		"{p} mentioned a new idea for the {o2} next month.",
		"Afterwards we grabbed coffee near {pl2} and talked about weekend plans.",
		"Nobody had the latest numbers, so I promised to send them by email.",
		"{p2} was worried that the deadline for the {n2} was too tight.",
		"We agreed to keep the scope small and revisit it after the holidays.",
		"I forgot the charger again and had to borrow one from {p2}.",
		"The meeting started late because the train from {pl2} was delayed.",
		"There was a long debate about whether the {o2} should wait.",
	}
	lessons = []string{
		"Write the agenda down before meeting {p2}.", "Check the {n2} numbers earlier.",
		"Leave buffer time when travelling to {pl2}.", "Ask for written confirmation.",
		"Small steps beat big rewrites.", "Book rooms at least a week ahead.",
		"Keep a copy of every {n2} in the shared folder.", "Say no to scope creep sooner.",
	}
	peopleZH  = strings.Fields("老王 小李 张伟 王芳 李娜 刘洋 陈静 杨帆 赵磊 黄敏 周杰 吴霞 老陈 小张 孙丽 马超 林峰 郭梅")
	placesZH  = strings.Fields("北京 上海 杭州 深圳 成都 南京 西湖边 公司会议室 咖啡馆 图书馆 机场 老家")
	modsZH    = strings.Fields("年度 季度 团队 客户 家庭 旅行 新 装修")
	nounsZH   = strings.Fields("预算 报告 合同 方案 服务器 数据库 茶叶 发布会 计划 培训 账单 清单")
	verbsZH   = strings.Fields("讨论了 检查了 修改了 安排了 确认了 整理了")
	detailsZH = []string{"{p2}建议我们下周再看一下{o2}。", "会议大约用了{n}分钟。", "之后我们在{pl2}喝了咖啡。",
		"{p2}提到{o2}的进度有点慢。", "费用大概是{n}元，比预想的高。", "大家同意先把范围缩小。"}
	lessonsZH = []string{"下次要提前准备{o2}。", "重要的事情要写下来。", "出发前先确认时间。"}
	factKeys  = []string{"Preferred editor", "Home city", "Favourite food", "Works at", "Timezone",
		"Allergy", "Coffee order", "Gym days", "Partner", "Sibling", "Manager", "Pet",
		"Bank", "Doctor", "Language goal", "Running shoe size", "Reading now", "Car"}
)

// corpus is a generated memory root: its files as the store would cut them
// into documents, and the planted queries.
type corpus struct {
	files   []corpusFile
	queries []corpusQuery
	entries int // episode entries
}

type corpusFile struct {
	name string
	docs []search.Doc
}

type corpusQuery struct {
	text, lang, style string
	file              string // the answer: file and Pos
	pos               int
}

// event is an entry's main event: who, what was done, to what, where.
type event struct{ person, verb, verbBase, object, place string }

type genEntry struct {
	title, summary, details, lesson string
	ev                              event
	zh                              bool
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// sample returns k distinct elements of xs in random order.
func sample(r *rand.Rand, xs []string, k int) []string {
	out := make([]string, k)
	for i, j := range r.Perm(len(xs))[:k] {
		out[i] = xs[j]
	}
	return out
}

func genOne(r *rand.Rand, i int) genEntry {
	zh := i%20 == 7
	ps, pls, ms, ns := people, places, mods, nouns
	sep := " "
	if zh {
		ps, pls, ms, ns, sep = peopleZH, placesZH, modsZH, nounsZH, ""
	}
	var ev event
	ev.person = pick(r, ps)
	if zh {
		ev.verb = pick(r, verbsZH)
	} else {
		v := pick(r, verbs)
		ev.verbBase, ev.verb = v[0], v[1]
	}
	ev.object = pick(r, ms) + sep + pick(r, ns)
	ev.place = pick(r, pls)
	rep := strings.NewReplacer("{p}", ev.person, "{pl}", ev.place, "{p2}", pick(r, ps), "{pl2}", pick(r, pls),
		"{o2}", pick(r, ms)+sep+pick(r, ns), "{n2}", pick(r, ns), "{n}", fmt.Sprint(5+r.IntN(396)))
	e := genEntry{ev: ev, zh: zh}
	if zh {
		e.title = "和" + ev.person + ev.verb + ev.object
		e.summary = ev.person + "和我在" + ev.place + ev.verb + ev.object + "。"
		e.details = rep.Replace(strings.Join(sample(r, detailsZH, 3), ""))
		e.lesson = rep.Replace(pick(r, lessonsZH))
		return e
	}
	e.title = strings.ToUpper(ev.verb[:1]) + ev.verb[1:] + " the " + ev.object + " with " + ev.person
	e.summary = ev.person + " and I " + ev.verb + " the " + ev.object + " at " + ev.place + "."
	e.details = rep.Replace(strings.Join(sample(r, details, 3+r.IntN(3)), " "))
	e.lesson = rep.Replace(pick(r, lessons))
	return e
}

func genQuery(r *rand.Rand, e genEntry) (style, text string) {
	ev := e.ev
	if e.zh {
		if r.IntN(2) == 0 {
			return "kw", ev.person + " " + ev.place + " " + ev.object
		}
		return "q", "我什么时候和" + ev.person + "在" + ev.place + ev.verb + ev.object + "？"
	}
	switch r.IntN(3) {
	case 0:
		return "kw", ev.person + " " + ev.object + " " + ev.place
	case 1:
		return "q", "When did I " + ev.verbBase + " the " + ev.object + " with " + ev.person + " in " + ev.place + "?"
	}
	return "what", "What did " + ev.person + " and I decide about the " + ev.object + " at " + ev.place + "?"
}

// genCorpus returns the corpus of n entries for seed.
func genCorpus(n int, seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 0x6d656d6f7279))
	nq := min(250, n/4)
	nmonths := min(120, (n+99)/100)
	months := make([]string, nmonths)
	for m := range months {
		months[m] = fmt.Sprintf("%d-%02d", 2016+m/12, m%12+1)
	}
	dates := make([]string, n)
	var zhIDs, enIDs []int
	for i := range n {
		dates[i] = fmt.Sprintf("%s-%02d", months[i*nmonths/n], 1+r.IntN(28))
		if i%20 == 7 {
			zhIDs = append(zhIDs, i)
		} else {
			enIDs = append(enIDs, i)
		}
	}
	nzh := min(nq/5, len(zhIDs))
	r.Shuffle(len(zhIDs), func(i, j int) { zhIDs[i], zhIDs[j] = zhIDs[j], zhIDs[i] })
	r.Shuffle(len(enIDs), func(i, j int) { enIDs[i], enIDs[j] = enIDs[j], enIDs[i] })
	targets := append(slices.Clone(zhIDs[:nzh]), enIDs[:nq-nzh]...)
	slices.Sort(targets)
	planted := make(map[int]bool, len(targets))
	for _, i := range targets {
		planted[i] = true
	}

	type key struct{ p, o, pl string }
	entries := make([]genEntry, n)
	used := make(map[key]bool)
	for i := range n {
		if !planted[i] {
			entries[i] = genOne(r, i)
			ev := entries[i].ev
			used[key{ev.person, ev.object, ev.place}] = true
		}
	}
	for _, i := range targets {
		for {
			e := genOne(r, i)
			k := key{e.ev.person, e.ev.object, e.ev.place}
			if !used[k] {
				used[k] = true
				entries[i] = e
				break
			}
		}
	}

	c := &corpus{entries: n}
	c.files = append(c.files, genFacts(r)...)
	byMonth := make(map[string][]int)
	for i := range n {
		byMonth[dates[i][:7]] = append(byMonth[dates[i][:7]], i)
	}
	type loc struct {
		file string
		pos  int
	}
	where := make(map[int]loc)
	for _, m := range months {
		rows := byMonth[m]
		slices.SortStableFunc(rows, func(a, b int) int { return strings.Compare(dates[a], dates[b]) })
		f := corpusFile{name: "episodes/" + m + ".md"}
		for k, i := range rows {
			e := entries[i]
			// The file opens with a title, a blank line and a summary;
			// each entry is a blank line, its heading and four bullets.
			line := 3 + 6*k + 2
			f.docs = append(f.docs, search.Doc{Pos: line, Date: dates[i],
				Text: e.title + "\n" + e.summary + "\n" + dates[i] + "\n" + e.details + "\n" + e.lesson})
			where[i] = loc{f.name, line}
		}
		c.files = append(c.files, f)
	}
	for _, i := range targets {
		lang := "en"
		if entries[i].zh {
			lang = "zh"
		}
		style, text := genQuery(r, entries[i])
		c.queries = append(c.queries, corpusQuery{text: text, lang: lang, style: style, file: where[i].file, pos: where[i].pos})
	}
	return c
}

// genFacts returns the two fact files, filled to just under 15,000 bytes.
func genFacts(r *rand.Rand) []corpusFile {
	user := corpusFile{name: "facts/user.md"}
	mem := corpusFile{name: "facts/memory.md"}
	size := 110
	for i := 1; ; i++ {
		var line string
		switch {
		case i%15 == 0:
			line = fmt.Sprintf("同事%d: %s负责%s%s", i, pick(r, peopleZH), pick(r, modsZH), pick(r, nounsZH))
		case i%2 == 1:
			line = fmt.Sprintf("%s %d: %s in %s, handles the %s %s", pick(r, factKeys), i, pick(r, people),
				pick(r, places), pick(r, mods), pick(r, nouns))
		default:
			line = fmt.Sprintf("Rule %d: Always %s the %s %s with %s before it goes out", i, pick(r, verbs)[0],
				pick(r, mods), pick(r, nouns), pick(r, people))
		}
		if size+len(line)+3 > 15000 {
			return []corpusFile{mem, user}
		}
		size += len(line) + 3
		f := &mem
		if i%3 == 0 {
			f = &user
		}
		// Title, blank line, summary, blank line, then one bullet a line.
		f.docs = append(f.docs, search.Doc{Pos: 5 + len(f.docs), Text: line})
	}
}

// index builds an index of c.
func (c *corpus) index() *search.Index {
	var x search.Index
	for _, f := range c.files {
		x.Set(f.name, f.docs)
	}
	return &x
}
