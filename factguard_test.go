package memory_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// jianjun is the fact file of the design, with its line numbers: line 5
// "- Name: …", 6 "- Language: …", 7 "- Wife's birthday: …".
const jianjun = "# User\n\n> Summary: Jianjun, prefers Chinese, wife's birthday Mar 15\n\n" +
	"- Name: 建军 (Jianjun)\n" +
	"- Language: prefers Chinese conversation\n" +
	"- Wife's birthday: March 15\n"

// TestTemporaryFacts: a fact line worded as temporary, in English or
// Chinese, is refused with ErrTemporaryFact, naming the wording; a lasting
// fact that merely looks like one (a time zone, "from now on", "every
// time", "首先不", "暂时的") is written. Each case is appended to an empty
// store, so that nothing else can refuse it.
func TestTemporaryFacts(t *testing.T) {
	cases := []struct {
		lang, entry string
		phrase      string // the wording that marks it; "" when it must pass
	}{
		// English, refused: the seed's two and their kin.
		{"en", "- Don't use PPT this time", "this time"},
		{"en", "- Skip the introduction for now", "for now"},
		{"en", "- Just today: reply in English", "just today"},
		{"en", "- Use the old slide template this once", "this once"},
		{"en", "- Temporarily prefers email over phone calls", "temporarily"},
		{"en", "- Today only: no meetings after 3pm", "today only"},
		{"en", "- For this task, answer in bullet points", "for this task"},
		{"en", "- Use metric units for the time being", "for the time being"},
		{"en", "- Keep replies short for the moment", "for the moment"},
		{"en", "- THIS TIME use the blue theme", "this time"},
		{"en", "- Wants brief answers, just for today.", "just for today"},
		{"en", "- Uses the staging server for now.", "for now"},
		{"en", "- Is busy tonight, no calls", "tonight"},
		{"en", "- Just this once, skip the summary", "this once"},
		{"en", "- In this conversation, call him Bob", "this conversation"},
		{"en", "- Language: English (only for today)", "only for today"},
		{"en", "- Prefers the window seat this\n  time", "this time"}, // wrapped across lines
		{"en", "Skip the charts this time", "this time"},              // not a bullet: a paragraph line
		{"en", "- Wants the report in PDF until tomorrow", "until tomorrow"},
		// English, lasting facts that must pass.
		{"en", "- Language: prefers Chinese for all conversations", ""},
		{"en", "- I prefer dark mode", ""},
		{"en", "- Call me Alex", ""},
		{"en", "- Time zone: Asia/Shanghai", ""},
		{"en", "- Works in this time zone: UTC+8", ""},
		{"en", "- Now works at ByteDance as a designer", ""},
		{"en", "- At the moment of birth weighed 3.2 kg", ""},
		{"en", "- Birthday: March 15", ""},
		{"en", "- Uses this timer app for pomodoros", ""},
		{"en", "- Keeps notes nowhere but Obsidian", ""},
		{"en", "- From now on, answer in Chinese", ""},
		{"en", "- From this time on, always cc her manager", ""},
		{"en", "- Lesson: next time, check the airline sites first", ""},
		{"en", "- Prefers the aisle seat every time", ""},
		{"en", "- Goes skiing at this time of year", ""},
		{"en", "- Temporary files go under /tmp/work", ""},
		{"en", "- Is learning Go at the moment", ""},
		{"en", "- Right now works remotely from Lisbon", ""},
		{"en", "- Currently lives in Berlin", ""},
		{"en", "- Sometimes works late on Fridays", ""},

		// Chinese, refused.
		{"zh", "- 这次不用PPT", "这次"},
		{"zh", "- 暂时用英文回复", "暂时"},
		{"zh", "- 今天先不开会", "今天先"},
		{"zh", "- 先不用介绍了", "先不"},
		{"zh", "- 本次任务用表格", "本次"},
		{"zh", "- 这一次跳过摘要", "这一次"},
		{"zh", "- 这回用蓝色主题", "这回"},
		{"zh", "- 目前先用旧模板", "目前先"},
		{"zh", "- 暂且按周报格式写", "暂且"},
		{"zh", "- 今天只用英文", "今天只"},
		{"zh", "- 此次出差住在上海", "此次"},
		{"zh", "- 这个任务里用简体字", "这个任务"},
		{"zh", "- 今晚不要打电话", "今晚"},
		{"zh", "- 现在先不管测试", "现在先"},
		{"zh", "- 老板说先别发邮件", "先别"},
		{"zh", "- 语言：暫時用英文", "暫時"},
		{"zh", "- 只今天不加班", "只今天"},
		{"zh", "- 這次不要PPT", "這次"},
		// Chinese, lasting facts that must pass.
		{"zh", "- 语言：所有对话都用中文", ""},
		{"zh", "- 时区：北京时间（UTC+8）", ""},
		{"zh", "- 现在在字节跳动工作", ""},
		{"zh", "- 生日：3月15日", ""},
		{"zh", "- 每次开会前都要议程", ""},
		{"zh", "- 首先不要假设用户懂技术", ""},
		{"zh", "- 原先不吃辣，现在喜欢吃辣", ""},
		{"zh", "- 网络故障往往是暂时的，重试即可", ""},
		{"zh", "- 暂时性的困难不影响判断", ""},
		{"zh", "- 从今天不要再叫他小王", ""},
		{"zh", "- 下次记得先订票", ""},
		{"zh", "- 不在乎这回事", ""},
		{"zh", "- 临时文件放在 /tmp", ""},
		{"zh", "- 事先不通知就取消会议会让他不高兴", ""},
		{"zh", "- 优先不用第三方库", ""},
		{"zh", "- 喜欢一次性把事情做完", ""},
		{"zh", "- 称呼：叫我阿杰", ""},
		{"zh", "- 每天早上跑步", ""},
	}
	counts := map[string]int{}
	for _, c := range cases {
		counts[fmt.Sprintf("%s %v", c.lang, c.phrase != "")]++
		t.Run(c.entry, func(t *testing.T) {
			s, dir := open(t, nil)
			err := s.Append(context.Background(), "facts/user.md", c.entry, "")
			if c.phrase == "" {
				require.NoError(t, err)
				require.Contains(t, readFile(t, dir, "facts/user.md"), strings.TrimPrefix(c.entry, "- "))
				return
			}
			require.ErrorIs(t, err, memory.ErrTemporaryFact)
			h := hint(t, err)
			require.Contains(t, h, fmt.Sprintf("%q marks it as temporary", c.phrase))
			require.Contains(t, h, "nothing was written. Skip it")
			_, err = os.Stat(filepath.Join(dir, "facts", "user.md"))
			require.ErrorIs(t, err, fs.ErrNotExist, "a refused append created the file")
		})
	}
	for _, k := range []string{"en true", "en false", "zh true", "zh false"} {
		require.GreaterOrEqual(t, counts[k], 15, "cases of %s", k)
	}
}

// TestRepeatedFacts: a fact line that says again what a line says, or
// restates its key, is refused with ErrDuplicateFact, pointing to that
// line (file and number), quoting it, and saying what to do; real new
// facts pass, among them further items of a list.
func TestRepeatedFacts(t *testing.T) {
	const memoryMD = "# Memory\n\n> Summary: know-how\n\n- Tavily returns stale prices for flights; cross-check airline sites\n"
	cases := []struct {
		name, user, entry string
		want              error    // nil: written
		says              []string // in the model's text
	}{
		{name: "identical line", user: jianjun, entry: "- Name: 建军 (Jianjun)", want: memory.ErrDuplicateFact,
			says: []string{`the new line "Name: 建军 (Jianjun)" is already in facts/user.md at line 5`, "Leave it out: there is nothing to add"}},
		{name: "identical but for spacing and case", user: jianjun, entry: "-   wife's BIRTHDAY:   March 15", want: memory.ErrDuplicateFact,
			says: []string{"already in facts/user.md at line 7"}},
		{name: "second Language", user: jianjun, entry: "- Language: English", want: memory.ErrDuplicateFact,
			says: []string{
				`the new line "Language: English" restates the key of facts/user.md line 6, "Language: prefers Chinese conversation"`,
				`If the fact changed, memory_patch line 6 of facts/user.md instead (oldText "- Language: prefers Chinese conversation", newText the new line)`,
			}},
		{name: "key in another case and number", user: jianjun, entry: "- languages: English and Chinese", want: memory.ErrDuplicateFact,
			says: []string{"restates the key of facts/user.md line 6"}},
		{name: "second Wife's birthday", user: jianjun, entry: "- Wife's birthday: March 16", want: memory.ErrDuplicateFact,
			says: []string{"facts/user.md line 7"}},
		{name: "Chinese key", user: "# User\n\n> Summary: x\n\n- 语言：中文\n", entry: "- 语言：英文", want: memory.ErrDuplicateFact,
			says: []string{`restates the key of facts/user.md line 5, "语言：中文"`}},
		{name: "near repeat without key", user: jianjun, entry: "- Wife's birthday is March 15", want: memory.ErrDuplicateFact,
			says: []string{`nearly repeats facts/user.md line 7, "Wife's birthday: March 15"`, "If it corrects or adds to that line, memory_patch line 7 of facts/user.md instead", "otherwise leave it out"}},
		{name: "near repeat of the other fact file", user: jianjun, entry: "- Tavily returns stale flight prices: cross-check the airline sites", want: memory.ErrDuplicateFact,
			says: []string{"nearly repeats facts/memory.md line 5", "memory_patch line 5 of facts/memory.md instead"}},
		{name: "identical to the other fact file", user: jianjun, entry: "- Tavily returns stale prices for flights; cross-check airline sites", want: memory.ErrDuplicateFact,
			says: []string{"already in facts/memory.md at line 5"}},
		{name: "near repeat in Chinese", user: "# User\n\n> Summary: x\n\n- 每周末喜欢去公园散步\n", entry: "- 每个周末喜欢去公园散步", want: memory.ErrDuplicateFact,
			says: []string{"nearly repeats facts/user.md line 5"}},

		{name: "a new fact", user: jianjun, entry: "- Colleague: Li Wei (design)"},
		{name: "a lasting preference that shares words", user: jianjun, entry: "- Prefers Chinese for all conversations, even at work with English speakers"},
		{name: "prefers Chinese for all conversations", user: jianjun, entry: "- Prefers Chinese for all conversations"},
		{name: "likes the green tea", user: jianjun + "- Likes green tea\n", entry: "- Likes the green tea", want: memory.ErrDuplicateFact,
			says: []string{`nearly repeats facts/user.md line 8, "Likes green tea"`}},
		{name: "another's birthday in the same month", user: jianjun + "- Wife's birthday is in March\n", entry: "- Son's birthday is in March"},
		{name: "for all, beside a plain line", user: "# User\n\n> Summary: x\n\n- Prefers Chinese conversation\n", entry: "- Prefers Chinese for all conversations"},
		{name: "another day, small words shared", user: jianjun + "- Review all PRs before the Monday standup\n", entry: "- Review all PRs before the Friday standup"},
		{name: "other things, small words shared", user: jianjun + "- Back up all databases before each deploy\n", entry: "- Back up all servers before each deploy"},
		{name: "another day, a long line", user: jianjun + "- Review all PRs before the Monday standup in room B\n", entry: "- Review all PRs before the Friday standup in room B"},
		{name: "another parent, a long line", user: jianjun + "- Mother lives in Hangzhou near West Lake, visits at Spring Festival\n", entry: "- Father lives in Hangzhou near West Lake, visits at Spring Festival"},
		{name: "another instrument", user: jianjun + "- Daughter Mia takes piano lessons at the music school downtown on weekends\n", entry: "- Daughter Mia takes violin lessons at the music school downtown on weekends"},
		{name: "another reviewer", user: jianjun + "- Alice reviews all backend PRs before each release on the staging cluster\n", entry: "- Bob reviews all backend PRs before each release on the staging cluster"},
		{name: "另一个孩子", user: jianjun + "- 儿子对花生过敏，随身带肾上腺素笔\n", entry: "- 女儿对花生过敏，随身带肾上腺素笔"},
		{name: "另一种乐器", user: jianjun + "- 女儿每周六上午去音乐学校学钢琴\n", entry: "- 女儿每周六上午去音乐学校学小提琴"},
		{name: "each for every", user: jianjun + "- Drinks coffee every morning\n", entry: "- Drinks coffee each morning", want: memory.ErrDuplicateFact,
			says: []string{`nearly repeats facts/user.md line 8, "Drinks coffee every morning"`}},
		{name: "all for every", user: jianjun + "- Reviews every pull request before the standup\n", entry: "- Reviews all pull requests before the standup", want: memory.ErrDuplicateFact,
			says: []string{"nearly repeats facts/user.md line 8"}},
		{name: "each for every, before", user: jianjun + "- Back up the databases before every deploy\n", entry: "- Back up the databases before each deploy", want: memory.ErrDuplicateFact,
			says: []string{"nearly repeats facts/user.md line 8"}},
		{name: "多一个字的重复", user: jianjun + "- 喜欢周末去西湖边散步\n", entry: "- 喜欢在周末去西湖边散步", want: memory.ErrDuplicateFact,
			says: []string{"nearly repeats facts/user.md line 8"}},
		{name: "any adds nothing", user: jianjun + "- Allergic to peanuts\n", entry: "- Allergic to any peanuts", want: memory.ErrDuplicateFact,
			says: []string{`nearly repeats facts/user.md line 8, "Allergic to peanuts"`}},
		{name: "a key restated with all", user: "# User\n\n> Summary: x\n\n- Languages: English\n", entry: "- All languages: English, Chinese, French", want: memory.ErrDuplicateFact,
			says: []string{`restates the key of facts/user.md line 5, "Languages: English"`}},
		{name: "before and after", user: jianjun + "- Coffee after 10am: decaf\n", entry: "- Coffee before 10am: espresso"},
		{name: "second colleague", user: jianjun + "- Colleague: Li Wei (design)\n", entry: "- Colleague: Zhang Min (backend)"},
		{name: "third colleague", user: jianjun + "- Colleague: Li Wei (design)\n- Colleague: Zhang Min (backend)\n", entry: "- Colleague: Wang Fang (QA)"},
		{name: "second lesson", user: jianjun + "- Lesson: book the ryokan early\n", entry: "- Lesson: check the visa rules a month ahead"},
		{name: "second 同事", user: "# User\n\n> Summary: x\n\n- 同事：李伟（设计）\n", entry: "- 同事：张敏（后端）"},
		{name: "a key the file keeps a list of", user: jianjun + "- Editor: vim for code\n- Editor: Typora for notes\n", entry: "- Editor: Excel for budgets"},
		{name: "same words, other numbers", user: jianjun + "- Room 101: projector broken\n", entry: "- Room 102: projector broken"},
		{name: "a key with a qualifier", user: jianjun, entry: "- Language at work: English"},
		{name: "no word in it", user: jianjun + "\n---\n", entry: "---"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := open(t, nil)
			writeFile(t, dir, "facts/user.md", c.user)
			writeFile(t, dir, "facts/memory.md", memoryMD)
			r := call(t, s, "memory_append", mustJSON(t, map[string]any{"path": "facts/user.md", "entry": c.entry, "summary": nil}))
			if c.want == nil {
				require.False(t, r.IsError, r.Text)
				return
			}
			require.True(t, r.IsError, r.Text)
			for _, w := range c.says {
				require.Contains(t, r.Text, w)
			}
			require.Contains(t, r.Text, "nothing was written")
			require.Equal(t, c.user, readFile(t, dir, "facts/user.md"), "a refused append changed the file")

			err := s.Append(context.Background(), "facts/user.md", c.entry, "")
			require.ErrorIs(t, err, c.want)
			var me *memory.Error
			require.ErrorAs(t, err, &me)
			require.Equal(t, "append", me.Op)
			require.Equal(t, "facts/user.md", me.Path)
			require.Equal(t, r.Text, me.Hint)
			require.NotContains(t, err.Error(), "nothing was written", "Error() leaves out the instructions for the model")
		})
	}
}

// TestFactGuardWriteAndPatch: memory_write and memory_patch are held to
// the lines they add: a rewrite that keeps a person's questionable line,
// condenses, reorders or removes lines goes through; one that adds a
// temporary line, or keeps a line and adds another with its key, does not.
func TestFactGuardWriteAndPatch(t *testing.T) {
	const old = jianjun + "- Use the blue theme for now\n"
	head := "# User\n\n> Summary: Jianjun, prefers Chinese, wife's birthday Mar 15\n\n"
	cases := []struct {
		name, tool, args string
		want             string // "" when written; else in the model's text
	}{
		{name: "write keeping an old temporary line", tool: "memory_write",
			args: `{"path":"facts/user.md","version":null,"content":` + mustJSON(t, old+"- Colleague: Li Wei (design)\n") + `}`},
		{name: "write changing a fact", tool: "memory_write",
			args: `{"path":"facts/user.md","version":null,"content":` + mustJSON(t, strings.Replace(old, "prefers Chinese conversation", "prefers English at work, Chinese at home", 1)) + `}`},
		{name: "write reordering and removing", tool: "memory_write",
			args: `{"path":"facts/user.md","version":null,"content":` + mustJSON(t, head+"- Wife's birthday: March 15\n- Name: 建军 (Jianjun)\n") + `}`},
		{name: "write condensing two lines into one", tool: "memory_write",
			args: `{"path":"facts/user.md","version":null,"content":` + mustJSON(t, head+"- Name: 建军 (Jianjun), prefers Chinese conversation\n- Wife's birthday: March 15\n") + `}`},
		{name: "write adding a temporary line", tool: "memory_write",
			args: `{"path":"facts/user.md","version":null,"content":` + mustJSON(t, old+"- Don't use PPT this time\n") + `}`,
			want: `the new line "Don't use PPT this time" is about this task only ("this time" marks it as temporary)`},
		{name: "write keeping a line and adding its key", tool: "memory_write",
			args: `{"path":"facts/user.md","version":null,"content":` + mustJSON(t, old+"- Language: English\n") + `}`,
			want: `restates the key of facts/user.md line 6, "Language: prefers Chinese conversation"; nothing was written. If the fact changed, replace that line with the new one in the content instead of keeping both`},
		{name: "write repeating a line", tool: "memory_write",
			args: `{"path":"facts/user.md","version":null,"content":` + mustJSON(t, old+"- Name: 建军 (Jianjun)\n") + `}`,
			want: `already in facts/user.md at line 5`},
		{name: "patch replacing a fact", tool: "memory_patch",
			args: `{"path":"facts/user.md","version":null,"patches":[{"oldText":"- Language: prefers Chinese conversation","newText":"- Language: prefers Chinese for all conversations"}]}`},
		{name: "patch removing the temporary line", tool: "memory_patch",
			args: `{"path":"facts/user.md","version":null,"patches":[{"oldText":"- Use the blue theme for now\n","newText":""}]}`},
		{name: "patch changing a temporary line's neighbour", tool: "memory_patch",
			args: `{"path":"facts/user.md","version":null,"patches":[{"oldText":"March 15","newText":"March 15 (loves ceramics)"}]}`},
		{name: "patch adding a temporary line", tool: "memory_patch",
			args: `{"path":"facts/user.md","version":null,"patches":[{"oldText":"- Name: 建军 (Jianjun)\n","newText":"- Name: 建军 (Jianjun)\n- 这次不用PPT\n"}]}`,
			want: `"这次" marks it as temporary`},
		{name: "patch adding a key elsewhere", tool: "memory_patch",
			args: `{"path":"facts/user.md","version":null,"patches":[{"oldText":"- Name: 建军 (Jianjun)\n","newText":"- Name: 建军 (Jianjun)\n- Language: English\n"}]}`,
			want: `restates the key of facts/user.md line 6`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := open(t, nil)
			writeFile(t, dir, "facts/user.md", old)
			do := conversation(t, s)
			require.False(t, do("memory_read", `{"path":"facts/user.md","line":null}`).IsError)
			r := do(c.tool, c.args)
			if c.want == "" {
				require.False(t, r.IsError, r.Text)
				return
			}
			require.True(t, r.IsError, r.Text)
			require.Contains(t, r.Text, c.want)
			require.Equal(t, old, readFile(t, dir, "facts/user.md"))
		})
	}
}

// TestFactGuardStoreMethods: the program-level changes are held to the
// same rules as the tools, with the sentinels for errors.Is; a list
// written at once is a list; episodes are not facts, and a month's entry
// about "this time" is what an episode is.
func TestFactGuardStoreMethods(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	require.NoError(t, s.Write(ctx, "facts/user.md", jianjun))

	require.ErrorIs(t, s.Write(ctx, "facts/user.md", jianjun+"- Skip the intro for now\n"), memory.ErrTemporaryFact)
	require.ErrorIs(t, s.WriteIf(ctx, "facts/user.md", jianjun+"- Language: English\n", memory.Version(jianjun)), memory.ErrDuplicateFact)
	_, err := s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "March 15\n", NewText: "March 15\n- Language: English\n"}})
	require.ErrorIs(t, err, memory.ErrDuplicateFact)
	require.Equal(t, jianjun, readFile(t, dir, "facts/user.md"))

	// Lines added by one change are not compared with each other.
	require.NoError(t, s.Append(ctx, "facts/memory.md", "- Editor: vim for code\n- Editor: Typora for notes", ""))
	require.NoError(t, s.Append(ctx, "facts/memory.md", "- Editor: Excel for budgets", ""))

	// Episodes are never checked.
	entry := "## PPT-free review\n- Summary: reviewed the plan without slides this time\n- Lesson: for now, plain text is enough"
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", entry, ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", entry, ""))
}

// readFails is a Backend whose Read of one file fails with err.
type readFails struct {
	memory.Backend
	name string
	err  error
}

func (b readFails) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	if name == b.name {
		return memory.Content{}, b.err
	}
	return b.Backend.Read(ctx, name, limit)
}

// TestFactGuardOtherFileUnreadable: the comparison with the other fact
// files does not stand in the way of a change when one of them cannot be
// read, but a closed store or a done context still fail it, as host errors.
func TestFactGuardOtherFileUnreadable(t *testing.T) {
	ctx := context.Background()
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	// The guard reads the other fact files that are there.
	_, err = put(ctx, d, "facts/memory.md", []byte("# Memory\n\n> Summary: tea\n\n- Tea: oolong is best brewed at 90 degrees\n"), "")
	require.NoError(t, err)

	s, err := memory.OpenBackend(readFails{d, "facts/memory.md", errors.New("the server said 503")}, nil)
	require.NoError(t, err)
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Likes green tea", ""))

	for _, cause := range []error{context.Canceled, memory.ErrClosed} {
		s, err := memory.OpenBackend(readFails{d, "facts/memory.md", cause}, nil)
		require.NoError(t, err)
		err = s.Append(ctx, "facts/user.md", "- Likes oolong", "")
		require.ErrorIs(t, err, cause)
		var me *memory.Error
		require.False(t, errors.As(err, &me), "a host failure is not a model error: %v", err)
	}
}

// TestReflectorMeetsTheFactGuard: in a reflection, a refused fact goes
// back to the model as an error it can act on, pointing to the line to
// patch; the model patches that line instead, and only the patch counts
// as a change.
func TestReflectorMeetsTheFactGuard(t *testing.T) {
	s, dir := open(t, nil)
	writeFile(t, dir, "facts/user.md", jianjun)
	var seen []string
	round := 0
	llm := memory.LLMFunc(func(ctx context.Context, req memory.Request) (memory.Response, error) {
		round++
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			seen = append(seen, last.Content)
		}
		switch round {
		case 1:
			return memory.Response{ToolCalls: []memory.ToolCall{
				{ID: "1", Name: "memory_append", Arguments: []byte(`{"path":"facts/user.md","entry":"- Don't use PPT this time","summary":null}`)},
			}}, nil
		case 2:
			return memory.Response{ToolCalls: []memory.ToolCall{
				{ID: "2", Name: "memory_append", Arguments: []byte(`{"path":"facts/user.md","entry":"- Language: English at work","summary":null}`)},
			}}, nil
		case 3:
			return memory.Response{ToolCalls: []memory.ToolCall{
				{ID: "3", Name: "memory_patch", Arguments: []byte(`{"path":"facts/user.md","version":null,"patches":[{"oldText":"- Language: prefers Chinese conversation","newText":"- Language: prefers Chinese conversation; English at work"}]}`)},
			}}, nil
		}
		return memory.Response{Content: "Recorded that he speaks English at work."}, nil
	})
	ref, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), memory.Task{Input: "make slides", Iterations: 3, Actions: 3})
	require.NoError(t, err)
	require.Len(t, seen, 3)
	require.True(t, strings.HasPrefix(seen[0], "Error: "), seen[0])
	require.Contains(t, seen[0], `"this time" marks it as temporary`)
	require.Contains(t, seen[1], `Error: the new line "Language: English at work" restates the key of facts/user.md line 6`)
	require.Contains(t, seen[1], `memory_patch line 6 of facts/user.md instead (oldText "- Language: prefers Chinese conversation"`)
	require.False(t, strings.HasPrefix(seen[2], "Error: "), seen[2])
	require.Equal(t, []string{"facts/user.md"}, ref.Changed)
	require.Equal(t, 3, ref.ToolCalls)
	require.Equal(t, strings.Replace(jianjun, "conversation\n", "conversation; English at work\n", 1), readFile(t, dir, "facts/user.md"))
}

// TestFactGuardSeesChanges: the guard keeps the versions of the fact files
// it parsed, and sees each change of them, by this store or by another
// writer, even back to a version it kept.
func TestFactGuardSeesChanges(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	const tavily = "# Memory\n\n> Summary: know-how\n\n- Tavily returns stale prices for flights; cross-check airline sites\n"
	const near = "- Tavily returns stale flight prices: cross-check the airline sites"
	writeFile(t, dir, "facts/user.md", jianjun)
	writeFile(t, dir, "facts/memory.md", tavily)
	require.ErrorIs(t, s.Append(ctx, "facts/user.md", near, ""), memory.ErrDuplicateFact)
	writeFile(t, dir, "facts/memory.md", "# Memory\n\n> Summary: know-how\n\n- Book the ryokan early\n")
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Likes green tea", ""))
	writeFile(t, dir, "facts/memory.md", tavily)
	require.ErrorIs(t, s.Append(ctx, "facts/user.md", near, ""), memory.ErrDuplicateFact)
	// A line of user.md a person removed no longer counts; one they added does.
	writeFile(t, dir, "facts/user.md", jianjun)
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Likes the green tea", ""))
	writeFile(t, dir, "facts/user.md", jianjun+"- Drinks coffee every morning\n")
	require.ErrorIs(t, s.Append(ctx, "facts/user.md", "- Drinks coffee each morning", ""), memory.ErrDuplicateFact)
	// A fact file removed is compared with no longer.
	require.NoError(t, os.Remove(filepath.Join(dir, "facts", "memory.md")))
	require.NoError(t, s.Append(ctx, "facts/user.md", near, ""))
}
