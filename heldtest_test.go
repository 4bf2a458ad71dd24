package memory_test

import (
	"context"

	"github.com/mdmemory/memory"
)

// put writes data as the file at name through b's lock on it, as a
// backend's other client does: only if the file is at version match.
func put(ctx context.Context, b memory.Backend, name string, data []byte, match string) (string, error) {
	h, err := b.Lock(ctx, name)
	if err != nil {
		return "", err
	}
	defer h.Unlock()
	return h.Write(ctx, name, data, match)
}

// del removes the file at name through b's lock on it, only if it is at
// version match.
func del(ctx context.Context, b memory.Backend, name, match string) error {
	h, err := b.Lock(ctx, name)
	if err != nil {
		return err
	}
	defer h.Unlock()
	return h.Remove(ctx, name, match)
}

// hooked is a held lock of a test's backend whose Write goes through the
// test's hook, which makes it with h or fails it.
type hooked struct {
	memory.Held
	write func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error)
}

func (h hooked) Write(ctx context.Context, name string, data []byte, match string) (string, error) {
	return h.write(ctx, h.Held, name, data, match)
}

// hook returns the lock h, got with err, with its writes passed to write.
func hook(h memory.Held, err error, write func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error)) (memory.Held, error) {
	if err != nil {
		return nil, err
	}
	return hooked{Held: h, write: write}, nil
}

// Append passes a log's append to the lock hooked, which the tests' Dirs
// give: the hook sees the writes of memory files only.
func (h hooked) Append(ctx context.Context, name string, data []byte, sync bool) error {
	return h.Held.(interface {
		Append(ctx context.Context, name string, data []byte, sync bool) error
	}).Append(ctx, name, data, sync)
}
