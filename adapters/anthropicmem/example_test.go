package anthropicmem_test

import (
	"cmp"
	"context"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/anthropicmem"
)

// The SDK's tool runner with the memory_* tools and Claude's memory tool:
// the lines of the README, compiled.
func ExampleBetaMemoryTool() {
	agent := func(ctx context.Context, client anthropic.Client, session *memory.Session, params anthropic.BetaToolRunnerParams) (*anthropic.BetaMessage, error) {
		ctx, stop := context.WithCancelCause(ctx) // a host failure (disk, closed store) stops the runner
		defer stop(nil)
		tools := append(anthropicmem.BetaTools(session, stop), anthropicmem.BetaMemoryTool(session, stop))
		runner := client.Beta.Messages.NewToolRunner(tools, params)
		anthropicmem.UseMemoryTool(&runner.Params) // declare "memory" as the memory_20250818 tool
		msg, err := runner.RunToCompletion(ctx)
		if err != nil {
			return nil, cmp.Or(context.Cause(ctx), err) // the host's failure, or the API's error
		}
		return msg, nil
	}
	_ = agent
}

// A loop of the program's own on client.Beta.Messages.New: the lines of
// the README, compiled.
func ExampleBetaAnswer() {
	agent := func(ctx context.Context, client anthropic.Client, session *memory.Session, params anthropic.BetaMessageNewParams) (*anthropic.BetaMessage, error) {
		params.Tools = append(anthropicmem.BetaToolParams(session), anthropicmem.BetaMemoryToolParam())
		msg, err := client.Beta.Messages.New(ctx, params)
		for err == nil && msg.StopReason == anthropic.BetaStopReasonToolUse {
			answer, aerr := anthropicmem.BetaAnswer(ctx, session, *msg)
			if aerr != nil {
				return nil, aerr // a host failure: disk, closed store, cancelled context
			}
			params.Messages = append(params.Messages, msg.ToParam(), answer)
			msg, err = client.Beta.Messages.New(ctx, params)
		}
		return msg, err
	}
	_ = agent
}
