package memory

// Resolve exposes the sandbox to the black-box tests: the canonical path a
// model-supplied path maps to, or the error that refuses it.
func Resolve(s *Store, p string) (string, error) {
	t, err := s.resolve("resolve", p)
	return t.path, err
}
